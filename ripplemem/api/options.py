"""Where a store keeps its vectors and graph: ``StoreOptions``, the one argument that gathers the
backend settings of ``RippleMem(...)``, and the engine it opens. The eight loose keyword arguments
it replaces still work for one release, with a DeprecationWarning."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from ripplemem.api.deprecation import warn_deprecated
from ripplemem.config import Settings, check_settings
from ripplemem.core.choices import BackendName, Isolation, VectorIndexName
from ripplemem.embedding.framework import EmbedderSpec
from ripplemem.engine.engine import Clock, Engine, WorkingDrop
from ripplemem.errors import InvalidInputError, InvalidTypeError
from ripplemem.store.neo4j.connection import neo4j_options
from ripplemem.store.postgres.options import PostgresOptions, postgres_options
from ripplemem.store.postgres.uri import redacted
from ripplemem.store.vectors.chroma_server import server_option


@dataclass(frozen=True)
class StoreOptions:
    """The backend settings of a store, checked when the store opens (docs/backends.md).

    ``vector_index``: the embedded index, "chroma", "numpy" (exact, in RAM) or "auto" (as the
    store holds; Chroma for a new one on disk). ``isolation``: "collection" (a new store's default)
    keeps one Chroma collection per user, "filter" one shared collection filtered by user; None:
    as the store holds. ``chroma_url`` keeps the vectors on a Chroma server (rows stay in SQLite),
    ``chroma_headers`` go with every request. ``backend="neo4j"`` with ``uri``, ``auth`` and
    ``database`` serves vectors and the graph from Neo4j; SQLite stays the ledger.
    ``backend="postgres"`` with ``uri="postgresql://..."`` keeps the whole store (rows, graph,
    history, vectors) in one PostgreSQL database, shared by every process on every host; ``schema``
    names its tables' schema ("ripplemem"), ``pool_size`` caps its connections per process (4).
    """

    vector_index: VectorIndexName = "auto"
    isolation: Isolation | None = None
    chroma_url: str | None = None
    chroma_headers: Mapping[str, str] | None = field(default=None, repr=False)
    backend: BackendName = "embedded"
    uri: str | None = None
    auth: tuple[str, str] | None = field(default=None, repr=False)
    database: str | None = None
    schema: str | None = None
    pool_size: int | None = None

    def __repr__(self) -> str:
        shown = [
            f"{f.name}={redacted(value) if f.name == 'uri' and isinstance(value, str) else value!r}"
            for f in fields(self)
            if f.repr and (value := getattr(self, f.name)) != f.default
        ]
        return f"StoreOptions({', '.join(shown)})"


STORE_ARGUMENTS = tuple(f.name for f in fields(StoreOptions))


def maintained_location(
    path: str | os.PathLike[str] | None, store: StoreOptions | None
) -> str | PostgresOptions:
    """The store a maintenance call (reembed, check) works on: the folder ``path``, or the
    PostgreSQL schema that ``store=StoreOptions(backend="postgres", uri=...)`` names."""
    if store is not None and not isinstance(store, StoreOptions):
        raise InvalidTypeError(f"store must be a StoreOptions, got {type(store).__name__}")
    if store is not None and store.backend != "postgres":
        raise InvalidInputError(
            "store= names a PostgreSQL store here (backend='postgres'); for a store folder pass its path"
        )
    if store is not None:
        options = postgres_options(
            "postgres", store.uri, store.schema, store.pool_size, path=path, vector_index=store.vector_index
        )
        assert options is not None
        return options
    if path is None:
        raise InvalidInputError(
            "name the store: its folder, or store=StoreOptions(backend='postgres', uri='postgresql://...')"
        )
    return os.fspath(path)


def store_options(store: StoreOptions | None, loose: Mapping[str, Any]) -> StoreOptions:
    """The options of RippleMem(store=...), or those its deprecated loose keyword arguments give
    (with a warning naming the new spelling); an unknown keyword is the TypeError Python gives."""
    unknown = sorted(set(loose) - set(STORE_ARGUMENTS))
    if unknown:
        raise TypeError(f"RippleMem() got an unexpected keyword argument {unknown[0]!r}")
    if store is not None and not isinstance(store, StoreOptions):
        raise InvalidTypeError(f"store must be a StoreOptions, got {type(store).__name__}")
    if not loose:
        return store or StoreOptions()
    if store is not None:
        raise InvalidInputError(
            f"give the store settings once: in store=StoreOptions(...) or as {', '.join(loose)}=..., not both"
        )
    given = ", ".join(f"{name}=..." for name in loose)
    warn_deprecated(f"({given})", f"RippleMem(..., store=StoreOptions({given}))", stacklevel=4)
    return StoreOptions(**loose)


def open_engine(
    path: str | os.PathLike[str] | None,
    embedder: EmbedderSpec,
    settings: Settings | None,
    clock: Clock | None,
    options: StoreOptions,
    on_working_drop: WorkingDrop,
) -> Engine:
    """Open (or create) the store at ``path`` with these backend options."""
    return Engine(
        None if path is None else os.fspath(path),
        embedder,
        options.vector_index,
        check_settings(settings),
        clock,
        options.isolation,
        server_option(options.chroma_url, options.chroma_headers),
        neo4j_options(
            options.backend,
            options.uri,
            options.auth,
            options.database,
            path=path,
            vector_index=options.vector_index,
            chroma_url=options.chroma_url,
        ),
        postgres=postgres_options(
            options.backend,
            options.uri,
            options.schema,
            options.pool_size,
            path=path,
            vector_index=options.vector_index,
            chroma_url=options.chroma_url,
        ),
        on_working_drop=on_working_drop,
    )
