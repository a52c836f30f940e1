"""A PostgreSQL server with pgvector for the tests (a pytest plugin, see conftest.py).

``pg_uri`` is $RIPPLEMEM_TEST_PG when set, else a throwaway pgserver (PostgreSQL 16 + pgvector,
from the dev extra) started once per session in a temporary directory and stopped at the end.
Without pgserver the tests that need a server are skipped, saying why; on CI (CI=true) they fail.
``pg_schema`` is a fresh schema per test, dropped with everything in it afterwards.
"""

from __future__ import annotations

import os
import tempfile
import uuid
from collections.abc import Iterator

import pytest


def _unavailable(reason: str) -> None:
    """Fail on CI, where the dev extra must provide a server; skip elsewhere."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason} (CI=true: the PostgreSQL tests must run)", pytrace=False)
    pytest.skip(reason, allow_module_level=True)


def require_psycopg() -> None:
    """Skip the calling test module (fail it on CI) when the postgres extra is not installed."""
    try:
        import psycopg  # noqa: F401
        import psycopg_pool  # noqa: F401
    except ImportError:
        _unavailable("the PostgreSQL tests need psycopg and psycopg-pool: pip install -e '.[postgres,dev]'")


def _create_extension(uri: str) -> None:
    import psycopg

    with psycopg.connect(uri, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")


def _skip_flushes(uri: str) -> None:
    """A throwaway server need not wait for the disk at each commit (~17 ms each here)."""
    import psycopg

    with psycopg.connect(uri, autocommit=True) as conn:
        conn.execute("ALTER SYSTEM SET synchronous_commit = off")
        conn.execute("SELECT pg_reload_conf()")


# The data directory of the throwaway server (None for $RIPPLEMEM_TEST_PG, whose files are not here).
_DATA_DIR: dict[str, str | None] = {"path": None}


@pytest.fixture(scope="session")
def pg_data_dir(pg_uri: str) -> str | None:
    """The server's data directory when the tests started it (erase tests read its files)."""
    return _DATA_DIR["path"]


@pytest.fixture(scope="session")
def pg_uri() -> Iterator[str]:
    """The URI of a PostgreSQL server with the vector extension created."""
    require_psycopg()
    given = os.environ.get("RIPPLEMEM_TEST_PG")
    if given:
        _create_extension(given)
        yield given
        return
    try:
        import pgserver
    except ImportError:
        _unavailable(
            "no PostgreSQL for the tests: pip install pgserver (in the dev extra) or set RIPPLEMEM_TEST_PG"
        )
    # Not under pytest's tmp_path: another pytest run of the same user may remove older numbered
    # temporary directories while this session's server still writes there.
    with tempfile.TemporaryDirectory(prefix="ripplemem-pgdata-") as folder:
        server = pgserver.get_server(folder, cleanup_mode="stop")
        _DATA_DIR["path"] = folder
        try:
            uri = server.get_uri()
            _create_extension(uri)
            _skip_flushes(uri)
            yield uri
        finally:
            server.cleanup()


def throwaway_schema(uri: str, prefix: str = "test") -> Iterator[str]:
    """A schema name no other test uses (``prefix_<hex>``); the schema, if created, is dropped after."""
    import psycopg
    from psycopg import sql

    name = f"{prefix}_{uuid.uuid4().hex[:16]}"
    yield name
    with psycopg.connect(uri, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(name)))


@pytest.fixture
def pg_schema(pg_uri: str) -> Iterator[str]:
    """A schema name no other test uses; the schema (if created) is dropped after the test."""
    yield from throwaway_schema(pg_uri)
