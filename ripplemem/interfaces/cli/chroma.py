"""The command line's Chroma server options: --chroma-url and --chroma-header (or the environment)."""

from __future__ import annotations

import argparse
import json
import os
from typing import Any

from ripplemem.api.options import StoreOptions
from ripplemem.errors import InvalidInputError

HEADERS_ENV = "RIPPLEMEM_CHROMA_HEADERS"


def _header(text: str) -> tuple[str, str]:
    name, colon, value = text.partition(":")
    if not colon or not name.strip() or not value.strip():
        raise argparse.ArgumentTypeError(
            f"expected 'NAME: VALUE' such as 'Authorization: Bearer TOKEN', got {text!r}"
        )
    return name.strip(), value.strip()


def chroma_option() -> argparse.ArgumentParser:
    """A parent parser with --chroma-url and --chroma-header."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--chroma-url",
        metavar="URL",
        default=os.environ.get("RIPPLEMEM_CHROMA_URL") or None,
        help="keep vectors on this Chroma server, e.g. http://localhost:8000 "
        "(default: $RIPPLEMEM_CHROMA_URL; none: the embedded index)",
    )
    common.add_argument(
        "--chroma-header",
        metavar="'NAME: VALUE'",
        type=_header,
        action="append",
        dest="chroma_headers",
        default=None,
        help="a header sent with every request to the Chroma server, e.g. "
        "'Authorization: Bearer TOKEN'; repeatable (default: $RIPPLEMEM_CHROMA_HEADERS, "
        "a JSON object; it keeps tokens out of the process list)",
    )
    return common


def chroma_server(args: argparse.Namespace) -> dict[str, Any]:
    """``chroma_url`` and ``chroma_headers`` for RippleMem from the options or the environment."""
    headers: Any = dict(args.chroma_headers) if args.chroma_headers else None
    if headers is None and os.environ.get(HEADERS_ENV):
        try:
            headers = json.loads(os.environ[HEADERS_ENV])
        except json.JSONDecodeError as exc:
            raise InvalidInputError(
                f'${HEADERS_ENV} must be a JSON object such as {{"Authorization": "Bearer TOKEN"}}: {exc}'
            ) from exc
    return {"chroma_url": args.chroma_url, "chroma_headers": headers}


def server_store(args: argparse.Namespace) -> StoreOptions:
    """The store options of RippleMem(store=...): the Chroma server the options or the environment
    name, or the embedded index without one."""
    return StoreOptions(**chroma_server(args))
