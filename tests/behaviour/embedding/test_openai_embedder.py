"""The OpenAI-compatible embedder against a real HTTP server on loopback (no network needed)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

pytest.importorskip("langchain_openai")

from ripplemem import HashingEmbedder, OpenAIEmbedder, RippleMem  # noqa: E402

_VECTORS = HashingEmbedder(64)


class _EmbeddingsHandler(BaseHTTPRequestHandler):
    requests: list[dict] = []

    def do_POST(self) -> None:  # noqa: N802 (http.server API)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append({"path": self.path, "auth": self.headers.get("Authorization"), **body})
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        # Unnormalised on purpose: the embedder must normalise what a server returns.
        data = [
            {"object": "embedding", "index": i, "embedding": (3.0 * _VECTORS.embed_query(t)).tolist()}
            for i, t in enumerate(texts)
        ]
        payload = json.dumps(
            {
                "object": "list",
                "data": data,
                "model": body["model"],
                "usage": {"prompt_tokens": 1, "total_tokens": 1},
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    _EmbeddingsHandler.requests = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _EmbeddingsHandler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    httpd.shutdown()


def test_embeds_through_an_openai_compatible_server(server: str) -> None:
    embedder = OpenAIEmbedder("text-embedding-v3", base_url=server, api_key="sk-test")
    assert embedder.model_id == "openai:text-embedding-v3"
    docs = embedder.embed_documents(["green tea in the morning", "a trip to Berlin"])
    query = embedder.embed_query("green tea")
    assert docs.shape == (2, 64) and query.shape == (64,)
    assert np.allclose(np.linalg.norm(docs, axis=1), 1.0) and np.isclose(np.linalg.norm(query), 1.0)
    assert float(docs[0] @ query) > float(docs[1] @ query)
    sent = _EmbeddingsHandler.requests
    assert sent[0]["path"] == "/v1/embeddings" and sent[0]["model"] == "text-embedding-v3"
    assert sent[0]["auth"] == "Bearer sk-test"
    assert sent[0]["input"] == ["green tea in the morning", "a trip to Berlin"]


def test_a_store_built_on_the_api_embedder_recalls(server: str) -> None:
    embedder = OpenAIEmbedder("text-embedding-v3", base_url=server, api_key="sk-test")
    with RippleMem(path=None, user_id="alice", embedder=embedder) as mem:
        mem.add_many(["I keep my bike in the basement", "The dentist is on Friday"])
        assert mem.recall("where is the bike?", k=1, mode="dense").hits[0].memory.content == (
            "I keep my bike in the basement"
        )
        assert mem.stats()["embedding_model"] == "openai:text-embedding-v3"
