"""The progress bar every long job draws on stderr (ingest, import, add_many, reembed, maintain)."""

from __future__ import annotations

import os
import sys

from tqdm import tqdm


def progress_bar(total: int, unit: str) -> tqdm:
    """A tqdm bar on stderr counting ``unit``s, following the terminal's width.

    On a terminal that reports no height (a pseudo-terminal opened without a size, as ``script``,
    ``docker exec -t`` and many CI runners give) tqdm hides every bar, so there it gets a fixed
    height of 24 lines instead.
    """
    try:
        sized = os.get_terminal_size(sys.stderr.fileno()).lines > 0
    except (OSError, ValueError, AttributeError):
        sized = True  # not a terminal (a pipe, a file, a test's capture): tqdm writes plain updates
    if sized:
        return tqdm(total=total, unit=unit, file=sys.stderr, dynamic_ncols=True)
    return tqdm(total=total, unit=unit, file=sys.stderr, nrows=24)
