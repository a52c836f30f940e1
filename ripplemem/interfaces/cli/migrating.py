"""`ripplemem migrate SRC DST`: copy a store between a folder and a PostgreSQL schema, losslessly."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ripplemem.interfaces.cli import formatting as fmt


def cmd_migrate(args: argparse.Namespace) -> None:
    """Copy every row and vector of SRC into DST and print the counts copied."""
    from ripplemem.lifecycle.migrate import migrate

    progress = args.progress if args.progress is not None else not args.json and sys.stderr.isatty()
    report = migrate(args.source, args.target, schema=args.schema, replace=args.replace, progress=progress)
    print(fmt.to_json(report.as_dict()) if args.json else report.summary())


def add_migrate_command(sub: Any) -> None:
    """Register `migrate` on the `ripplemem` subparsers."""
    parser = sub.add_parser(
        "migrate",
        help="copy a store to PostgreSQL and back (or to a new folder), every row and vector",
        description="Copy the store at SRC into DST, each a store folder or a postgresql:// URI: "
        "memories with their ids and times, history, entities and edges, tiers and the cold archive, "
        "knowledge bases, readings and vectors. SRC is held still while it is copied (its writers "
        "wait); DST must be empty (or pass --replace). DST rebuilds its vector index when first opened.",
    )
    parser.set_defaults(handler=cmd_migrate)
    parser.add_argument("source", metavar="SRC", help="the store to copy: a folder or postgresql://...")
    parser.add_argument("target", metavar="DST", help="where to copy it: a folder or postgresql://...")
    parser.add_argument(
        "--schema", help="the PostgreSQL schema of the side given as a URI (default: ripplemem)"
    )
    parser.add_argument("--replace", action="store_true", help="delete the rows DST holds and copy over them")
    parser.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="show a progress bar (default: when stderr is a terminal)",
    )
    parser.add_argument("--json", action="store_true", help="print the counts copied as JSON")
