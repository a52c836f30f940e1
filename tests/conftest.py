"""Shared fixtures: one real MiniLM embedder per test session, real stores in tmp_path, and the
backends the behaviour suite runs against (embedded Chroma, numpy, a real local Chroma server)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

from ripplemem import RippleMem, StoreOptions  # noqa: E402
from ripplemem.embedding.embedders import Embedder, resolve_embedder  # noqa: E402

SERVER_START_SECONDS = 60
pytest_plugins = ["pg_server"]


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    """The default local MiniLM model, loaded once for the whole run."""
    return resolve_embedder(None)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/api/v2/heartbeat", timeout=1) as reply:
            return bool(reply.status == 200)
    except OSError:
        return False


@pytest.fixture(scope="session")
def chroma_server_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real Chroma server for the session: $CHROMA_URL if set, else `chroma run` on a free port
    (stopped at the end). If none starts, the tests that need it are skipped, saying why."""
    given = os.environ.get("CHROMA_URL")
    if given:
        if not _answers(given.rstrip("/")):
            pytest.skip(f"chroma-server backend: CHROMA_URL={given} does not answer")
        yield given
        return
    command = shutil.which("chroma", path=os.path.dirname(sys.executable)) or shutil.which("chroma")
    if command is None:
        pytest.skip("chroma-server backend: no `chroma` command (pip install chromadb) and no $CHROMA_URL")
    folder = tmp_path_factory.mktemp("chroma-server")
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    log = open(folder / "server.log", "wb")  # noqa: SIM115 - the server writes it until the end
    server = subprocess.Popen(
        [command, "run", "--path", str(folder / "data"), "--host", "127.0.0.1", "--port", str(port)],
        stdout=log,
        stderr=subprocess.STDOUT,
        env={**os.environ, "ANONYMIZED_TELEMETRY": "False"},
    )
    try:
        deadline = time.monotonic() + SERVER_START_SECONDS
        while not _answers(url):
            if server.poll() is not None or time.monotonic() > deadline:
                tail = (folder / "server.log").read_text(errors="replace")[-400:]
                pytest.skip(
                    f"chroma-server backend: `chroma run` did not answer at {url} "
                    f"within {SERVER_START_SECONDS} s; its log ends: {tail!r}"
                )
            time.sleep(0.2)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()


@pytest.fixture(scope="session")
def neo4j_server() -> dict[str, Any]:
    """RippleMem options for the Neo4j at $NEO4J_URI ($NEO4J_USER, $NEO4J_PASSWORD, $NEO4J_DATABASE).
    No server can be started here: without one answering, the tests that need it are skipped."""
    uri = os.environ.get("NEO4J_URI")
    if not uri:
        pytest.skip(
            "neo4j backend: set NEO4J_URI to a running server (docker run -p 7687:7687 "
            "-e NEO4J_AUTH=neo4j/password neo4j:5, or Neo4j Aura)"
        )
    from ripplemem.errors import RippleMemError
    from ripplemem.store.neo4j.connection import Neo4jConnection, Neo4jOptions

    auth = (os.environ.get("NEO4J_USER", "neo4j"), os.environ.get("NEO4J_PASSWORD", "password"))
    options = Neo4jOptions(uri, auth, os.environ.get("NEO4J_DATABASE") or None)
    try:
        Neo4jConnection(options).close()
    except RippleMemError as exc:
        pytest.skip(f"neo4j backend: {exc}")
    return {"backend": "neo4j", "uri": options.uri, "auth": options.auth, "database": options.database}


# How each backend of the behaviour suite is opened: StoreOptions fields, given the test's
# request (a backend that needs a server asks for its fixture, which may skip the test, visibly).
# A new backend (e.g. "neo4j") adds an entry here and a name to BACKENDS.
BACKEND_OPTIONS: dict[str, Callable[[pytest.FixtureRequest], dict[str, Any]]] = {
    "chroma": lambda request: {"vector_index": "chroma"},
    "numpy": lambda request: {"vector_index": "numpy"},
    "chroma-server": lambda request: {
        "vector_index": "chroma",
        "chroma_url": request.getfixturevalue("chroma_server_url"),
    },
    "neo4j": lambda request: request.getfixturevalue("neo4j_server"),
}
BACKENDS = list(BACKEND_OPTIONS)


def backend_options(request: pytest.FixtureRequest, backend: str) -> dict[str, Any]:
    """RippleMem keyword arguments that open a store on the named backend."""
    return BACKEND_OPTIONS[backend](request)


@pytest.fixture
def backend_named(request: pytest.FixtureRequest) -> Callable[[str], dict[str, Any]]:
    """backend_options for a fixture with its own params (test modules cannot import conftest:
    tests/adapters has one of the same name)."""
    return lambda name: backend_options(request, name)


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> dict[str, Any]:
    """The StoreOptions fields of each backend in turn (for a test file's own store fixture)."""
    return backend_options(request, request.param)


@pytest.fixture
def mem(backend: dict[str, Any], tmp_path: Path, embedder: Embedder) -> Iterator[RippleMem]:
    """Alice's handle on a fresh on-disk store, once on each backend."""
    handle = RippleMem(
        path=tmp_path / "store", user_id="alice", embedder=embedder, store=StoreOptions(**backend)
    )
    yield handle
    handle.close()


@pytest.fixture
def memory_only(embedder: Embedder) -> Iterator[RippleMem]:
    """Alice's handle on an in-memory store (path=None)."""
    handle = RippleMem(path=None, user_id="alice", embedder=embedder)
    yield handle
    handle.close()
