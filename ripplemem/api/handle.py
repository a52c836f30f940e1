"""What every part of the RippleMem facade shares: the engine behind the handle and its scope, and
the base of the namespaces (``mem.graph``, ``mem.kb``, ...) that group the less common methods."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ripplemem.core.types import Scope
from ripplemem.errors import ClosedError
from ripplemem.store.tables.memories import MemoryFilter

if TYPE_CHECKING:
    from ripplemem.config import Settings
    from ripplemem.engine.engine import Engine


class HandleState:
    """The handle's engine, scope and chat model, which RippleMem sets, as the facade's parts read them."""

    _shared_engine: Engine
    scope_info: Scope
    llm: Any  # any LangChain chat model (or None); ripplemem.llm.chat checks it where it is used

    @property
    def _engine(self) -> Engine:
        """The store behind this handle; after close() every use raises ClosedError."""
        if self._shared_engine.store.closed:
            raise ClosedError(
                "this RippleMem handle is closed (close() was called on it or on a handle "
                "sharing its store); open the store again with RippleMem(path, ...)"
            )
        return self._shared_engine

    @property
    def user_id(self) -> str:
        """The user every read and write of this handle is scoped to."""
        return self.scope_info.user_id

    @property
    def path(self) -> str | None:
        """The store directory, or None for an in-memory store (still known after close())."""
        return self._shared_engine.path

    @property
    def settings(self) -> Settings:
        """The retrieval and storage settings of the store."""
        return self._shared_engine.settings

    def _filter(self, **narrowing: Any) -> MemoryFilter:
        base = MemoryFilter(user_id=self.user_id, agent_id=self.scope_info.agent_id)
        return replace(base, **{k: v for k, v in narrowing.items() if v is not None and v != ()})


class Namespace:
    """A group of a handle's methods (``mem.graph``, ``mem.kb``, ...): it works on the handle's store
    and scope, and a closed handle's namespaces are closed too."""

    def __init__(self, handle: HandleState) -> None:
        self._handle = handle

    @property
    def _engine(self) -> Engine:
        return self._handle._engine

    @property
    def scope_info(self) -> Scope:
        """The scope of the handle this namespace belongs to."""
        return self._handle.scope_info

    @property
    def user_id(self) -> str:
        """The user of the handle this namespace belongs to."""
        return self._handle.user_id

    @property
    def llm(self) -> Any:
        """The handle's chat model (``RippleMem(llm=...)``), or None."""
        return self._handle.llm

    def __repr__(self) -> str:
        return f"<{type(self).__name__} of {self._handle!r}>"
