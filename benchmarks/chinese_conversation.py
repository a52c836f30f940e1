"""Chinese long-term chat recall: evidence turns R@5/R@10 per question type for each recall mode.

One user (林梅) and an assistant over 12 dated sessions (226 turns, chinese_conversation_data.py,
written for this benchmark). Every turn is one memory ("user: ..." / "assistant: ...", its session
as session_id, the session's start plus one minute a turn as event time), and 67 questions are
recalled the day after the last session, with record_access=False so no question changes the next.
Unlike chinese_recall.py, most questions do not reuse the words of their evidence:
  paraphrase   other words (有什么药我不能用？ for 我对青霉素过敏)
  multi-hop    two or three turns, often sessions apart
  temporal     什么时候 / 哪天 / 上个月: the dated turn
  update       the latest value only (the dose after the change, the new address)
  answer-turn  the user's answer to the assistant's question ("什么时候报到？" -> "八月一号。")
  mixed        English words in the question (App, Duolingo, blood pressure)
  literal      the evidence's own words
R@k = |evidence turns in the top k hits| / |evidence turns|.

    python benchmarks/chinese_conversation.py [--modes keyword dense hybrid ripple]
                                              [--embedder minilm|multilingual] [--cache DIR]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import defaultdict
from datetime import timedelta
from typing import Any

from chinese_conversation_data import QUESTION_TYPES, QUESTIONS, SESSIONS, Turn
from embed_cache import DEFAULT_CACHE, cached_embedder

from ripplemem import RippleMem
from ripplemem.embedding.embedders import Embedder

MODES = ["keyword", "dense", "hybrid", "ripple"]
ROLES = ("user: ", "assistant: ")
KS = (5, 10)
NOW = SESSIONS[-1][0] + timedelta(days=1)

Scores = dict[str, dict[str, dict[int, list[float]]]]  # mode -> question type -> k -> values


def session_turns(text: str) -> list[str]:
    """The turns of one session's text: a line per turn, indented lines continuing the turn above."""
    turns: list[str] = []
    for line in text.strip("\n").split("\n"):
        if line.startswith(" ") and turns:
            turns[-1] += line.strip()
        elif line.startswith(ROLES):
            turns.append(line)
        else:
            raise ValueError(f"line neither starts a turn nor continues one: {line!r}")
    for number, turn in enumerate(turns):
        if not turn.startswith(ROLES[number % 2]):
            raise ValueError(f"turn {number} should be the {ROLES[number % 2].strip()} turn: {turn!r}")
    return turns


def check_labels(sessions: list[list[str]]) -> None:
    """Refuse a question with no evidence, an evidence turn that does not exist, or an unknown type."""
    for qtype, question, evidence in QUESTIONS:
        if qtype not in QUESTION_TYPES:
            raise ValueError(f"{question!r}: unknown question type {qtype!r}")
        if not evidence:
            raise ValueError(f"{question!r}: no evidence turns")
        for session, turn in evidence:
            if not (1 <= session <= len(sessions) and 0 <= turn < len(sessions[session - 1])):
                raise ValueError(f"{question!r}: no turn {turn} in session {session}")


def chat_items() -> tuple[list[dict[str, Any]], list[Turn]]:
    """The add_many items of the whole chat, and the (session, turn) each item is."""
    sessions = [session_turns(text) for _, text in SESSIONS]
    check_labels(sessions)
    items: list[dict[str, Any]] = []
    where: list[Turn] = []
    for number, ((start, _), turns) in enumerate(zip(SESSIONS, sessions, strict=True), 1):
        for index, turn in enumerate(turns):
            items.append(
                {"content": turn, "session_id": f"s{number}", "event_time": start + timedelta(minutes=index)}
            )
            where.append((number, index))
    return items, where


def evaluate(embedder: Embedder, modes: list[str]) -> tuple[Scores, dict[str, list[float]]]:
    """Per mode, per question type (and overall), per k: every question's recall; per-mode latencies."""
    scores: Scores = {mode: defaultdict(lambda: defaultdict(list)) for mode in modes}
    latency: dict[str, list[float]] = defaultdict(list)
    items, where = chat_items()
    with RippleMem(path=None, user_id="zh-conversation", embedder=embedder) as mem:
        turn_of = {memory.id: turn for memory, turn in zip(mem.add_many(items), where, strict=True)}
        for qtype, question, evidence in QUESTIONS:
            for mode in modes:
                started = time.perf_counter()
                result = mem.recall(question, k=max(KS), mode=mode, now=NOW, record_access=False)
                latency[mode].append(time.perf_counter() - started)
                ranked = [turn_of.get(hit.memory.id) for hit in result.hits]
                for k in KS:
                    value = len(set(evidence) & set(ranked[:k])) / len(evidence)
                    scores[mode][qtype][k].append(value)
                    scores[mode]["overall"][k].append(value)
    return scores, latency


def print_table(scores: Scores, latency: dict[str, list[float]]) -> None:
    """A markdown table: one row per question type and k, one column per mode."""
    modes = list(scores)
    print("| type | n | k | " + " | ".join(modes) + " |")
    print("|---|---:|---:|" + "---:|" * len(modes))
    for qtype in ("overall", *QUESTION_TYPES):
        for k in KS:
            values = [scores[mode][qtype][k] for mode in modes]
            print(
                f"| {qtype} | {len(values[0])} | {k} | "
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
    parser.add_argument("--modes", nargs="+", choices=MODES, default=MODES)
    parser.add_argument("--embedder", default="minilm", help="minilm (default), multilingual, ...")
    parser.add_argument("--cache", default=str(DEFAULT_CACHE), help="embedding cache folder")
    args = parser.parse_args(argv)
    embedder = cached_embedder(args.embedder, args.cache)
    items, _ = chat_items()
    scores, latency = evaluate(embedder, args.modes)
    print(
        f"Chinese conversation: {len(items)} turns in {len(SESSIONS)} sessions, "
        f"{len(QUESTIONS)} questions, embedder {embedder.model_id}\n"
    )
    print_table(scores, latency)
    return 0


if __name__ == "__main__":
    sys.exit(main())
