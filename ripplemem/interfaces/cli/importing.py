"""`ripplemem import`: bulk-load a JSONL or text file of memories, resumable after an interruption."""

from __future__ import annotations

import argparse
from typing import Any

from ripplemem.api.bulk_import import FORMATS
from ripplemem.errors import InvalidInputError
from ripplemem.interfaces.cli import formatting as fmt
from ripplemem.interfaces.cli.location import open_store


def cmd_import(args: argparse.Namespace) -> None:
    """Import a file into --user's memories, batch by batch; run again to resume after a kill."""
    if args.batch_size <= 0:
        raise InvalidInputError(f"batch-size must be a positive integer, got {args.batch_size}")
    with open_store(args, must_exist=False) as mem:
        report = mem.import_file(
            args.file,
            format=args.format,
            batch_size=args.batch_size,
            progress=fmt.wants_progress(args),
        )
    print(fmt.to_json(report.as_dict()) if args.json else report.summary())


def add_import_command(sub: Any, user: argparse.ArgumentParser) -> None:
    """Register `import` on the `ripplemem` subparsers."""
    parser = sub.add_parser(
        "import",
        parents=[user],
        help="bulk-load memories from a JSONL or text file (resumable)",
        description="Store one memory per line of FILE: JSONL (a string, or an object with content and "
        "optionally type, metadata, event_time, session_id, importance, source) or plain text. "
        "Every line is checked first; batches commit one by one, and running the same command "
        "again after an interruption continues after the last committed batch.",
    )
    parser.set_defaults(handler=cmd_import)
    parser.add_argument("file", metavar="FILE", help="the file to import")
    parser.add_argument(
        "--format",
        default="auto",
        choices=FORMATS,
        help="jsonl or text (default auto: jsonl for .jsonl/.ndjson/.json, else text)",
    )
    parser.add_argument(
        "--batch-size", type=int, default=1024, help="memories per committed batch (default 1024)"
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    fmt.add_progress_option(parser)
