"""One recall quality table for every benchmark and every recall mode, in one run.

Runs LoCoMo (locomo.py), LongMemEval_S (longmemeval.py), MuSiQue (musique.py, rules-only graph), the
Chinese chat (chinese_recall.py) and the Chinese conversation (chinese_conversation.py) through their
own evaluate functions with one MiniLM embedder behind the on-disk embedding cache, and prints one
markdown table: a row per benchmark metric (LoCoMo per category, LongMemEval and the Chinese
conversation per question type), a column per mode, the best of each row in bold (for latency, the
lowest). The first run embeds everything (long on a small machine); a rerun only embeds the queries.

    python benchmarks/quality.py [--benchmarks locomo longmemeval musique chinese zh-conversation]
                                 [--limit N] [--longmemeval-limit N] [--modes ...] [--cache DIR]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import chinese_conversation
import chinese_recall
import locomo
import longmemeval
import musique
from embed_cache import DEFAULT_CACHE, DiskCachedEmbedder, cached_embedder

from ripplemem import RippleMem

Row = tuple[str, str, int, dict[str, float]]  # benchmark, metric, questions, mode -> value
Result = tuple[list[Row], dict[str, list[float]]]  # rows and per-mode recall latencies
LOWER_IS_BETTER = "p50 recall ms"


def _rows(
    name: str, scores: dict[str, Any], groups: list[str], keys: Sequence[tuple[object, str]]
) -> list[Row]:
    """Rows of mean values from scores[mode][group][key], labelled '{group} {label}'."""
    modes = list(scores)
    rows: list[Row] = []
    for group in groups:
        for key, label in keys:
            values = {mode: scores[mode][group][key] for mode in modes}
            if values[modes[0]]:
                rows.append(
                    (
                        name,
                        f"{group} {label}",
                        len(values[modes[0]]),
                        {mode: statistics.fmean(v) for mode, v in values.items()},
                    )
                )
    return rows


def run_locomo(embedder: DiskCachedEmbedder, modes: list[str], limit: int | None) -> Result:
    """LoCoMo R@5 and R@10 overall, R@10 per category."""
    samples = locomo.load_conversations([str(locomo.DEFAULT_DATA)])[:limit]
    with RippleMem(path=None, user_id="locomo", embedder=embedder) as mem:
        scores, latency = locomo.evaluate(mem, samples, modes, (5, 10))
    rows = _rows("LoCoMo", scores, ["overall"], [(5, "R@5")])
    rows += _rows("LoCoMo", scores, ["overall", *locomo.CATEGORIES.values()], [(10, "R@10")])
    return rows, latency


def run_longmemeval(embedder: DiskCachedEmbedder, modes: list[str], limit: int | None) -> Result:
    """LongMemEval_S session all@5 / any@5 and turn R@10, overall and per question type."""
    questions = longmemeval.load_questions(longmemeval.DEFAULT_DATA)[:limit]
    scores, latency = longmemeval.evaluate(
        questions, modes, embedder, longmemeval.stderr_progress("longmemeval")
    )
    types = sorted(t for t in scores[modes[0]] if t != "overall")
    metrics = [(metric, metric) for metric in longmemeval.METRICS]
    return _rows("LongMemEval_S", scores, ["overall", *types], metrics), latency


def run_musique(embedder: DiskCachedEmbedder, modes: list[str], limit: int | None) -> Result:
    """MuSiQue supporting-passage R@2 and R@5 (rules-only graph)."""
    questions, corpus, _ = musique.load(musique.DEFAULT_DATA)
    questions = questions[:limit]
    with RippleMem(path=None, user_id="musique", embedder=embedder) as mem:
        musique.build(mem, corpus, None)
        means, latency = musique.evaluate(mem, questions, corpus, modes)
    rows = [
        ("MuSiQue", f"R@{k}", len(latency[modes[0]]), {mode: means[mode][k] for mode in modes})
        for k in (2, 5)
    ]
    return rows, latency


def run_chinese(embedder: DiskCachedEmbedder, modes: list[str], limit: int | None) -> Result:
    """The Chinese chat's R@5 and R@10 overall and on its question-style queries."""
    scores, latency = chinese_recall.evaluate(embedder, modes)
    return _rows("Chinese chat", scores, ["overall", "question"], [(5, "R@5"), (10, "R@10")]), latency


def run_zh_conversation(embedder: DiskCachedEmbedder, modes: list[str], limit: int | None) -> Result:
    """The Chinese conversation's R@5 overall and R@10 overall and per question type."""
    scores, latency = chinese_conversation.evaluate(embedder, modes)
    rows = _rows("Chinese conversation", scores, ["overall"], [(5, "R@5")])
    groups = ["overall", *chinese_conversation.QUESTION_TYPES]
    return rows + _rows("Chinese conversation", scores, groups, [(10, "R@10")]), latency


BENCHMARKS: dict[str, tuple[Callable[[DiskCachedEmbedder, list[str], int | None], Result], Path | None]] = {
    "locomo": (run_locomo, locomo.DEFAULT_DATA),
    "longmemeval": (run_longmemeval, longmemeval.DEFAULT_DATA),
    "musique": (run_musique, musique.DEFAULT_DATA),
    "chinese": (run_chinese, None),
    "zh-conversation": (run_zh_conversation, None),
}


def _cell(value: float, best: float, metric: str) -> str:
    text = f"{value:.1f}" if metric == LOWER_IS_BETTER else f"{value:.3f}"
    return f"**{text}**" if text == (f"{best:.1f}" if metric == LOWER_IS_BETTER else f"{best:.3f}") else text


def print_table(rows: list[Row], modes: list[str]) -> None:
    """The markdown table, the best value of each row in bold."""
    print("| benchmark | metric | n | " + " | ".join(modes) + " |")
    print("|---|---|---:|" + "---:|" * len(modes))
    for name, metric, count, values in rows:
        best = (min if metric == LOWER_IS_BETTER else max)(values[mode] for mode in modes)
        print(
            f"| {name} | {metric} | {count} | "
            + " | ".join(_cell(values[m], best, metric) for m in modes)
            + " |"
        )


def main(argv: list[str] | None = None) -> int:
    """Run the chosen benchmarks with one cached embedder and print the table."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--benchmarks", nargs="+", choices=list(BENCHMARKS), default=list(BENCHMARKS))
    parser.add_argument("--modes", nargs="+", default=longmemeval.MODES)
    parser.add_argument("--embedder", default=None)
    parser.add_argument(
        "--limit",
        type=int,
        default=None,
        help="quick run: first N LoCoMo conversations, LongMemEval and MuSiQue questions",
    )
    parser.add_argument(
        "--longmemeval-limit", type=int, default=None, help="first N LongMemEval questions (default: --limit)"
    )
    parser.add_argument("--cache", default=str(DEFAULT_CACHE), help="embedding cache folder")
    args = parser.parse_args(argv)
    embedder = cached_embedder(args.embedder, args.cache)
    started = time.perf_counter()
    rows: list[Row] = []
    notes: list[str] = []
    for name in args.benchmarks:
        run, data = BENCHMARKS[name]
        if data is not None and not data.exists():
            notes.append(f"{name}: skipped, no data at {data}")
            continue
        print(f"{name}: running", file=sys.stderr, flush=True)
        begun = time.perf_counter()
        limit = args.longmemeval_limit if name == "longmemeval" and args.longmemeval_limit else args.limit
        found, latency = run(embedder, args.modes, limit)
        rows += found
        rows.append(
            (
                found[0][0],
                LOWER_IS_BETTER,
                len(latency[args.modes[0]]),
                {mode: statistics.median(latency[mode]) * 1000 for mode in args.modes},
            )
        )
        notes.append(f"{name}: {time.perf_counter() - begun:.0f} s")
    print(
        f"Recall quality, embedder {embedder.model_id}, {time.perf_counter() - started:.0f} s wall "
        f"({'; '.join(notes)}; {embedder.embedded} texts embedded, the rest from {embedder.path})\n"
    )
    print_table(rows, args.modes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
