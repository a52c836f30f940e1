"""A Chroma server as the vector index: its URL checked, an HttpClient opened with a clear error,
and the store id that keeps this store's collections apart from other stores on the same server."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from ripplemem.errors import InvalidInputError, MissingDependencyError, StoreError
from ripplemem.store.rows import RowStore

# Chroma's own defaults: `chroma run` listens on 8000.
_DEFAULT_PORTS = {"http": 8000, "https": 443}
STORE_ID_KEY = "store_id"
HOW_TO_START = "start one with `chroma run --path DIR --port N` (it comes with the chromadb package)"


@dataclass(frozen=True)
class ChromaServer:
    """Where a Chroma server listens, and the headers (e.g. auth) every request carries."""

    url: str
    host: str
    port: int
    ssl: bool
    headers: tuple[tuple[str, str], ...] = field(default=(), repr=False)  # may hold a token

    @classmethod
    def parse(cls, url: Any, headers: Mapping[str, str] | None = None) -> ChromaServer:
        """Check a chroma_url such as "http://localhost:8000" (and its headers)."""
        if not isinstance(url, str) or not url.strip():
            raise InvalidInputError(f"chroma_url must be a URL such as 'http://localhost:8000', got {url!r}")
        parts = urlsplit(url.strip())
        try:
            port = parts.port
        except ValueError:
            port = -1
        if parts.scheme not in _DEFAULT_PORTS or not parts.hostname or port == -1:
            raise InvalidInputError(
                f"chroma_url {url!r} is not a server address; give one such as 'http://localhost:8000'"
            )
        if parts.username or parts.password or parts.path.strip("/") or parts.query or parts.fragment:
            raise InvalidInputError(
                f"chroma_url {url!r} must be only scheme, host and port; pass credentials as "
                "chroma_headers={'Authorization': 'Bearer TOKEN'}"
            )
        return cls(
            url=url.strip().rstrip("/"),
            host=parts.hostname,
            port=port or _DEFAULT_PORTS[parts.scheme],
            ssl=parts.scheme == "https",
            headers=_check_headers(headers),
        )

    def connect(self) -> Any:
        """An HttpClient on the server; a StoreError naming the URL if it does not answer."""
        try:
            import chromadb
            from chromadb.config import Settings
        except ImportError as exc:
            raise MissingDependencyError(
                "a Chroma server index needs the chromadb client: pip install 'ripplemem[chroma]'"
            ) from exc
        try:
            return chromadb.HttpClient(
                host=self.host,
                port=self.port,
                ssl=self.ssl,
                headers=dict(self.headers) or None,
                settings=Settings(anonymized_telemetry=False),
            )
        except Exception as exc:  # chromadb raises ValueError for a refused connection, others by cause
            raise StoreError(
                f"no Chroma server answers at {self.url} ({exc}); {HOW_TO_START}, "
                "or leave chroma_url out for the embedded index"
            ) from exc


def server_option(url: str | None, headers: Mapping[str, str] | None = None) -> ChromaServer | None:
    """The server a chroma_url (and chroma_headers) name, or None for the embedded index."""
    if url is None:
        if headers is not None:
            raise InvalidInputError("chroma_headers go to a Chroma server: pass chroma_url as well")
        return None
    return ChromaServer.parse(url, headers)


def _check_headers(headers: Mapping[str, str] | None) -> tuple[tuple[str, str], ...]:
    if headers is None:
        return ()
    if not isinstance(headers, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in headers.items()
    ):
        raise InvalidInputError(
            "chroma_headers must map header names to string values, e.g. {'Authorization': 'Bearer TOKEN'}"
        )
    return tuple(sorted(headers.items()))


def store_namespace(store: RowStore) -> str:
    """This store's id, which names its collections on a server (kept in SQLite, made once)."""
    with store.transaction() as conn:
        # ON CONFLICT DO NOTHING: two processes opening a new store at once agree on the first id.
        conn.execute(
            "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING",
            (STORE_ID_KEY, uuid.uuid4().hex[:16]),
        )
    found = store.get_meta(STORE_ID_KEY)
    assert found is not None
    return found
