"""``graphrag mcp``: a project served over the Model Context Protocol (SDK ``mcp`` 2.x, whose
``MCPServer`` was 1.x's FastMCP), on stdio or streamable HTTP (docs/mcp.md).

Every tool reads; none changes the index or the graph (a query may record the model's replies
in the LLM cache, as the CLI's does, unless ``--cache replay``). A request the project cannot
answer (an unknown method, an empty or overlong question, a missing index, a reply never
recorded in replay) comes back as a tool error that names it; the server keeps running.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Awaitable, Callable
from functools import wraps
from pathlib import Path
from typing import Any

from graphrag.index.store import IndexLoadError
from graphrag.llm.cache import LLMError
from graphrag.query.registry import ALL_METHODS, UnknownMethodError
from graphrag.settings import SettingsError
from graphrag.stores.cypher_guard import CypherRefused
from graphrag.stores.graph_db import GraphDatabaseError, GraphQueryError
from graphrag.text.embeddings import EmbeddingError
from workbench.serve.project_view import ProjectView, RequestError
from workbench.session import Workbench

# what a request can meet that is the user's to fix: its message goes back as the error
REQUEST_ERRORS = (
    RequestError,
    UnknownMethodError,
    IndexLoadError,
    LLMError,
    EmbeddingError,
    SettingsError,
    CypherRefused,
    GraphQueryError,
    GraphDatabaseError,
)
TRANSPORTS = {"stdio": "stdio", "http": "streamable-http"}


def build_server(view: ProjectView) -> Any:
    """Return the MCP server (an ``MCPServer``) of ``view``'s project: its tools and resources."""
    # The SDK is imported here, not with the CLI: its protocol models, starlette and uvicorn
    # cost every other command about a fifth more start-up (tests/test_layout.py lists it).
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError, ToolError
    from mcp.types import ToolAnnotations

    read_only = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)

    def tool_errors(fn: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
        """``fn`` with the user's errors raised as ToolError (their message reaches the client;
        anything else is the SDK's "Error executing tool" and a traceback in the server's log)."""

        @wraps(fn)
        async def run(*args: Any, **kwargs: Any) -> Any:
            try:
                return await fn(*args, **kwargs)
            except REQUEST_ERRORS as err:
                raise ToolError(str(err)) from err

        return run

    def resource_errors(fn: Callable[..., str]) -> Callable[..., str]:
        """``fn`` with the user's errors raised as the resource errors the client is shown."""

        @wraps(fn)
        def read(*args: Any, **kwargs: Any) -> str:
            try:
                return fn(*args, **kwargs)
            except RequestError as err:
                raise ResourceNotFoundError(str(err)) from err
            except REQUEST_ERRORS as err:
                raise ResourceError(str(err)) from err

        return read

    methods = ", ".join(ALL_METHODS)
    server = MCPServer(
        "graphrag",
        instructions="A GraphRAG research workbench serving one indexed project: ask with "
        "`query` (an answer with its contexts and sources), see what a method would read with "
        "`retrieve`, walk the knowledge graph with `entity`, `neighbors` and read-only "
        f"`cypher`, check the index with `index_status`. Methods: {methods}.",
        log_level="WARNING",
    )

    @server.tool(annotations=read_only)
    @tool_errors
    async def query(question: str, method: str = "local") -> dict[str, Any]:
        """Answer a question from the indexed documents with one retrieval method (naive,
        local, global, ppr, ... as `graphrag query --method`); returns the answer, the
        contexts the model read (each with its id: text_unit:…, report:…, entity:…), the
        sources it cited and the LLM usage."""
        return await view.query(method, question)

    @server.tool(annotations=read_only)
    @tool_errors
    async def retrieve(question: str, method: str = "naive") -> dict[str, Any]:
        """The contexts a retrieval method would give the model for a question, with their ids
        and the ranked text units, without writing an answer."""
        return await view.retrieve(method, question)

    @server.tool(annotations=read_only)
    @tool_errors
    async def entity(name: str) -> dict[str, Any]:
        """One entity of the knowledge graph by name (or id): its type, description, degree,
        the text units and documents it was extracted from, its communities."""
        return view.entity(name)

    @server.tool(annotations=read_only)
    @tool_errors
    async def neighbors(name: str, hops: int = 1) -> dict[str, Any]:
        """The entities within `hops` relationships of an entity (1 to 3), each with its
        distance, and the relationships among them."""  # 3: project_view.MAX_HOPS
        return view.neighbors(name, hops)

    @server.tool(annotations=read_only)
    @tool_errors
    async def cypher(query: str) -> dict[str, Any]:
        """Run one read-only Cypher query on the graph database (schema: the resource
        graphrag://schema) through the guard the `cypher` method uses: no writes or procedure
        calls, paths of at most 3 hops, no cartesian products, a LIMIT; returns the rows."""
        return view.cypher(query)

    @server.tool(annotations=read_only)
    @tool_errors
    async def index_status() -> dict[str, Any]:
        """The index's manifest: documents, text units, entities, relationships, communities,
        the methods and their settings, and what is cached."""
        return view.status()

    @server.resource(
        "graphrag://schema",
        name="graph schema",
        description="Entity types and counts, relationships by the types of their ends, the "
        "tables' columns.",
        mime_type="application/json",
    )
    @resource_errors
    def schema() -> str:
        return json.dumps(view.schema(), indent=1)

    @server.resource(
        "graphrag://reports",
        name="community reports",
        description="Every community report: community, level, title, rating, size, and its "
        "resource URI.",
        mime_type="application/json",
    )
    @resource_errors
    def reports() -> str:
        listed = [{**r, "uri": f"graphrag://reports/{r['community']}"} for r in view.report_list()]
        return json.dumps(listed, indent=1)

    @server.resource(
        "graphrag://reports/{community}",
        name="community report",
        description="One community's report (markdown), by its community number.",
        mime_type="text/markdown",
    )
    @resource_errors
    def report(community: str) -> str:
        if not community.isdigit():
            raise RequestError(f"community: {community!r} is not a community number")
        return view.report(int(community))

    return server


def serve(
    bench: Workbench,
    index: str | Path | None = None,
    transport: str = "stdio",
    host: str = "127.0.0.1",
    port: int = 8000,
) -> None:
    """Serve ``bench``'s project (its index ``index``, default the project's) until the client
    closes stdio or the process is stopped; HTTP listens on ``host``:``port`` at ``/mcp``."""
    server = build_server(ProjectView(bench, index))
    where = "stdio" if transport == "stdio" else f"http://{host}:{port}/mcp"
    served = index or bench.project_path("output")
    # standard error: stdout is the protocol's wire on stdio
    print(f"graphrag mcp: serving {served} on {where}", file=sys.stderr, flush=True)
    if TRANSPORTS[transport] == "stdio":
        server.run("stdio")
    else:
        server.run("streamable-http", host=host, port=port)
