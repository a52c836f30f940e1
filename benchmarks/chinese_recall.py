"""Chinese conversation recall@5/@10 per query group for each recall mode.

The 64 hand-written Chinese memories of chinese_keywords.py become a chat: 8 dated sessions, each
holding 8 of them and 32 generated small-talk turns (chinese_keywords.generated, seeded, keeping
only those that contain none of the word, name and phrase queries, so the labels stay right) in a
seeded order, every user turn ("user: ...") followed by a short assistant acknowledgement. The 40
queries there (words, names, boundary traps, phrases, questions, mixed zh/en) are asked with their
relevant memories as evidence; recall@k = |relevant ∩ top-k| / |relevant|. Small talk and
acknowledgements are never relevant: they share words and NEXT edges with the facts.

    python benchmarks/chinese_recall.py [--modes keyword dense hybrid ripple] [--cache DIR]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections import defaultdict
from datetime import datetime, timedelta
from typing import Any

from chinese_keywords import MEMORIES, QUERIES, generated
from embed_cache import DEFAULT_CACHE, cached_embedder

from ripplemem import RippleMem
from ripplemem.embedding.embedders import Embedder

MODES = ["keyword", "dense", "hybrid", "ripple"]
ACKS = ["好的，记住了。", "明白，我记下来了。", "收到。", "好的，还有别的吗？", "了解，谢谢告诉我。"]
PER_SESSION = 8
SMALL_TALK = 32  # generated turns per session
START = datetime(2024, 3, 4, 20, 0)
KS = (5, 10)

Scores = dict[str, dict[str, dict[int, list[float]]]]  # mode -> query group -> k -> values


def small_talk(count: int) -> list[str]:
    """Generated turns that contain no literal query (a word, name or phrase), so none is relevant."""
    literal = [query for group, query, _ in QUERIES if group != "question"]
    texts = [t for t in dict.fromkeys(generated(8 * count)) if not any(q in t for q in literal)]
    if len(texts) < count:
        raise RuntimeError(f"only {len(texts)} small-talk turns left after filtering, {count} wanted")
    return texts[:count]


def chat_items() -> tuple[list[dict[str, Any]], list[int | None]]:
    """The add_many items of the chat, and per item the MEMORIES index it holds (None: not a fact)."""
    sessions = len(MEMORIES) // PER_SESSION
    talk = small_talk(sessions * SMALL_TALK)
    items: list[dict[str, Any]] = []
    holds: list[int | None] = []
    for session in range(sessions):
        facts: list[tuple[str, int | None]] = [
            (MEMORIES[i], i) for i in range(session * PER_SESSION, (session + 1) * PER_SESSION)
        ]
        chat = facts + [(t, None) for t in talk[session * SMALL_TALK : (session + 1) * SMALL_TALK]]
        random.Random(session).shuffle(chat)
        for number, (text, index) in enumerate(chat):
            when = START + timedelta(days=7 * session, minutes=2 * number)
            for content, held in ((f"user: {text}", index), (f"assistant: {ACKS[number % len(ACKS)]}", None)):
                items.append({"content": content, "session_id": f"s{session + 1}", "event_time": when})
                holds.append(held)
    return items, holds


def evaluate(embedder: Embedder, modes: list[str]) -> tuple[Scores, dict[str, list[float]]]:
    """Per mode, per query group (and overall), per k: every query's recall; per-mode latencies."""
    scores: Scores = {mode: defaultdict(lambda: defaultdict(list)) for mode in modes}
    latency: dict[str, list[float]] = defaultdict(list)
    items, holds = chat_items()
    now = START + timedelta(days=7 * (len(MEMORIES) // PER_SESSION) + 1)
    with RippleMem(path=None, user_id="zh-chat", embedder=embedder) as mem:
        index_of = {memory.id: index for memory, index in zip(mem.add_many(items), holds, strict=True)}
        for group, query, relevant in QUERIES:
            for mode in modes:
                started = time.perf_counter()
                result = mem.recall(query, k=max(KS), mode=mode, now=now, record_access=False)
                latency[mode].append(time.perf_counter() - started)
                ranked = [index_of.get(hit.memory.id) for hit in result.hits]
                for k in KS:
                    value = len(set(relevant) & set(ranked[:k])) / len(relevant)
                    scores[mode][group][k].append(value)
                    scores[mode]["overall"][k].append(value)
    return scores, latency


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print one row per query group and k, one column per mode."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--modes", nargs="+", default=MODES)
    parser.add_argument("--embedder", default=None)
    parser.add_argument("--cache", default=str(DEFAULT_CACHE), help="embedding cache folder")
    args = parser.parse_args(argv)
    embedder = cached_embedder(args.embedder, args.cache)
    scores, latency = evaluate(embedder, args.modes)
    print(
        f"Chinese chat: {len(MEMORIES)} facts and {len(MEMORIES) // PER_SESSION * SMALL_TALK} small-talk "
        f"turns in {len(MEMORIES) // PER_SESSION} sessions, "
        f"{len(QUERIES)} queries, embedder {embedder.model_id}\n"
    )
    print("| group | n | k | " + " | ".join(args.modes) + " |")
    print("|---|---:|---:|" + "---:|" * len(args.modes))
    groups = ["overall", *dict.fromkeys(group for group, _, _ in QUERIES)]
    for group in groups:
        for k in KS:
            values = [scores[mode][group][k] for mode in args.modes]
            print(
                f"| {group} | {len(values[0])} | {k} | "
                + " | ".join(f"{statistics.fmean(v):.3f}" for v in values)
                + " |"
            )
    print(
        "| p50 recall ms | | | "
        + " | ".join(f"{statistics.median(latency[m]) * 1000:.1f}" for m in args.modes)
        + " |"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
