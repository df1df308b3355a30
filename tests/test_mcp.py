"""``graphrag mcp``: the real server, started as a user starts it (``python -m graphrag …
mcp``), spoken to with the MCP SDK's own client over stdio and over streamable HTTP, on the
demo index replaying the committed cache (no model runs)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import RECORDED_CACHE
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError

from graphrag import schemas as S
from graphrag.settings import REPO_ROOT
from workbench.cli import main
from workbench.serve.project_view import MAX_QUESTION_CHARS

QUESTION = (
    "In what year was the Kestrel Bay Marine Institute founded, and which two bodies founded it?"
)
ENTITY = "Kestrel Bay Marine Institute"
TOOLS = {"query", "retrieve", "entity", "neighbors", "cypher", "index_status"}
# the server's environment: this checkout's package, no model hub, no settings from the shell
ENV = {
    **{k: v for k, v in os.environ.items() if not k.startswith("GRAPHRAG_")},
    "PYTHONPATH": str(REPO_ROOT),
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
}


def toml_path(path: Path) -> str:
    return json.dumps(str(path))  # a TOML basic string


@pytest.fixture(scope="module")
def project(demo_index: Any, replay_settings: Any, tmp_path_factory: Any) -> Path:
    """A project folder whose index is the demo's and whose settings replay the committed
    cache (the replay fixtures' settings), sharing the tests' vector cache."""
    root = tmp_path_factory.mktemp("mcp_project")
    (root / "graphrag.toml").write_text(
        f"[project]\noutput = {toml_path(demo_index.path)}\n"
        '[llm]\nbase_url = ""\nmax_retries = 0\n'
        f'[cache]\nmode = "replay"\npath = {toml_path(RECORDED_CACHE)}\n'
        f"[embeddings]\ncache_path = {toml_path(replay_settings.embeddings.cache_path)}\n"
        "[query]\nentity_resolution = false\n",
        encoding="utf-8",
    )
    return root


def graphrag_command(project: Path, *words: str) -> list[str]:
    """``python -m graphrag`` in ``project``, replaying, then ``words``."""
    return [sys.executable, "-m", "graphrag", "--root", str(project), "--cache", "replay", *words]


@pytest.fixture(scope="module")
def cli_answer(project: Path) -> str:
    """What ``graphrag --cache replay query --method naive`` answers the demo question."""
    capture = subprocess.run(
        graphrag_command(project, "query", "--method", "naive", "--json", QUESTION),
        env=ENV,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(capture.stdout)["naive"]["text"]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def http_url(project: Path) -> Iterator[str]:
    """The server on streamable HTTP at a free local port, once it listens."""
    port = free_port()
    command = graphrag_command(project, "mcp", "--transport", "http", "--port", str(port))
    server = subprocess.Popen(command, env=ENV, stderr=subprocess.PIPE, text=True)
    try:
        while True:  # until it listens, or it exits (then its stderr says why)
            if server.poll() is not None:
                pytest.fail(f"graphrag mcp --transport http exited: {server.stderr.read()}")
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            with contextlib.suppress(subprocess.TimeoutExpired):
                server.wait(0.2)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        server.terminate()
        server.wait()


def stdio_server(project: Path, *options: str) -> StdioServerParameters:
    command, *args = graphrag_command(project, "mcp", *options)
    return StdioServerParameters(command=command, args=args, env=ENV, cwd=project)


async def call(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    return result.structured_content


async def error_of(client: Client, tool: str, **arguments: Any) -> str:
    result = await client.call_tool(tool, arguments)
    assert result.is_error
    return result.content[0].text


async def round_trip(server: Any, index: Any, expected_answer: str) -> None:
    """Every tool and resource once, and the errors a client can cause, on one connection."""
    async with Client(server) as client:
        assert TOOLS <= {t.name for t in (await client.list_tools()).tools}
        uris = {str(r.uri) for r in (await client.list_resources()).resources}
        assert {"graphrag://schema", "graphrag://reports"} <= uris
        templates = (await client.list_resource_templates()).resource_templates
        assert "graphrag://reports/{community}" in {t.uri_template for t in templates}

        answer = await call(client, "query", method="naive", question=QUESTION)
        assert answer["answer"] == expected_answer
        assert [c["id"] for c in answer["contexts"]] == answer["sources"]
        assert answer["usage"]["calls"] == 1  # naive: the answer call, replayed
        units = dict(zip(index.text_units[S.ID], index.text_units[S.TEXT], strict=True))
        for context in answer["contexts"]:
            assert context["text"] == units[context["id"].removeprefix("text_unit:")]
            assert context["document_ids"]

        retrieved = await call(client, "retrieve", method="naive", question=QUESTION)
        assert retrieved["contexts"] == answer["contexts"]
        assert retrieved["usage"]["calls"] == 0, "no answer call"
        assert retrieved["ranking"][0] == answer["sources"][0]

        entities = index.entities.set_index(S.TITLE)
        found = await call(client, "entity", name=ENTITY.upper())
        assert (found["title"], found["type"]) == (ENTITY, entities.at[ENTITY, S.TYPE])
        assert found["degree"] == entities.at[ENTITY, S.DEGREE]
        assert found["text_unit_ids"] == list(entities.at[ENTITY, S.TEXT_UNIT_IDS])

        edges = index.relationships
        own = edges[(edges[S.SOURCE_ENTITY] == ENTITY) | (edges[S.TARGET_ENTITY] == ENTITY)]
        near = await call(client, "neighbors", name=ENTITY)
        assert {n["title"] for n in near["neighbors"]} == (
            set(own[S.SOURCE_ENTITY]) | set(own[S.TARGET_ENTITY])
        ) - {ENTITY}
        assert {n["hops"] for n in near["neighbors"]} == {1}
        wider = await call(client, "neighbors", name=ENTITY, hops=2)
        assert len(wider["neighbors"]) > len(near["neighbors"])

        types = index.entities[S.TYPE]
        organizations = "MATCH (e:Entity) WHERE e.type = 'organization' RETURN count(*) AS n"
        counted = await call(client, "cypher", query=organizations)
        assert counted["rows"] == [{"n": int((types == "organization").sum())}]
        clamped = await call(client, "cypher", query="MATCH (e:Entity) RETURN e.title LIMIT 999")
        assert clamped["query"].endswith(f"LIMIT {clamped['max_rows']}")
        assert clamped["row_count"] == min(len(index.entities), clamped["max_rows"])
        nodes = "MATCH (n) RETURN count(n) AS n"
        before = (await call(client, "cypher", query=nodes))["rows"]
        refused = await error_of(client, "cypher", query="MATCH (n) DETACH DELETE n")
        assert "DETACH is not allowed" in refused
        assert "cartesian product" in await error_of(
            client, "cypher", query="MATCH (a:Entity), (b:Entity) RETURN a.title, b.title"
        )
        assert (await call(client, "cypher", query=nodes))["rows"] == before, "nothing deleted"

        status = await call(client, "index_status")
        assert status["counts"]["entities"] == len(index.entities)
        assert status["counts"]["relationships"] == len(index.relationships)
        assert status["counts"]["community_reports"] == len(index.community_reports)
        assert status["cached"]["llm_replies"]["mode"] == "replay"
        assert status["cached"]["graph_database"]["exported"]
        assert "naive" in status["methods"]["default"]

        schema = json.loads((await client.read_resource("graphrag://schema")).contents[0].text)
        assert sum(schema["entity_types"].values()) == len(index.entities)
        exported = schema["graph_database"]  # the cypher tool loaded it above
        assert exported["nodes"]["Entity"]["count"] == len(index.entities)
        listed = json.loads((await client.read_resource("graphrag://reports")).contents[0].text)
        assert len(listed) == len(index.community_reports)
        first = index.community_reports.iloc[0]
        text = (await client.read_resource(listed[0]["uri"])).contents[0].text
        assert text == first[S.FULL_CONTENT]
        with pytest.raises(MCPError, match="no report for 9999"):
            await client.read_resource("graphrag://reports/9999")

        unknown = await error_of(client, "query", method="graph_magic", question=QUESTION)
        assert "graph_magic" in unknown and "known: naive" in unknown
        assert "question: empty" in await error_of(client, "query", method="naive", question=" ")
        overlong = "why " * MAX_QUESTION_CHARS
        assert f"more than {MAX_QUESTION_CHARS}" in await error_of(
            client, "retrieve", method="naive", question=overlong
        )
        assert "closest: Kestrel Bay" in await error_of(client, "entity", name="Kestrel Bey")
        unrecorded = await error_of(client, "query", method="naive", question="Who won in 1850?")
        assert "was never recorded" in unrecorded
        assert (await call(client, "index_status"))["index"] == str(index.path), "still serving"


def test_every_tool_and_resource_over_stdio(project, demo_index, cli_answer) -> None:
    asyncio.run(round_trip(stdio_server(project), demo_index, cli_answer))


def test_every_tool_and_resource_over_streamable_http(http_url, demo_index, cli_answer) -> None:
    asyncio.run(round_trip(http_url, demo_index, cli_answer))


def test_a_missing_index_is_a_tool_error_naming_it(project, tmp_path) -> None:
    missing = tmp_path / "no-index-here"

    async def ask() -> tuple[str, str]:
        async with Client(stdio_server(project, "--index", str(missing))) as client:
            status = await error_of(client, "index_status")
            query = await error_of(client, "query", method="naive", question=QUESTION)
            return status, query

    for message in asyncio.run(ask()):
        assert str(missing) in message


def test_the_command_is_listed(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["mcp", "--help"])
    out = capsys.readouterr().out
    assert "--transport {stdio,http}" in out and "127.0.0.1" in out
