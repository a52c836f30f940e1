"""graph_quality() on graphs built with known defects: each defect is found, named by the source's error
type (docs/design-notes.md#analyses), with a fix that points at the right nodes; a clean graph scores
higher; users are apart."""

from __future__ import annotations

import json

import pytest

from ripplemem import InvalidInputError, RippleMem


def _defective(mem: RippleMem) -> dict[str, str]:
    """Store memories whose graph has one defect of each kind; returns their memory ids by name."""
    ids = {
        "zanzibar": mem.add("Zanzibar is warm in February.").id,
        "kettle": mem.add("the kettle whistled twice before breakfast.").id,
    }
    mem.add("Bob moved to NYC.", relations=[("Bob", "lives_in", "NYC")])
    mem.add("Bob lives in New York City now.", relations=[("Bob", "lives_in", "New York City")])
    mem.add(
        "Tower Bridge is in London.",
        relations=[("Tower Bridge", "is_located_in", "London"), ("Tower Bridge", "located_in", "London")],
    )
    mem.add("Jordan: I'm home.")
    mem.add("We hiked along the “Jordan River”.")
    mem.add("Paris is the capital of France.", relations=[("Paris", "capital_of", "France")])
    mem.add(
        "France is the capital of Paris, the quiz bot claimed.",
        relations=[{"subject": "France", "predicate": "capital_of", "object": "Paris", "confidence": 0.4}],
    )
    mem.add(
        "The engine is part of the car.",
        relations=[
            ("Engine", "part_of", "Car"),
            ("Car", "part_of", "Fleet"),
            {"subject": "Fleet", "predicate": "part_of", "object": "Engine", "confidence": 0.6},
        ],
    )
    for text in (
        "I practised Python on the train.",
        "Python decorators are neat.",
        "I wrote a Python script for my taxes.",
    ):
        mem.add(text)
    mem.add("I debugged Python Code Review notes.")
    return ids


def test_each_known_defect_is_found_with_its_fix(mem: RippleMem) -> None:
    ids = _defective(mem)
    report = mem.analysis.graph_quality()

    isolated = {issue.nodes[0] for issue in report.of_kind("isolated_entity")}
    assert "Zanzibar" in isolated and "Bob" not in isolated and "Paris" not in isolated
    [lonely] = report.of_kind("isolated_memory")
    assert lonely.nodes == (ids["kettle"],) and "kettle whistled" in lonely.detail
    assert report.completeness["isolated_memories"] == 1
    assert report.completeness["isolation_ratio"] == pytest.approx(len(isolated) / report.entities)
    assert report.completeness["score"] == pytest.approx(1 - report.completeness["isolation_ratio"] * 0.5)

    [conflict] = report.of_kind("type_conflict")
    assert set(conflict.nodes) == {"Jordan", "Jordan River"} and "person" in conflict.detail
    assert conflict.error_type == "type conflict" and "multi-type label" in conflict.fix

    directions = report.of_kind("relation_direction")
    both_ways = next(i for i in directions if "both" in i.detail)
    assert set(both_ways.nodes) == {"Paris", "France"}
    assert "drop 'France' capital_of 'Paris' (confidence 0.40)" in both_ways.fix
    cycle = next(i for i in directions if "cycle" in i.detail)
    assert set(cycle.nodes) == {"Engine", "Car", "Fleet"} and "reverse 'Fleet' part_of 'Engine'" in cycle.fix
    assert all(i.error_type == "relation direction error" for i in directions)

    duplicates = report.of_kind("duplicate_relation")
    assert {frozenset(i.nodes) for i in duplicates} == {
        frozenset({"Bob", "NYC", "New York City"}),
        frozenset({"Tower Bridge", "London"}),
    }
    assert all("merge into" in i.fix and i.error_type == "redundant relation" for i in duplicates)
    assert report.redundancy["duplicate_relations"] == 2

    clusters = {frozenset(i.nodes) for i in report.of_kind("unmerged_aliases")}
    assert frozenset({"NYC", "New York City"}) in clusters

    [weak] = report.of_kind("low_confidence")
    assert weak.error_type == "spurious association" and "0.40 < 0.50" in weak.detail
    assert report.confidence["low_confidence_edges"] == 1

    [boundary] = report.of_kind("entity_boundary")
    assert boundary.nodes == ("Python Code Review", "Python") and "re-segment" in boundary.fix

    assert 0 < report.overall < 1  # type: ignore[operator]
    as_json = json.loads(json.dumps(report.as_dict()))
    assert as_json["consistency"]["type_conflicts"] == 2 and len(as_json["issues"]) == len(report.issues)


def test_a_clean_graph_scores_higher_and_has_no_defects(mem: RippleMem) -> None:
    mem.add("Marie Curie worked in Paris.", relations=[("Marie Curie", "worked_in", "Paris")])
    mem.add("Marie Curie won the Nobel Prize.", relations=[("Marie Curie", "won", "Nobel Prize")])
    mem.add(
        "Pierre Curie married Marie Curie.",
        relations=[
            ("Pierre Curie", "married_to", "Marie Curie"),
            ("Marie Curie", "married_to", "Pierre Curie"),
        ],
    )
    clean = mem.analysis.graph_quality()
    kinds = {issue.kind for issue in clean.issues}
    assert not kinds & {
        "relation_direction",
        "duplicate_relation",
        "type_conflict",
        "low_confidence",
        "isolated_entity",
        "isolated_memory",
    }
    assert clean.consistency["score"] == 1.0 and clean.coverage["memory_coverage"] == 1.0

    _defective(mem.scope("dora"))
    assert mem.scope("dora").analysis.graph_quality().overall < clean.overall  # type: ignore[operator]


def test_min_confidence_moves_the_threshold(mem: RippleMem) -> None:
    mem.add(
        "Ada might know Grace.",
        relations=[{"subject": "Ada", "predicate": "knows", "object": "Grace", "confidence": 0.7}],
    )
    assert mem.analysis.graph_quality().confidence["low_confidence_edges"] == 0
    assert mem.analysis.graph_quality(min_confidence=0.8).confidence["low_confidence_edges"] == 1
    with pytest.raises(InvalidInputError, match="min_confidence must be in"):
        mem.analysis.graph_quality(min_confidence=1.5)


def test_an_empty_graph_has_no_overall_score_and_users_are_apart(mem: RippleMem) -> None:
    empty = mem.analysis.graph_quality()
    assert empty.overall is None and empty.issues == [] and empty.entities == 0
    _defective(mem.scope("bob"))
    assert mem.analysis.graph_quality().issues == []
