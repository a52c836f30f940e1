"""`ripplemem erase`: erase one memory, what a text points to, or a whole user, with verification;
prints the audit report (a --dry-run lists the texts it would erase; the report of an erase never
holds them)."""

from __future__ import annotations

import argparse
from typing import Any

from ripplemem.interfaces.cli import formatting as fmt
from ripplemem.interfaces.cli.location import open_store


def cmd_erase(args: argparse.Namespace) -> None:
    """Erase (or with --dry-run preview, texts included) and print the audit report; exit 1 if
    verification failed."""
    with open_store(args, must_exist=True, doing=" to erase from") as mem:
        whole = args.id is None and args.matching is None
        report = mem.erase(
            args.id, matching=args.matching, user_id=args.user if whole else None, dry_run=args.dry_run
        )
    print(fmt.to_json(report.as_dict()) if args.json else report.summary())
    if not args.dry_run and not report.verified:
        raise SystemExit(1)


def add_erase_command(sub: Any, user: argparse.ArgumentParser) -> None:
    """Register `erase` on the subcommand parsers (``user`` gives --store, --user, --embedder)."""
    summary = "erase one memory (--id), what a text points to (--matching) or the whole user, verified"
    erase = sub.add_parser("erase", parents=[user], help=summary, description=summary)
    erase.set_defaults(handler=cmd_erase)
    what = erase.add_mutually_exclusive_group()
    what.add_argument("--id", help="erase this memory (with its versions and summaries)")
    what.add_argument(
        "--matching",
        metavar="TEXT",
        help="erase every memory this text points to (preview with --dry-run first)",
    )
    erase.add_argument(
        "--dry-run", action="store_true", help="show what would be erased (ids and texts), change nothing"
    )
    erase.add_argument("--json", action="store_true", help="print the audit report as JSON")
