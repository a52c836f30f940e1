"""One Neo4j driver for a store: connect (failing fast with a clear error), then run statements."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ripplemem.core.choices import BackendName, literal_values
from ripplemem.errors import InvalidInputError, MissingDependencyError, StoreError

BACKENDS = literal_values(BackendName)
# A statement of neo4j_cypher with its parameters, ready to run.
Statement = tuple[str, dict[str, Any]]
_HOW_TO_START = (
    "start one with `docker run -p 7687:7687 -e NEO4J_AUTH=neo4j/password neo4j:5` (or use a Neo4j "
    "Aura instance), then pass uri='neo4j://localhost:7687', auth=('neo4j', 'password')"
)


def statement(text: str, /, **params: Any) -> Statement:
    """A statement of neo4j_cypher with its parameters (named, so tests can check them)."""
    return text, params


@dataclass(frozen=True)
class Neo4jOptions:
    """Where the Neo4j backend lives: a bolt/neo4j URI, (user, password) and the database."""

    uri: str
    auth: tuple[str, str] | None = None
    database: str | None = None
    # Seconds a failed transaction is retried (the driver's default, 30 s, hides a dead server).
    retry_seconds: float = 5.0


def neo4j_options(
    backend: str,
    uri: str | None,
    auth: Any,
    database: str | None,
    *,
    path: Any,
    vector_index: str = "auto",
    chroma_url: str | None = None,
) -> Neo4jOptions | None:
    """Check RippleMem(backend=..., uri=..., auth=..., database=...); None for the embedded store."""
    if backend not in BACKENDS:
        raise InvalidInputError(f"backend must be one of {', '.join(BACKENDS)}; got {backend!r}")
    if backend == "postgres":
        return None
    if backend == "embedded":
        if uri is not None or auth is not None or database is not None:
            raise InvalidInputError(
                "uri, auth and database are options of backend='neo4j'; "
                "pass backend='neo4j' with them, or drop them"
            )
        return None
    if path is None:
        raise InvalidInputError(
            "backend='neo4j' keeps its ledger (history, tiers, working memory) in "
            "SQLite at path: give a store directory, not path=None"
        )
    if vector_index != "auto" or chroma_url is not None:
        raise InvalidInputError(
            "backend='neo4j' keeps the vectors in Neo4j's vector index: drop vector_index and chroma_url"
        )
    if not isinstance(uri, str) or "://" not in uri:
        raise InvalidInputError(f"backend='neo4j' needs uri='neo4j://host:7687' (or bolt://...); got {uri!r}")
    if auth is not None and not (
        isinstance(auth, tuple) and len(auth) == 2 and all(isinstance(part, str) for part in auth)
    ):
        raise InvalidInputError("auth must be a (user, password) tuple of strings, or None")
    if database is not None and (not isinstance(database, str) or not database):
        raise InvalidInputError(
            f"database must be a non-empty name or None (the server's default); got {database!r}"
        )
    return Neo4jOptions(uri=uri, auth=auth, database=database)


class Neo4jConnection:
    """The driver of one Neo4j database, checked reachable when opened."""

    def __init__(self, options: Neo4jOptions) -> None:
        try:
            import neo4j
            from neo4j.exceptions import AuthError, ServiceUnavailable
        except ImportError as exc:
            raise MissingDependencyError(
                "backend='neo4j' needs the neo4j driver: pip install 'ripplemem[neo4j]'"
            ) from exc
        self.options = options
        self._routing = neo4j.RoutingControl
        try:
            self._driver = neo4j.GraphDatabase.driver(
                options.uri,
                auth=options.auth,
                connection_timeout=5.0,
                max_transaction_retry_time=options.retry_seconds,
            )
        except ValueError as exc:
            raise InvalidInputError(f"cannot use the Neo4j URI {options.uri!r}: {exc}") from exc
        try:
            self._driver.verify_connectivity()
        except AuthError as exc:
            self._driver.close()
            raise StoreError(
                f"Neo4j at {options.uri} refused the credentials given in auth "
                f"({exc.message}); pass auth=(user, password) of that server"
            ) from exc
        except (ServiceUnavailable, OSError) as exc:
            self._driver.close()
            raise StoreError(f"no Neo4j server answers at {options.uri} ({exc}); {_HOW_TO_START}") from exc

    def write(self, statements: Sequence[Statement]) -> None:
        """Run statements in one write transaction (all or nothing)."""
        if not statements:
            return

        def work(tx: Any) -> None:
            for query, params in statements:
                tx.run(query, params).consume()

        with self._driver.session(database=self.options.database) as session:
            session.execute_write(work)

    def write_count(self, query: str, params: dict[str, Any]) -> int:
        """Run one write statement that returns a single count (a batched delete)."""
        records = self._driver.execute_query(
            query, params, database_=self.options.database, routing_=self._routing.WRITE
        ).records
        return int(records[0][0]) if records else 0

    def read(self, query: str, params: dict[str, Any]) -> list[Any]:
        """Run one read statement and return its records."""
        return list(
            self._driver.execute_query(
                query, params, database_=self.options.database, routing_=self._routing.READ
            ).records
        )

    def stream(self, query: str, params: dict[str, Any]) -> Iterator[Any]:
        """Run one read statement and yield its records as they arrive (for large results)."""
        with self._driver.session(database=self.options.database, default_access_mode="READ") as session:
            yield from session.run(query, params)

    def close(self) -> None:
        """Close the driver and its connections."""
        self._driver.close()
