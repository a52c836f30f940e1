"""The Chroma server backend: stores that share one real server stay apart, reopen, survive a
wiped server, clean up after themselves, and an unreachable or wrong URL is a clear error."""

from __future__ import annotations

import http.server
import json
import os
import socket
import threading
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from internals import engine_of

from ripplemem import RippleMem, StoreOptions
from ripplemem.embedding.embedders import Embedder
from ripplemem.errors import InvalidInputError, StoreError
from ripplemem.interfaces.cli.main import main
from ripplemem.store.vectors.chroma_server import ChromaServer


@pytest.fixture
def server(chroma_server_url: str) -> Any:
    """A plain Chroma client on the session's server, to look at what RippleMem left there."""
    return ChromaServer.parse(chroma_server_url).connect()


def names(client: Any) -> set[str]:
    """Every collection name on the server."""
    return {c if isinstance(c, str) else c.name for c in client.list_collections()}


def recalled(mem: RippleMem, query: str) -> list[str]:
    """What dense recall (the vectors alone) returns for a query."""
    return [hit.memory.content for hit in mem.recall(query, k=5, mode="dense").hits]


def open_store(path: Path | None, url: str, embedder: Embedder, **options: Any) -> RippleMem:
    """Alice's handle on a store whose vectors are on the server."""
    return RippleMem(path, user_id="alice", embedder=embedder, store=StoreOptions(chroma_url=url, **options))


@pytest.mark.parametrize("isolation_b", ["collection", "filter"])
def test_two_stores_on_one_server_never_see_or_drop_each_others_vectors(
    tmp_path: Path, chroma_server_url: str, embedder: Embedder, server: Any, isolation_b: str
) -> None:
    before = names(server)
    with open_store(tmp_path / "a", chroma_server_url, embedder) as a:
        a.add("Alice keeps her passport in the blue folder")
        a.scope("carol").add("Carol's locker code is 4471")
        a_names = names(server) - before
        assert len(a_names) == 2
        b = open_store(tmp_path / "b", chroma_server_url, embedder, isolation=isolation_b)
        b.add("Alice waters the orchids on Fridays")
        assert recalled(a, "where is the passport") == ["Alice keeps her passport in the blue folder"]
        assert recalled(b, "where is the passport") == ["Alice waters the orchids on Fridays"]
        # B erases everything of its own alice and checks itself: A's collections stay whole.
        b.erase(user_id="alice")
        report = RippleMem.check(b.path, chroma_url=chroma_server_url)  # type: ignore[arg-type]
        assert report.consistent and report.stray_vectors == 0
        assert a_names <= names(server)
        assert recalled(a, "where is the passport") == ["Alice keeps her passport in the blue folder"]
        assert a.stats()["vectors"] == 1 and a.scope("carol").stats()["vectors"] == 1
        assert recalled(b, "where is the passport") == []
        b.close()


def test_a_store_reopens_with_its_vectors_on_the_server_and_nothing_of_chroma_on_disk(
    tmp_path: Path, chroma_server_url: str, embedder: Embedder
) -> None:
    path = tmp_path / "store"
    with open_store(path, chroma_server_url, embedder) as mem:
        mem.add("The spare key is under the third flowerpot")
    with open_store(path, chroma_server_url, embedder) as mem:
        assert recalled(mem, "where is the spare key") == ["The spare key is under the third flowerpot"]
        stats = mem.stats()
        assert stats["vector_index"] == "chroma-server" and stats["vectors"] == 1
    # Rows in SQLite; no embedded Chroma folder, no index lock file.
    assert not {"chroma", "ripplemem-index.lock"} & set(os.listdir(path))


def test_two_handles_on_one_store_follow_each_others_erase_and_rewrite(
    tmp_path: Path, chroma_server_url: str, embedder: Embedder
) -> None:
    # As two processes would: each handle has its own client and cached collections.
    path = tmp_path / "store"
    with (
        open_store(path, chroma_server_url, embedder) as first,
        open_store(path, chroma_server_url, embedder) as second,
    ):
        first.add("The old wifi password is tulip42")
        assert recalled(second, "wifi password") == ["The old wifi password is tulip42"]
        second.erase(user_id="alice")  # drops alice's collection on the server
        second.add("The new wifi password is orchid77")  # and creates it again
        assert recalled(first, "wifi password") == ["The new wifi password is orchid77"]
        first.add("The router sits behind the bookshelf")
        assert sorted(recalled(second, "wifi router")) == [
            "The new wifi password is orchid77",
            "The router sits behind the bookshelf",
        ]


def test_a_wiped_server_is_refilled_from_sqlite_on_open(
    tmp_path: Path, chroma_server_url: str, embedder: Embedder, server: Any
) -> None:
    path = tmp_path / "store"
    before = names(server)
    with open_store(path, chroma_server_url, embedder) as mem:
        mem.add("Grandma's birthday is on the ninth of March")
    for name in names(server) - before:
        server.delete_collection(name)
    with open_store(path, chroma_server_url, embedder) as mem:
        assert recalled(mem, "when is grandma's birthday") == ["Grandma's birthday is on the ninth of March"]


def test_a_reembedded_store_refills_the_server_with_the_new_vectors_on_its_next_open(
    tmp_path: Path, chroma_server_url: str, embedder: Embedder
) -> None:
    path = tmp_path / "store"
    with open_store(path, chroma_server_url, embedder) as mem:
        mem.add_many(["The cat's vet is Dr. Okafor", "The dentist appointment is on Monday"])
    assert RippleMem.reembed(path, "hashing") == 2
    assert "chroma" not in os.listdir(path)  # no local index built on the way
    with RippleMem(
        path, user_id="alice", embedder="hashing", store=StoreOptions(chroma_url=chroma_server_url)
    ) as mem:
        top = mem.recall("The cat's vet is Dr. Okafor", k=1, mode="dense").hits[0]
        # The server now answers with the hashing vectors: the same text is a perfect match.
        assert top.memory.content == "The cat's vet is Dr. Okafor" and top.components["dense"] > 0.999
    assert RippleMem.check(path, chroma_url=chroma_server_url).consistent


def test_an_in_memory_store_leaves_nothing_on_the_server(
    chroma_server_url: str, embedder: Embedder, server: Any
) -> None:
    before = names(server)
    mem = open_store(None, chroma_server_url, embedder)
    mem.add("A note that lives only as long as this process")
    assert recalled(mem, "note") == ["A note that lives only as long as this process"]
    assert names(server) - before
    mem.close()
    assert names(server) == before


def test_an_embedded_store_moves_to_the_server_and_is_not_opened_locally_by_accident(
    tmp_path: Path, chroma_server_url: str, embedder: Embedder
) -> None:
    path = tmp_path / "store"
    with RippleMem(
        path, user_id="alice", embedder=embedder, store=StoreOptions(vector_index="chroma")
    ) as mem:
        mem.add("The boat is moored at pier seven")
    with open_store(path, chroma_server_url, embedder) as mem:
        assert recalled(mem, "where is the boat") == ["The boat is moored at pier seven"]
    with pytest.raises(StoreError, match=f"Chroma server.*{chroma_server_url}.*chroma_url"):
        RippleMem(path, user_id="alice", embedder=embedder)
    with pytest.raises(InvalidInputError, match="chroma_url"):
        RippleMem.check(path)
    # Chosen explicitly, a local index is rebuilt from SQLite.
    with RippleMem(
        path, user_id="alice", embedder=embedder, store=StoreOptions(vector_index="chroma")
    ) as mem:
        assert recalled(mem, "where is the boat") == ["The boat is moored at pier seven"]


def test_an_unreachable_server_is_named_with_how_to_start_one(tmp_path: Path, embedder: Embedder) -> None:
    with socket.socket() as probe:  # a port nobody listens on once the probe is closed
        probe.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{probe.getsockname()[1]}"
    with pytest.raises(StoreError, match=rf"{url}.*chroma run --path DIR --port N"):
        open_store(tmp_path / "store", url, embedder)
    assert not (tmp_path / "store").exists()


@pytest.mark.parametrize(
    ("url", "options", "message"),
    [
        ("localhost:8000", {}, "not a server address"),
        ("http://user:secret@localhost:8000", {}, "chroma_headers"),
        ("http://localhost:8000/api", {}, "only scheme, host and port"),
        ("http://localhost:8000", {"vector_index": "numpy"}, "vector_index='chroma'"),
        ("http://localhost:8000", {"chroma_headers": {"Authorization": 42}}, "chroma_headers"),
        (None, {"chroma_headers": {"Authorization": "Bearer x"}}, "pass chroma_url"),
    ],
)
def test_a_wrong_server_option_is_refused_before_anything_is_written(
    tmp_path: Path, embedder: Embedder, url: str | None, options: dict[str, Any], message: str
) -> None:
    with pytest.raises(InvalidInputError, match=message):
        RippleMem(
            tmp_path / "store",
            user_id="alice",
            embedder=embedder,
            store=StoreOptions(chroma_url=url, **options),
        )
    assert not (tmp_path / "store").exists()


class _Recorder(http.server.BaseHTTPRequestHandler):
    """Forwards each request to the Chroma server, noting the Authorization header it carried."""

    server: _RecordingProxy

    def _forward(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.server.seen.append(self.headers.get("Authorization"))
        request = urllib.request.Request(
            self.server.target + self.path,
            data=body or None,
            method=self.command,
            headers={"Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request) as reply:
                status, data = reply.status, reply.read()
        except urllib.error.HTTPError as exc:
            status, data = exc.code, exc.read()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_PUT = do_DELETE = _forward

    def log_message(self, *args: Any) -> None:
        """Quiet."""


class _RecordingProxy(http.server.ThreadingHTTPServer):
    def __init__(self, target: str) -> None:
        super().__init__(("127.0.0.1", 0), _Recorder)
        self.target = target
        self.seen: list[str | None] = []


def test_headers_such_as_a_token_go_with_every_request(chroma_server_url: str, embedder: Embedder) -> None:
    proxy = _RecordingProxy(chroma_server_url)
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{proxy.server_address[1]}"
        with open_store(None, url, embedder, chroma_headers={"Authorization": "Bearer s3cret"}) as mem:
            mem.add("Headers travel with each call")
            assert recalled(mem, "headers") == ["Headers travel with each call"]
            assert "s3cret" not in repr(engine_of(mem).chroma)
    finally:
        proxy.shutdown()
        proxy.server_close()
    assert len(proxy.seen) > 3 and set(proxy.seen) == {"Bearer s3cret"}


def test_the_command_line_sends_headers_from_an_option_or_the_environment(
    tmp_path: Path,
    chroma_server_url: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    proxy = _RecordingProxy(chroma_server_url)
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    path, url = str(tmp_path / "memdb"), f"http://127.0.0.1:{proxy.server_address[1]}"
    try:
        assert (
            main(
                [
                    "add",
                    "The spare key is under the blue pot",
                    "--path",
                    path,
                    "--user",
                    "mei",
                    "--embedder",
                    "hashing",
                    "--chroma-url",
                    url,
                    "--chroma-header",
                    "Authorization: Bearer from-option",
                ]
            )
            == 0
        )
        capsys.readouterr()
        monkeypatch.setenv("RIPPLEMEM_CHROMA_HEADERS", '{"Authorization": "Bearer from-env"}')
        assert (
            main(
                [
                    "recall",
                    "spare key",
                    "--mode",
                    "dense",
                    "--path",
                    path,
                    "--user",
                    "mei",
                    "--chroma-url",
                    url,
                    "--json",
                ]
            )
            == 0
        )
        hits = json.loads(capsys.readouterr().out)["hits"]
    finally:
        proxy.shutdown()
        proxy.server_close()
    assert [hit["memory"]["content"] for hit in hits] == ["The spare key is under the blue pot"]
    assert {"Bearer from-option", "Bearer from-env"} <= set(proxy.seen) and None not in proxy.seen


@pytest.mark.parametrize(
    ("arguments", "environment", "message"),
    [
        (["--chroma-header", "Authorization Bearer x"], None, "'NAME: VALUE'"),
        ([], "Bearer x", "RIPPLEMEM_CHROMA_HEADERS must be a JSON object"),
        (["--chroma-header", "Authorization: Bearer x"], None, "pass chroma_url"),
    ],
)
def test_bad_header_options_are_named(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    arguments: list[str],
    environment: str | None,
    message: str,
) -> None:
    monkeypatch.delenv("RIPPLEMEM_CHROMA_URL", raising=False)
    url = [] if message == "pass chroma_url" else ["--chroma-url", "http://127.0.0.1:9"]
    if environment is not None:
        monkeypatch.setenv("RIPPLEMEM_CHROMA_HEADERS", environment)
    assert main(["add", "x", "--path", str(tmp_path / "db"), "--embedder", "hashing", *url, *arguments]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "db").exists()


def test_the_command_line_takes_the_server_from_an_option_or_the_environment(
    tmp_path: Path,
    chroma_server_url: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = str(tmp_path / "memdb")
    assert (
        main(
            [
                "add",
                "The bike lock code is 0815",
                "--path",
                path,
                "--user",
                "mei",
                "--embedder",
                "hashing",
                "--chroma-url",
                chroma_server_url,
            ]
        )
        == 0
    )
    assert main(["check", "--path", path]) == 2
    assert "--chroma-url" in capsys.readouterr().err
    monkeypatch.setenv("RIPPLEMEM_CHROMA_URL", chroma_server_url)
    assert main(["recall", "bike lock", "--mode", "dense", "--path", path, "--user", "mei", "--json"]) == 0
    hits = json.loads(capsys.readouterr().out)["hits"]
    assert [hit["memory"]["content"] for hit in hits] == ["The bike lock code is 0815"]
    assert main(["stats", "--json", "--path", path, "--user", "mei"]) == 0
    assert json.loads(capsys.readouterr().out)["vector_index"] == "chroma-server"
    assert main(["check", "--json", "--path", path]) == 0
    assert json.loads(capsys.readouterr().out)["consistent"] is True
