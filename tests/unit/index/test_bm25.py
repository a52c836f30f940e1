"""The in-memory BM25 index on its own: ranking, stems, possessives, and exact results after adds,
deletes and compaction."""

from __future__ import annotations

import random

from ripplemem.index.bm25 import KeywordIndex, index_terms, query_terms

DOCS = {
    "a": "Caroline went running by the lake on Sunday",
    "b": "Melanie painted a sunrise over the lake",
    "c": "Caroline adopted a dog from the shelter",
    "d": "The shelter runs an adoption day every month",
    "e": "We talked about pottery classes and painting",
}


def _fresh(docs: dict[str, str]) -> KeywordIndex:
    index = KeywordIndex()
    index.add((key, index_terms(text)) for key, text in docs.items())
    return index


def test_ranks_rare_terms_above_common_ones_and_matches_stems() -> None:
    index = _fresh(DOCS)
    hits = index.search(query_terms("Did Caroline run by the lake?"), 5)
    assert hits[0][0] == "a"  # caroline + run(ning) + lake
    assert {key for key, _ in hits} == {"a", "b", "c", "d"}  # 'runs' stems to 'run' as well
    assert [score for _, score in hits] == sorted((score for _, score in hits), reverse=True)
    assert index.search(query_terms("the of and"), 5) == []


def test_results_after_deletes_and_replacements_equal_a_fresh_index() -> None:
    index = _fresh(DOCS)
    index.remove(["c"])
    index.add([("b", index_terms("Melanie adopted a cat from the shelter"))])
    expected = dict(DOCS, b="Melanie adopted a cat from the shelter")
    del expected["c"]
    fresh = _fresh(expected)
    for query in ["adopted from the shelter", "lake", "Caroline", "painting pottery"]:
        got, want = index.search(query_terms(query), 10), fresh.search(query_terms(query), 10)
        assert [key for key, _ in got] == [key for key, _ in want]
        assert [round(s, 5) for _, s in got] == [round(s, 5) for _, s in want]
    assert len(index) == 4 and "c" not in index


def test_which_query_terms_each_memory_holds_comes_from_the_postings() -> None:
    index = _fresh(DOCS)
    index.add([("f", index_terms("Caroline painted the shelter door"))])  # pending, not folded
    terms = query_terms("Caroline painting at the shelter")
    held = index.holding(terms, ["a", "b", "f", "unknown"])
    assert held[:3] == [
        {t for t in terms if t in index_terms(DOCS["a"])},
        {t for t in terms if t in index_terms(DOCS["b"])},
        {t for t in terms if t in index_terms("Caroline painted the shelter door")},
    ]
    assert held[2] == set(terms) and held[0] == {"carolin"}
    assert held[3] is None  # not indexed here: the caller reads the text itself


def test_holding_agrees_with_the_texts_through_replacements_removals_and_compaction() -> None:
    """holding reads postings by binary search, which needs them in position order: after texts are
    replaced, removed (compaction included) and added again, it still says what each text holds."""
    rng = random.Random(5)
    words = ["tea", "green", "hike", "berlin", "lin", "train", "knee", "clinic", "june", "cat"]
    texts = {f"m{i}": " ".join(rng.sample(words, 4)) for i in range(1500)}
    index = _fresh(texts)
    for step in range(6):
        changed = {f"m{rng.randrange(2000)}": " ".join(rng.sample(words, 3)) for _ in range(300)}
        index.add([(key, index_terms(text)) for key, text in changed.items()])  # replaces or adds
        texts.update(changed)
        gone = rng.sample(sorted(texts), 700 if step == 2 else 50)  # step 2 triggers compaction
        index.remove(gone)
        for key in gone:
            texts.pop(key)
        terms = query_terms("green tea on the train to Berlin")
        sample = rng.sample(sorted(texts), 60)
        assert index.holding(terms, sample) == [
            {t for t in terms if t in index_terms(texts[k])} for k in sample
        ]


def test_compaction_keeps_every_live_posting() -> None:
    docs = {f"m{i}": f"note {i} about topic{i % 7} and shared words" for i in range(3000)}
    index = _fresh(docs)
    index.remove([f"m{i}" for i in range(0, 3000, 2)])  # half dead: triggers compaction
    for key in [f"m{i}" for i in range(0, 3000, 2)]:
        docs.pop(key)
    fresh = _fresh(docs)
    for query in ["topic3", "note 1501", "shared"]:
        got, want = index.search(query_terms(query), 20), fresh.search(query_terms(query), 20)
        assert [round(s, 5) for _, s in got] == [round(s, 5) for _, s in want]
        assert all(key in docs for key, _ in got)


def test_possessives_meet_the_plain_name() -> None:
    index = _fresh({"a": "Calvin bought a Ferrari", "b": "The car of my sister"})
    assert {key for key, _ in index.search(query_terms("What is Calvin's car?"), 5)} == {"a", "b"}
    assert index.search(query_terms("Calvin's"), 5)[0][0] == "a"
