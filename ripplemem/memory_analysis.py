"""RippleMem's analysis: knowledge-graph quality and the learning report (mixed into the facade)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ripplemem.engine import Engine
    from ripplemem.types import Scope


class AnalysisMethods:
    """The analysis methods of a RippleMem handle."""

    _engine: Engine
    scope_info: Scope
    user_id: str
