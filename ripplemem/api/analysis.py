"""RippleMem's analyses (``mem.analysis``): knowledge-graph quality and the learning report."""

from __future__ import annotations

from typing import Any

from ripplemem.analysis.graph_quality import GraphQualityReport, assess_graph
from ripplemem.analysis.graph_snapshot import load_graph
from ripplemem.analysis.learning_report import build_learning_report
from ripplemem.api.handle import Namespace
from ripplemem.engine.knowledge_bases import check_kb_name
from ripplemem.errors import InvalidInputError, InvalidTypeError
from ripplemem.llm.chat import require_llm


class Analysis(Namespace):
    """``mem.analysis``: how sound the user's knowledge graph is, and their learning report."""

    def graph_quality(self, *, min_confidence: float = 0.5) -> GraphQualityReport:
        """How sound this user's knowledge graph is (docs/design-notes.md#analyses): completeness
        (isolated nodes, density), consistency (type conflicts, relation directions), redundancy
        (duplicate relations, alias clusters not merged), low-confidence edges (below
        ``min_confidence``) and coverage, each scored in [0, 1], with every issue found named by its
        error type and its fix."""
        if isinstance(min_confidence, bool) or not isinstance(min_confidence, int | float):
            raise InvalidTypeError(
                f"min_confidence must be a number in [0, 1], got {type(min_confidence).__name__}"
            )
        if not 0.0 <= min_confidence <= 1.0:
            raise InvalidInputError(f"min_confidence must be in [0, 1], got {min_confidence}")
        view = load_graph(self._engine.store, self.user_id)
        return assess_graph(view, min_confidence=float(min_confidence))

    def learning_report(self, *, llm: Any = None, knowledge_base: str | None = None) -> dict[str, Any]:
        """This user's learning report in its JSON shape: summary (study time, documents,
        questions, notes), learning_analysis (strengths, weaknesses, knowledge_graph), knowledge_gaps,
        review_suggestions (an Ebbinghaus forgetting curve over when each concept was last studied)
        and next_steps, plus overview, basis (how each part was measured) and phrasing.

        Every number comes from the data: the episodic history (a memory is a question, a note or
        study by ``metadata["activity"]``, else by its question mark or type; ``metadata["minutes"]``
        gives study time), the graph, and which sections of the documents the user can read
        (knowledge bases, or ``knowledge_base`` alone; without any, the user's own document
        memories) their learning reached. With ``llm`` (or the handle's model) a chat model writes
        the overview and next steps; an unusable reply keeps the data-only text and says why in
        ``report["phrasing"]["error"]``.
        """
        model = llm if llm is not None else self.llm
        if model is not None:
            require_llm(model, "learning_report phrasing")
        kb = None if knowledge_base is None else check_kb_name(knowledge_base)
        return build_learning_report(self._engine, self.user_id, llm=model, knowledge_base=kb)
