"""The one deprecation warning: a spelling kept for one release names its replacement."""

from __future__ import annotations

import warnings


def warn_renamed(old: str, new: str, *, stacklevel: int = 3) -> None:
    """Warn that the spelling ``old`` is deprecated in favour of ``new``; ``stacklevel`` as for
    warnings.warn, counted from here (3: the caller of the function that calls this)."""
    warnings.warn(
        f"{old} is deprecated and will be removed in the next release; use {new}",
        DeprecationWarning,
        stacklevel=stacklevel,
    )
