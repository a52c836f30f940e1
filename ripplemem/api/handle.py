"""What every part of the RippleMem facade shares: the engine behind the handle and its scope."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ripplemem.types import Scope

if TYPE_CHECKING:
    from ripplemem.engine.engine import Engine


class HandleState:
    """The handle's engine and scope, which RippleMem sets, as the facade's mixins read them."""

    _engine: Engine
    scope_info: Scope

    @property
    def user_id(self) -> str:
        """The user every read and write of this handle is scoped to."""
        return self.scope_info.user_id
