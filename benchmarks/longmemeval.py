"""LongMemEval_S session and turn evidence recall per question type for each recall mode.

One fresh in-memory store per question; every haystack turn becomes one memory ("{role}: {content}",
its session as session_id, the session date as event time, in turn order), and the question is
recalled at its own date. Session ids and has_answer are never indexed: they live in a side map
from memory id to (session, turn). Abstention questions (ids ending in _abs) are skipped.

Metrics, over the ranked turn hits (k=50, enough to reach 5 distinct sessions):
  session all@5   every evidence session is among the first 5 distinct sessions of the hits
                  (the official recall_all@5 of evaluate_retrieval_turn2session)
  session any@5   at least one is (the official recall_any@5)
  turn R@10       |has_answer turns in the first 10 hits| / |has_answer turns|; the official
                  harness reports only binary any/all at turn level, this is the fractional form

Data: ../shared/bench/longmemeval/longmemeval_s_dev.jsonl.gz, or the original LongMemEval JSON
(longmemeval_s_cleaned.json, a list) or any .jsonl(.gz) of the same objects.

    python benchmarks/longmemeval.py [--data FILE] [--limit N] [--modes ...] [--cache DIR]
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from embed_cache import DEFAULT_CACHE, cached_embedder

from ripplemem import RippleMem
from ripplemem.embedding.embedders import Embedder

DEFAULT_DATA = (
    Path(__file__).resolve().parents[1].parent
    / "shared"
    / "bench"
    / "longmemeval"
    / "longmemeval_s_dev.jsonl.gz"
)
MODES = ["keyword", "dense", "hybrid", "ripple"]
METRICS = ("session all@5", "session any@5", "turn R@10")
HITS = 50

Scores = dict[str, dict[str, dict[str, list[float]]]]  # mode -> question type -> metric -> values


def load_questions(path: str | Path) -> list[dict[str, Any]]:
    """The questions of a .json list or a .jsonl / .jsonl.gz file."""
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        text = handle.read()
    if text.lstrip().startswith("["):
        return list(json.loads(text))
    return [json.loads(line) for line in text.split("\n") if line.strip()]


def parse_date(text: str) -> datetime:
    """LongMemEval dates look like '2023/04/10 (Mon) 17:50'."""
    day, _, clock = text.split()
    return datetime.strptime(f"{day} {clock}", "%Y/%m/%d %H:%M")


def turn_items(question: dict[str, Any]) -> tuple[list[dict[str, Any]], list[tuple[str, int, bool]]]:
    """One add_many item per haystack turn, and (session, turn index, has_answer) per item."""
    items: list[dict[str, Any]] = []
    where: list[tuple[str, int, bool]] = []
    sessions = zip(
        question["haystack_session_ids"],
        question["haystack_dates"],
        question["haystack_sessions"],
        strict=True,
    )
    for session, date, turns in sessions:
        when = parse_date(date)
        for number, turn in enumerate(turns):
            items.append(
                {"content": f"{turn['role']}: {turn['content']}", "session_id": session, "event_time": when}
            )
            where.append((session, number, bool(turn.get("has_answer"))))
    return items, where


def measure(
    ranked: list[list[tuple[str, int, bool]]], gold_sessions: set[str], gold_turns: set[tuple[str, int]]
) -> dict[str, float]:
    """The three metrics for one ranked list of hits (each hit: the turns it stands for)."""
    sessions: list[str] = []
    for turns in ranked:
        for session, _, _ in turns:
            if session not in sessions and len(sessions) < 5:
                sessions.append(session)
    top_turns = {(session, number) for turns in ranked[:10] for session, number, _ in turns}
    return {
        "session all@5": float(gold_sessions <= set(sessions)),
        "session any@5": float(bool(gold_sessions & set(sessions))),
        "turn R@10": len(gold_turns & top_turns) / len(gold_turns) if gold_turns else 0.0,
    }


def evaluate_question(
    question: dict[str, Any],
    modes: list[str],
    embedder: Embedder,
    scores: Scores,
    latency: dict[str, list[float]],
) -> None:
    """Build the question's store, recall in every mode, append its metrics and latencies."""
    items, where = turn_items(question)
    gold_sessions = set(question["answer_session_ids"])
    gold_turns = {(session, number) for session, number, answer in where if answer}
    now = parse_date(question["question_date"])
    with RippleMem(path=None, user_id="longmemeval", embedder=embedder) as mem:
        side: dict[str, list[tuple[str, int, bool]]] = defaultdict(list)
        for memory, turn in zip(mem.add_many(items), where, strict=True):
            side[memory.id].append(turn)
        for mode in modes:
            started = time.perf_counter()
            result = mem.recall(question["question"], k=HITS, mode=mode, now=now, record_access=False)
            latency[mode].append(time.perf_counter() - started)
            values = measure([side[hit.memory.id] for hit in result.hits], gold_sessions, gold_turns)
            for metric, value in values.items():
                scores[mode][question["question_type"]][metric].append(value)
                scores[mode]["overall"][metric].append(value)


def evaluate(
    questions: list[dict[str, Any]],
    modes: list[str],
    embedder: Embedder,
    report: Callable[[int, int], None] | None = None,
) -> tuple[Scores, dict[str, list[float]]]:
    """Per mode, per question type (and overall), per metric: every non-abstention question's value."""
    scores: Scores = {mode: defaultdict(lambda: defaultdict(list)) for mode in modes}
    latency: dict[str, list[float]] = defaultdict(list)
    asked = [q for q in questions if not str(q["question_id"]).endswith("_abs")]
    for number, question in enumerate(asked, 1):
        evaluate_question(question, modes, embedder, scores, latency)
        if report:
            report(number, len(asked))
    return scores, latency


def stderr_progress(name: str) -> Callable[[int, int], None]:
    """A progress reporter writing 'name: done/total, elapsed' lines to stderr."""
    started = time.perf_counter()

    def report(done: int, total: int) -> None:
        print(f"{name}: {done}/{total}, {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)

    return report


def print_table(scores: Scores, latency: dict[str, list[float]]) -> None:
    """A markdown table: one row per question type and metric, one column per mode."""
    modes = list(scores)
    types = ["overall", *sorted(t for t in scores[modes[0]] if t != "overall")]
    print("| type | metric | n | " + " | ".join(modes) + " |")
    print("|---|---|---:|" + "---:|" * len(modes))
    for qtype in types:
        for metric in METRICS:
            values = [scores[mode][qtype][metric] for mode in modes]
            print(
                f"| {qtype} | {metric} | {len(values[0])} | "
                + " | ".join(f"{statistics.fmean(v):.3f}" for v in values)
                + " |"
            )
    print(
        "| p50 recall ms | | | "
        + " | ".join(f"{statistics.median(latency[m]) * 1000:.1f}" for m in modes)
        + " |"
    )


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the table."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("data", nargs="?", default=None, help="a LongMemEval file (or use --data)")
    parser.add_argument("--data", dest="data_option", default=str(DEFAULT_DATA))
    parser.add_argument("--modes", nargs="+", default=MODES)
    parser.add_argument("--embedder", default=None)
    parser.add_argument("--limit", type=int, default=None, help="only the first N questions")
    parser.add_argument("--cache", default=str(DEFAULT_CACHE), help="embedding cache folder")
    args = parser.parse_args(argv)
    path = Path(args.data or args.data_option)
    if not path.exists():
        print(f"no LongMemEval file at {path}", file=sys.stderr)
        return 2
    questions = load_questions(path)[: args.limit]
    embedder = cached_embedder(args.embedder, args.cache)
    started = time.perf_counter()
    scores, latency = evaluate(questions, args.modes, embedder, stderr_progress("longmemeval"))
    print(
        f"LongMemEval: {len(latency[args.modes[0]])} questions of {path.name}, embedder "
        f"{embedder.model_id}, {time.perf_counter() - started:.0f} s "
        f"({embedder.embedded} texts embedded, the rest cached)\n"
    )
    print_table(scores, latency)
    return 0


if __name__ == "__main__":
    sys.exit(main())
