"""The learning report (docs/design-notes.md#analyses), in its JSON shape (summary, learning_analysis
with strengths, weaknesses and knowledge_graph, knowledge_gaps, review_suggestions, next_steps),
computed from the user's episodic history, their graph and the coverage of the documents they study;
a chat model may phrase the overview and next steps, the numbers always come from the data."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from ripplemem.analysis.coverage import Topic, document_topics, measure_coverage, memory_vectors
from ripplemem.analysis.graph_snapshot import GraphSnapshot, load_graph
from ripplemem.analysis.learning_stats import (
    SECONDS_PER_DAY,
    ConceptStats,
    activity_of,
    central_concepts,
    concept_stats,
    study_minutes,
)
from ripplemem.analysis.report_phrasing import phrase_report
from ripplemem.engine import knowledge_bases as kbs
from ripplemem.engine.engine import Engine
from ripplemem.store.queries.analysis import MemoryRow

MAX_ITEMS = 5
# ours: below this estimated retention a concept is worth reviewing; urgency bands below.
REVIEW_BELOW = 0.8
URGENCY = ((0.3, "high"), (0.6, "medium"), (REVIEW_BELOW, "low"))


def build_learning_report(
    engine: Engine, user_id: str, *, llm: Any = None, knowledge_base: str | None = None
) -> dict[str, Any]:
    """The report of one user (see the module docstring); `knowledge_base` limits coverage to one base."""
    now = engine.now()
    view = load_graph(engine.store, user_id)
    activities = {m.id: activity_of(m) for m in view.memories.values()}
    learning = [
        m
        for m in view.memories.values()
        if activities[m.id] != "document" and not (m.source or "").startswith("sensor:")
    ]
    topics, basis = _coverage(engine, user_id, knowledge_base, view, learning)
    concepts = concept_stats(view, learning, activities)
    minutes, time_basis = study_minutes(learning)
    edges, central = central_concepts(view)
    when = datetime.fromtimestamp(now, tz=timezone.utc)
    report: dict[str, Any] = {
        "report_id": f"report_{when:%Y%m%d}_{user_id}",
        "generated_at": when.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "summary": {
            "total_study_time": f"{minutes / 60:.1f} hours",
            "documents_studied": len({t.source for t in topics if t.covered}),
            "questions_asked": sum(activities[m.id] == "question" for m in learning),
            "notes_created": sum(activities[m.id] == "note" for m in learning),
        },
        "learning_analysis": {
            "strengths": [c.name for c in _strengths(concepts)],
            "weaknesses": [c.name for c in _weaknesses(concepts)],
            "knowledge_graph": {"nodes": len(view.entities), "edges": edges, "central_concepts": central},
        },
        "knowledge_gaps": _gaps(topics, concepts),
        "review_suggestions": _reviews(concepts, now),
        "next_steps": [],
        "basis": {
            "study_time": time_basis,
            "coverage": basis,
            "topics": len(topics),
            "topics_covered": sum(t.covered for t in topics),
            "forgetting_curve": "Ebbinghaus retention exp(-days / stability), stability 2 days "
            "doubling with each review",
        },
    }
    report["next_steps"] = _next_steps(report, view, concepts)
    report["overview"] = _overview(report)
    report["phrasing"] = {"by": "data"}
    if llm is not None:
        sample = " ".join(m.content for m in learning[:20])
        phrased, error = phrase_report(llm, report, sample)
        if phrased is not None:
            report.update(phrased)
            report["phrasing"] = {"by": "llm"}
        else:
            report["phrasing"] = {"by": "data", "error": error}
    return report


def _coverage(
    engine: Engine, user_id: str, knowledge_base: str | None, view: GraphSnapshot, learning: list[MemoryRow]
) -> tuple[list[Topic], str]:
    """The document topics and whether the learning reached them, and what they were taken from."""
    if knowledge_base is not None:
        kbs.require_reader(engine, knowledge_base, user_id)
        bases: tuple[str, ...] = (knowledge_base,)
    else:
        bases = kbs.readable(engine, user_id)
    scopes = [(kbs.kb_scope(kb), f"knowledge base '{kb}'") for kb in bases]
    if not scopes:
        scopes = [(user_id, "the user's own document memories (no knowledge base is shared with them)")]
    vectors = memory_vectors(engine.store, user_id, {m.id for m in learning})
    topics: list[Topic] = []
    for scope_id, _ in scopes:
        found = document_topics(engine.store, scope_id)
        measure_coverage(engine.store, scope_id, found, vectors)
        topics.extend(found)
    return topics, ", ".join(label for _, label in scopes)


def _strengths(concepts: list[ConceptStats]) -> list[ConceptStats]:
    """Concepts studied in depth (three or more memories) without contradictions, deepest first."""
    return [c for c in concepts if len(c.memories) >= 3 and not c.contradicted][:MAX_ITEMS]


def _weakness_reason(concept: ConceptStats) -> str | None:
    if concept.contradicted:
        return "your notes about it contradict each other"
    if concept.questions and not concept.notes:
        return f"asked about {concept.questions} time(s) but no notes taken"
    if concept.depth == 1:
        return "studied once, never revisited"
    return None


def _weaknesses(concepts: list[ConceptStats]) -> list[ConceptStats]:
    """Misunderstood concepts first, then ones only asked about, then ones met once."""
    weak = [c for c in concepts if _weakness_reason(c) is not None]
    order = {"your": 0, "asked": 1, "studied": 2}
    return sorted(weak, key=lambda c: order[(_weakness_reason(c) or "studied").split()[0]])[:MAX_ITEMS]


def _gaps(topics: list[Topic], concepts: list[ConceptStats]) -> list[dict[str, Any]]:
    """Document topics the learning never reached, and misunderstood or shallow concepts."""
    studied_sources = {t.source for t in topics if t.covered}
    gaps = []
    for topic in topics:
        if topic.covered:
            continue
        recommendation = (
            ("Study: " + ", ".join(topic.subtopics))
            if topic.subtopics
            else f"Study the section '{topic.name}' of {topic.source}"
        )
        gaps.append(
            {
                "topic": topic.name,
                "reason": "never asked about or took notes on it",
                "priority": "high" if topic.source in studied_sources else "medium",
                "recommendation": recommendation,
            }
        )
    for concept in _weaknesses(concepts):
        reason = _weakness_reason(concept) or ""
        misunderstood = concept.contradicted
        gaps.append(
            {
                "topic": concept.name,
                "reason": reason,
                "priority": "high" if misunderstood else "medium",
                "recommendation": f"Re-read {concept.name} and settle which statement is right"
                if misunderstood
                else f"Go deeper into {concept.name}: take notes and test yourself",
            }
        )
    return sorted(gaps, key=lambda g: g["priority"] != "high")[: 2 * MAX_ITEMS]


def _ago(days: float) -> str:
    whole = round(days)
    return "today" if whole == 0 else "1 day ago" if whole == 1 else f"{whole} days ago"


def _reviews(concepts: list[ConceptStats], now: float) -> list[dict[str, Any]]:
    """Concepts whose estimated retention fell below REVIEW_BELOW, most urgent (least retained,
    most important) first: a forgetting curve weighted by importance."""
    due = []
    for concept in concepts:
        retention = concept.retention(now)
        if retention >= REVIEW_BELOW:
            continue
        days = (now - concept.last_studied) / SECONDS_PER_DAY
        reason = (
            f"learned {_ago(days)}, not reviewed"
            if concept.reviews == 0
            else f"last studied {_ago(days)}, {concept.reviews} review(s) since first learned"
        )
        urgency = next(label for bound, label in URGENCY if retention < bound)
        priority = (1 - retention) * (0.5 + concept.importance)
        due.append(
            (
                priority,
                {
                    "topic": concept.name,
                    "reason": reason,
                    "urgency": urgency,
                    "retention": round(retention, 2),
                },
            )
        )
    return [item for _, item in sorted(due, key=lambda d: -d[0])][:MAX_ITEMS]


def _next_steps(report: dict[str, Any], view: GraphSnapshot, concepts: list[ConceptStats]) -> list[str]:
    """Data-only next steps: close the high-priority gaps, review the most urgent, explore neighbours."""
    steps = [gap["recommendation"] for gap in report["knowledge_gaps"] if gap["priority"] == "high"][:2]
    steps += [
        f"Review {r['topic']} (estimated retention {r['retention']:.0%})"
        for r in report["review_suggestions"][:2]
    ]
    studied = {c.entity_id for c in concepts}
    for concept in _strengths(concepts):
        linked = [
            e.dst if e.src == concept.entity_id else e.src
            for e in view.relations
            if concept.entity_id in (e.src, e.dst)
        ]
        new = [view.name(n) for n in linked if n not in studied]
        if new:
            steps.append(f"Explore {new[0]}, linked to {concept.name}")
            break
    return steps[:MAX_ITEMS] or ["Keep studying: no gaps or reviews are due"]


def _overview(report: dict[str, Any]) -> str:
    """A few sentences from the numbers alone."""
    summary, analysis = report["summary"], report["learning_analysis"]
    text = (
        f"You studied for {summary['total_study_time']}, asked {summary['questions_asked']} questions "
        f"and wrote {summary['notes_created']} notes, touching {summary['documents_studied']} "
        "document(s)."
    )
    if analysis["strengths"]:
        text += f" Strongest: {', '.join(analysis['strengths'][:3])}."
    if analysis["weaknesses"]:
        text += f" Needs work: {', '.join(analysis['weaknesses'][:3])}."
    uncovered = [g["topic"] for g in report["knowledge_gaps"] if g["reason"].startswith("never")]
    if uncovered:
        text += f" Not yet covered: {', '.join(uncovered[:3])}."
    return text
