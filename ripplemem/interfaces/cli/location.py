"""Where the command line's store is: ``--store`` (a folder or a postgresql:// URI, default
$RIPPLEMEM_STORE) or ``--path`` (a folder, default $RIPPLEMEM_PATH, else ./memdb), with
``--schema`` for a URI; and the handle opened there. A URI is only ever shown with its password as ***."""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING

from ripplemem.api.options import StoreOptions
from ripplemem.errors import InvalidInputError, StoreError
from ripplemem.interfaces.cli.chroma import chroma_server, server_store
from ripplemem.store.info import StoreLocation, recorded_embedder, store_exists
from ripplemem.store.postgres.options import PostgresOptions, postgres_options
from ripplemem.store.postgres.uri import is_postgres_uri, redacted

if TYPE_CHECKING:
    from ripplemem.memory import RippleMem

STORE_ENV = "RIPPLEMEM_STORE"
PATH_ENV = "RIPPLEMEM_PATH"
DEFAULT_FOLDER = "./memdb"


def location_options() -> argparse.ArgumentParser:
    """A parent parser with --store, --path and --schema (resolved by resolve_location)."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--store",
        metavar="FOLDER|URI",
        help="the store: a folder or postgresql://user:password@host/db "
        f"(default: ${STORE_ENV}, else --path)",
    )
    common.add_argument(
        "--path",
        help=f"the store folder, another spelling of --store (default: ${PATH_ENV} or {DEFAULT_FOLDER})",
    )
    common.add_argument(
        "--schema", help="the PostgreSQL schema of a postgresql:// store (default: ripplemem)"
    )
    return common


def resolve_location(args: argparse.Namespace) -> None:
    """Set ``args.path`` (the folder, or None) and ``args.postgres`` (the server store, or None)
    from --store/--path, else $RIPPLEMEM_STORE/$RIPPLEMEM_PATH; naming both is an error."""
    store, path = args.store, args.path
    if store is not None and path is not None:
        raise InvalidInputError("name the store once: --store or --path, not both")
    if store is None and path is None:
        store, path = os.environ.get(STORE_ENV) or None, os.environ.get(PATH_ENV) or None
        if store is not None and path is not None:
            raise InvalidInputError(f"${STORE_ENV} and ${PATH_ENV} are both set; unset one (or pass --store)")
    if path is not None and is_postgres_uri(path):
        raise InvalidInputError(f"--path (${PATH_ENV}) is a folder; pass a postgresql:// URI as --store")
    chosen = store if store is not None else path or DEFAULT_FOLDER
    if is_postgres_uri(chosen):
        args.postgres = postgres_options("postgres", chosen, args.schema, None, path=None)
        args.path = None
        return
    if args.schema is not None:
        raise InvalidInputError(
            f"--schema names the schema of a postgresql:// store, and {chosen!r} is a folder; drop --schema"
        )
    args.postgres = None
    args.path = chosen


def location(args: argparse.Namespace) -> StoreLocation:
    """The resolved store: its folder, or its PostgreSQL options."""
    postgres: PostgresOptions | None = args.postgres
    return postgres if postgres is not None else args.path


def shown_location(args: argparse.Namespace) -> str:
    """The store as an error message shows it: the folder, or the URI without its password."""
    postgres: PostgresOptions | None = args.postgres
    if postgres is None:
        return repr(args.path)
    return f"{redacted(postgres.uri)} (schema {postgres.schema})"


def require_store(args: argparse.Namespace, doing: str) -> None:
    """Refuse a command that needs an existing store when there is none where the options point."""
    if not store_exists(location(args)):
        raise StoreError(
            f"no RippleMem store at {shown_location(args)}{doing}; add a memory first "
            "(ripplemem add TEXT) or pass --store (a folder or postgresql://...)"
        )


def maintained_store(args: argparse.Namespace) -> StoreOptions | None:
    """store= of a maintenance call (reembed, check): the PostgreSQL store, or None for a folder."""
    postgres: PostgresOptions | None = args.postgres
    if postgres is None:
        return None
    return StoreOptions(backend="postgres", uri=postgres.uri, schema=postgres.schema)


def store_options(args: argparse.Namespace) -> StoreOptions:
    """RippleMem(store=...) for the resolved store: the PostgreSQL schema, or a folder's vectors
    embedded or on the Chroma server the options name."""
    postgres: PostgresOptions | None = args.postgres
    if postgres is None:
        return server_store(args)
    return StoreOptions(backend="postgres", uri=postgres.uri, schema=postgres.schema, **chroma_server(args))


def open_store(args: argparse.Namespace, *, must_exist: bool, doing: str = "") -> RippleMem:
    """A handle for --user on the store, with --embedder, else the store's model, else "auto"
    (created if new unless ``must_exist``)."""
    if must_exist:
        require_store(args, doing)
    from ripplemem.memory import RippleMem

    embedder = args.embedder or recorded_embedder(location(args)) or "auto"
    return RippleMem(args.path, user_id=args.user, embedder=embedder, store=store_options(args))
