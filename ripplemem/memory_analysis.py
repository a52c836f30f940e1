"""RippleMem's analysis: knowledge-graph quality and the learning report (mixed into the facade)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ripplemem.analysis.graph_quality import GraphQualityReport, assess_graph
from ripplemem.analysis.graph_view import load_graph
from ripplemem.errors import InvalidInputError, InvalidTypeError

if TYPE_CHECKING:
    from ripplemem.engine import Engine
    from ripplemem.types import Scope


class AnalysisMethods:
    """The analysis methods of a RippleMem handle."""

    _engine: Engine
    scope_info: Scope
    user_id: str

    def graph_quality(self, *, min_confidence: float = 0.5) -> GraphQualityReport:
        """How sound this user's knowledge graph is (seed 000 §13): completeness (isolated nodes,
        density), consistency (type conflicts, relation directions), redundancy (duplicate relations,
        alias clusters not merged), low-confidence edges (below ``min_confidence``) and coverage, each
        scored in [0, 1], with every issue found named by the seed's error type and its fix."""
        if isinstance(min_confidence, bool) or not isinstance(min_confidence, int | float):
            raise InvalidTypeError(f"min_confidence must be a number in [0, 1], "
                                   f"got {type(min_confidence).__name__}")
        if not 0.0 <= min_confidence <= 1.0:
            raise InvalidInputError(f"min_confidence must be in [0, 1], got {min_confidence}")
        view = load_graph(self._engine.store, self.user_id)
        return assess_graph(view, min_confidence=float(min_confidence))
