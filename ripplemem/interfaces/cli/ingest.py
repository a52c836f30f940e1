"""The document subcommands of `ripplemem`: ingest files into a knowledge base, grant and revoke
it, list the knowledge bases a user can read."""

from __future__ import annotations

import argparse
import math
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ripplemem.documents.ingest import IngestReport
from ripplemem.engine.knowledge_bases import DEFAULT_KNOWLEDGE_BASE
from ripplemem.errors import InvalidInputError
from ripplemem.interfaces.cli import formatting as fmt
from ripplemem.interfaces.cli.location import open_store
from ripplemem.markdown.chunk.chunking import CHUNKERS
from ripplemem.markdown.convert.file_limits import (
    DEFAULT_MAX_COMPRESSION_RATIO,
    DEFAULT_MAX_FILE_BYTES,
    DEFAULT_MAX_UNPACKED_BYTES,
    FileLimits,
)

if TYPE_CHECKING:
    pass


def shown(path: Path) -> str:
    """A path as printable text: bytes of a name that are not UTF-8 become ``\\xNN`` escapes."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def report_dict(report: IngestReport) -> dict[str, Any]:
    """An ingest report as plain JSON-ready values."""
    return {
        "knowledge_base": report.knowledge_base,
        "created": report.created,
        "ingested": [str(p) for p in report.ingested],
        "replaced": [str(p) for p in report.replaced],
        "unchanged": [str(p) for p in report.unchanged],
        "failed": [{"path": shown(f.path), "reason": f.reason, "kind": f.kind} for f in report.failed],
        "chunks": report.chunks,
        "pages": report.pages,
        "seconds": round(report.seconds, 3),
    }


def cmd_ingest(args: argparse.Namespace) -> None:
    """Ingest files and folders into a knowledge base; exit 1 if some file failed."""
    if args.max_tokens <= 0:
        raise InvalidInputError(f"max-tokens must be a positive integer, got {args.max_tokens}")
    for flag in ("max_file_mb", "max_unpacked_mb"):
        value = getattr(args, flag)
        if not math.isfinite(value) or value <= 0:
            flag = "--" + flag.replace("_", "-")
            raise InvalidInputError(f"{flag} must be a positive number of MB, got {value}")
    limits = FileLimits(
        round(args.max_file_mb * 1_000_000),
        round(args.max_unpacked_mb * 1_000_000),
        args.max_compression_ratio,
    )  # checked before the store is opened
    with open_store(args, must_exist=False) as mem:
        report = mem.ingest(
            args.paths,
            args.kb,
            include=args.include,
            exclude=args.exclude,
            recursive=not args.no_recursive,
            chunker=args.chunker,
            max_tokens=args.max_tokens,
            force=args.force,
            progress=fmt.wants_progress(args),
            follow_outside_symlinks=args.follow_outside_symlinks,
            max_file_bytes=limits.max_file_bytes,
            max_unpacked_bytes=limits.max_unpacked_bytes,
            max_compression_ratio=limits.max_compression_ratio,
        )
    if args.json:
        print(fmt.to_json(report_dict(report)))
    else:
        for failure in report.failed:
            print(f"failed: {shown(failure.path)}: {failure.reason}")
        print(report.summary())
    if report.failed:
        raise SystemExit(1)


def cmd_grant(args: argparse.Namespace) -> None:
    """Share a knowledge base with another user."""
    with open_store(args, must_exist=False) as mem:
        added = mem.kb.grant(args.kb, args.reader)
    if args.json:
        print(
            fmt.to_json(
                {"knowledge_base": args.kb, "reader": args.reader, "can_read": True, "changed": added}
            )
        )
        return
    print(f"{args.reader!r} {'can now read' if added else 'could already read'} knowledge base {args.kb!r}")


def cmd_revoke(args: argparse.Namespace) -> None:
    """Stop sharing a knowledge base with a user."""
    with open_store(args, must_exist=False) as mem:
        removed = mem.kb.revoke(args.kb, args.reader)
    if args.json:
        print(
            fmt.to_json(
                {"knowledge_base": args.kb, "reader": args.reader, "can_read": False, "changed": removed}
            )
        )
        return
    outcome = "can no longer read" if removed else "could not read"
    print(f"{args.reader!r} {outcome} knowledge base {args.kb!r}")


def cmd_kb_list(args: argparse.Namespace) -> None:
    """Print the knowledge bases the user can read, with their sizes and readers."""
    with open_store(args, must_exist=False) as mem:
        bases = mem.kb.list()
    if args.json:
        print(fmt.to_json(bases))
        return
    for kb in bases:
        print(
            f"{kb.name}: {kb.chunks} chunks from {kb.sources} files ({kb.pages} pages); "
            f"readers: {', '.join(kb.readers)}"
        )
    if not bases:
        print(f"no knowledge base is shared with {args.user!r}; create one with `ripplemem ingest PATH`")


def add_document_commands(sub: Any, user: argparse.ArgumentParser) -> None:
    """Register ingest, grant, revoke and `kb list` on the `ripplemem` subparsers."""
    ingest = sub.add_parser(
        "ingest",
        parents=[user],
        help="ingest files and folders into a knowledge base",
        description="Convert files (PDF, DOCX, XLSX, PPTX, HTML, CSV, JSON, XML, TXT, MD, EPUB, ...) to "
        "Markdown, chunk them and store the chunks in a knowledge base. Unchanged files are "
        "skipped, changed ones replace their chunks.",
    )
    ingest.set_defaults(handler=cmd_ingest)
    ingest.add_argument("paths", nargs="+", metavar="PATH", help="files and folders")
    ingest.add_argument(
        "--kb",
        default=DEFAULT_KNOWLEDGE_BASE,
        help="knowledge base name (default 'default'; created if missing)",
    )
    ingest.add_argument(
        "--include",
        action="append",
        metavar="GLOB",
        help="only files in folders matching this pattern, repeatable (e.g. '*.pdf')",
    )
    ingest.add_argument("--exclude", action="append", metavar="GLOB", help="skip matching files, repeatable")
    ingest.add_argument("--no-recursive", action="store_true", help="do not walk into subfolders")
    ingest.add_argument(
        "--chunker", default="auto", choices=CHUNKERS, help="how to cut documents (default auto)"
    )
    ingest.add_argument("--max-tokens", type=int, default=256, help="largest chunk in tokens (default 256)")
    ingest.add_argument("--force", action="store_true", help="re-ingest unchanged files too")
    ingest.add_argument(
        "--follow-outside-symlinks",
        action="store_true",
        help="also read files that symlinks lead to outside the folder (refused by default)",
    )
    ingest.add_argument(
        "--max-file-mb",
        type=float,
        default=DEFAULT_MAX_FILE_BYTES / 1_000_000,
        metavar="MB",
        help="refuse files larger than this (default %(default)g MB)",
    )
    ingest.add_argument(
        "--max-unpacked-mb",
        type=float,
        default=DEFAULT_MAX_UNPACKED_BYTES / 1_000_000,
        metavar="MB",
        help="refuse DOCX/PPTX/XLSX/EPUB files whose parts unpack to more than this (default %(default)g MB)",
    )
    ingest.add_argument(
        "--max-compression-ratio",
        type=float,
        default=DEFAULT_MAX_COMPRESSION_RATIO,
        metavar="N",
        help="refuse DOCX/PPTX/XLSX/EPUB files with a part over 1 MB "
        "compressed more than N:1 (default %(default)g)",
    )
    ingest.add_argument("--json", action="store_true", help="print the report as JSON")
    fmt.add_progress_option(ingest)

    for name, handler, verb in (
        ("grant", cmd_grant, "share a knowledge base with another user"),
        ("revoke", cmd_revoke, "stop sharing a knowledge base with a user"),
    ):
        parser = sub.add_parser(name, parents=[user], help=verb, description=f"{verb} (--user must read it)")
        parser.set_defaults(handler=handler)
        parser.add_argument("kb", metavar="KB", help="knowledge base name")
        parser.add_argument("reader", metavar="USER", help="the user to share it with (or take it from)")

    kb = sub.add_parser("kb", help="knowledge bases: list", description="knowledge bases the user can read")
    kb_sub = kb.add_subparsers(dest="kb_command", required=True, metavar="COMMAND")
    listing = kb_sub.add_parser("list", parents=[user], help="the knowledge bases --user can read")
    listing.set_defaults(handler=cmd_kb_list)
    listing.add_argument("--json", action="store_true", help="print machine-readable JSON")
