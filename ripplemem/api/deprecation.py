"""The deprecated flat names of the facade: each is kept one release as an alias that warns, naming
the new spelling, and then does exactly what the new spelling does."""

from __future__ import annotations

import functools
from typing import Any

from ripplemem.core.deprecation import warn_renamed


def warn_deprecated(old: str, new: str, *, stacklevel: int = 3) -> None:
    """Warn that ``RippleMem.<old>`` is deprecated in favour of ``new``; ``stacklevel`` as for
    warnings.warn, counted from here (3: the caller of the function that calls this)."""
    warn_renamed(f"RippleMem{old}", new, stacklevel=stacklevel + 1)


class Moved:
    """A flat method that moved into a namespace: ``neighbors = Moved("graph")`` makes
    ``mem.neighbors(...)`` warn and call ``mem.graph.neighbors(...)`` (``name`` when it was renamed)."""

    def __init__(self, namespace: str, name: str | None = None) -> None:
        self.namespace = namespace
        self.name = name
        self.old = ""

    def __set_name__(self, owner: type, old: str) -> None:
        self.old = old
        self.name = self.name or old
        self.__doc__ = f"Deprecated (removed in the next release): use {self.new}."

    @property
    def new(self) -> str:
        """The new spelling, as the warning names it."""
        return f"mem.{self.namespace}.{self.name}()"

    def __get__(self, handle: Any, owner: type | None = None) -> Any:
        if handle is None:
            return self
        target = getattr(getattr(handle, self.namespace), self.name or self.old)

        @functools.wraps(target)
        def alias(*args: Any, **kwargs: Any) -> Any:
            warn_deprecated(f".{self.old}()", self.new)
            return target(*args, **kwargs)

        return alias
