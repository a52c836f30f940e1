"""MuSiQue supporting-passage recall@2 and @5 per recall mode, with a rules-only graph and with
the provided gpt-3.5 triples passed in as relations, in one run.

Every corpus passage becomes one document memory ("title\\ntext"). For each question, recall@k is
|supporting ∩ top-k| / |supporting|. Data: ../shared/bench/musique (questions.json, corpus.json,
openie_gpt35.json) or another folder with the same files.

    python benchmarks/musique.py [--data DIR] [--modes keyword dense hybrid ripple] [--cache DIR]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from embed_cache import DEFAULT_CACHE, cached_embedder

from ripplemem import RippleMem

DEFAULT_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "bench" / "musique"


def load(folder: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, list[list[str]]]]:
    """Questions, corpus passages and the triples per passage text."""
    questions = json.loads((folder / "questions.json").read_text())
    corpus = json.loads((folder / "corpus.json").read_text())
    openie = json.loads((folder / "openie_gpt35.json").read_text())
    triples = {doc["title"] + "\n" + doc["text"]: doc.get("extracted_triples", []) for doc in openie["docs"]}
    return questions, corpus, triples


def _relations(raw: list[list[str]]) -> list[tuple[str, str, str]]:
    """Well-formed (subject, predicate, object) triples; the extractor left a few malformed ones."""
    return [
        (s, p, o)
        for s, p, o in (t for t in raw if len(t) == 3)
        if all(isinstance(x, str) and x.strip() for x in (s, p, o)) and any(ch.isalnum() for ch in p)
    ]


def build(mem: RippleMem, corpus: list[dict[str, Any]], triples: dict[str, list[list[str]]] | None) -> None:
    """One document memory per passage, with relations when triples are given."""
    items = []
    for number, passage in enumerate(corpus):
        text = passage["title"] + "\n" + passage["text"]
        item: dict[str, Any] = {"content": text, "type": "document", "metadata": {"passage": number}}
        if triples is not None:
            item["relations"] = _relations(triples.get(text, []))
        items.append(item)
    mem.add_many(items)


def evaluate(
    mem: RippleMem, questions: list[dict[str, Any]], corpus: list[dict[str, Any]], modes: list[str]
) -> tuple[dict[str, dict[int, float]], dict[str, list[float]]]:
    """Mean recall@2 and @5 of supporting passages per mode, and per-mode recall latencies."""
    position = {(p["title"], p["text"]): i for i, p in enumerate(corpus)}
    scores: dict[str, dict[int, list[float]]] = {mode: {2: [], 5: []} for mode in modes}
    latency: dict[str, list[float]] = {mode: [] for mode in modes}
    for question in questions:
        gold = {
            position[(p["title"], p["paragraph_text"])]
            for p in question["paragraphs"]
            if p["is_supporting"] and (p["title"], p["paragraph_text"]) in position
        }
        if not gold:
            continue
        for mode in modes:
            started = time.perf_counter()
            result = mem.recall(question["question"], k=5, mode=mode, record_access=False)
            latency[mode].append(time.perf_counter() - started)
            ranked = [hit.memory.metadata["passage"] for hit in result.hits]
            for k in (2, 5):
                scores[mode][k].append(len(gold & set(ranked[:k])) / len(gold))
    means = {mode: {k: statistics.fmean(v) for k, v in by_k.items()} for mode, by_k in scores.items()}
    return means, latency


def main(argv: list[str] | None = None) -> int:
    """Build both stores, evaluate every mode, print one table."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", default=str(DEFAULT_DATA))
    parser.add_argument("--modes", nargs="+", default=["keyword", "dense", "hybrid", "ripple"])
    parser.add_argument("--embedder", default=None)
    parser.add_argument("--cache", default=str(DEFAULT_CACHE), help="embedding cache folder")
    args = parser.parse_args(argv)
    folder = Path(args.data)
    if not (folder / "questions.json").exists():
        print(f"no MuSiQue files in {folder}", file=sys.stderr)
        return 2
    questions, corpus, triples = load(folder)
    embedder = cached_embedder(args.embedder, args.cache)
    started = time.perf_counter()
    rows = []
    for graph, relations in (("rules only", None), ("rules + gpt-3.5 triples", triples)):
        with RippleMem(path=None, user_id="musique", embedder=embedder) as mem:
            build(mem, corpus, relations)
            means, latency = evaluate(mem, questions, corpus, args.modes)
            for mode, by_k in means.items():
                if graph == "rules only" or mode == "ripple":
                    rows.append(
                        (
                            mode if mode != "ripple" else f"ripple ({graph})",
                            by_k,
                            statistics.median(latency[mode]) * 1000,
                        )
                    )
    print(
        f"MuSiQue: {len(questions)} questions, {len(corpus)} passages, embedder {embedder.model_id}, "
        f"{time.perf_counter() - started:.0f} s\n"
    )
    print("| mode | R@2 | R@5 | p50 ms |\n|---|---|---|---|")
    for name, by_k, p50 in rows:
        print(f"| {name} | {by_k[2]:.3f} | {by_k[5]:.3f} | {p50:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
