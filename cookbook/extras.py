"""What a recipe does when the extra it needs is not installed: stop with the pip command for it."""

from __future__ import annotations

from typing import NoReturn


def missing_extra(extra: str, error: ImportError) -> NoReturn:
    """Stop the recipe, naming the missing package and `pip install 'ripplemem[<extra>]'`."""
    missing = error.name or str(error)
    raise SystemExit(
        f"This recipe needs the {extra!r} extra ({missing} is not installed): "
        f"pip install 'ripplemem[{extra}]'"
    )
