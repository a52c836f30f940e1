"""LoCoMo evidence recall@5/@10 per category for each recall mode, in one run.

Every dialogue turn becomes one memory ("Speaker: text", plus the shared image's caption), with
the session date as event time. For each question with evidence (categories 1-4), recall@k is
|evidence ∩ top-k dia_ids| / |evidence|. Data: ../shared/bench/locomo or any LoCoMo JSON files
(one conversation per file, or the original locomo10.json list).

    python benchmarks/locomo.py [--data DIR_OR_FILES ...] [--modes keyword dense hybrid ripple]
                              [--limit N] [--cache DIR]
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from collections import defaultdict
from datetime import datetime
from pathlib import Path
from typing import Any

from embed_cache import DEFAULT_CACHE, cached_embedder

from ripplemem import RippleMem

DEFAULT_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "bench" / "locomo"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}


def load_conversations(paths: list[str]) -> list[tuple[str, dict[str, Any]]]:
    """(name, sample) pairs from files or folders of LoCoMo JSON."""
    files: list[Path] = []
    for entry in paths:
        path = Path(entry)
        files.extend(sorted(path.glob("*.json")) if path.is_dir() else [path])
    samples: list[tuple[str, dict[str, Any]]] = []
    for file in files:
        data = json.loads(file.read_text())
        items = data if isinstance(data, list) else [data]
        for number, item in enumerate(items):
            name = item.get("sample_id") or (file.stem if len(items) == 1 else f"{file.stem}-{number}")
            samples.append((str(name), item))
    return samples


def parse_date(text: str) -> datetime | None:
    """LoCoMo session dates look like '1:56 pm on 8 May, 2023'."""
    for pattern in ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y"):
        try:
            return datetime.strptime(text.strip(), pattern)
        except ValueError:
            continue
    return None


def turns(sample: dict[str, Any]) -> list[dict[str, Any]]:
    """One add_many item per dialogue turn."""
    conversation = sample.get("conversation", sample)
    items = []
    sessions = sorted(
        (int(m.group(1)), key) for key in conversation if (m := re.fullmatch(r"session_(\d+)", key))
    )
    for number, key in sessions:
        when = parse_date(conversation.get(f"{key}_date_time", ""))
        for turn in conversation[key]:
            text = f"{turn['speaker']}: {turn['text']}"
            if turn.get("blip_caption"):
                text += f" [shares an image: {turn['blip_caption']}]"
            items.append(
                {
                    "content": text,
                    "session_id": f"session_{number}",
                    "event_time": when,
                    "metadata": {"dia_id": turn["dia_id"]},
                }
            )
    return items


def evidence_ids(raw: list[str]) -> set[str]:
    """Evidence dia_ids, tolerating the dataset's occasional 'D1:3; D2:4' entries."""
    found: set[str] = set()
    for entry in raw:
        found.update(re.findall(r"D\d+:\d+", entry))
    return found


Scores = dict[str, dict[str, dict[int, list[float]]]]


def evaluate(
    mem: RippleMem, samples: list[tuple[str, dict[str, Any]]], modes: list[str], ks: tuple[int, ...]
) -> tuple[Scores, dict[str, list[float]]]:
    """Per mode, per category, per k: the recall of every question; and per-mode latencies."""
    scores: dict[str, dict[str, dict[int, list[float]]]] = {
        mode: defaultdict(lambda: defaultdict(list)) for mode in modes
    }
    latency: dict[str, list[float]] = defaultdict(list)
    for name, sample in samples:
        handle = mem.scope(user_id=name)
        handle.add_many(turns(sample), progress=False)
        for qa in sample["qa"]:
            category = CATEGORIES.get(qa.get("category"))
            gold = evidence_ids(qa.get("evidence", []))
            if category is None or not gold:
                continue
            for mode in modes:
                started = time.perf_counter()
                result = handle.recall(str(qa["question"]), k=max(ks), mode=mode, record_access=False)
                latency[mode].append(time.perf_counter() - started)
                ranked = [hit.memory.metadata.get("dia_id") for hit in result.hits]
                for k in ks:
                    value = len(gold & set(ranked[:k])) / len(gold)
                    scores[mode][category][k].append(value)
                    scores[mode]["overall"][k].append(value)
    return scores, latency


def print_table(
    scores: dict[str, dict[str, dict[int, list[float]]]], latency: dict[str, list[float]], ks: tuple[int, ...]
) -> None:
    """A markdown table: one row per mode, R@k overall and per category."""
    columns = ["overall", *CATEGORIES.values()]
    header = ["mode"] + [f"{c} R@{k}" for c in columns for k in ks] + ["p50 ms"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for mode, by_category in scores.items():
        cells = [mode]
        for column in columns:
            for k in ks:
                values = by_category.get(column, {}).get(k, [])
                cells.append(f"{statistics.fmean(values):.3f}" if values else "-")
        cells.append(f"{statistics.median(latency[mode]) * 1000:.1f}")
        print("| " + " | ".join(cells) + " |")
    counts = {c: len(scores[next(iter(scores))].get(c, {}).get(ks[0], [])) for c in columns}
    print("\nquestions: " + ", ".join(f"{c} {n}" for c, n in counts.items()))


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the table."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", nargs="+", default=[str(DEFAULT_DATA)])
    parser.add_argument("--modes", nargs="+", default=["keyword", "dense", "hybrid", "ripple"])
    parser.add_argument("--embedder", default=None)
    parser.add_argument("--limit", type=int, default=None, help="only the first N conversations")
    parser.add_argument("--cache", default=str(DEFAULT_CACHE), help="embedding cache folder")
    args = parser.parse_args(argv)
    samples = load_conversations(args.data)[: args.limit]
    if not samples:
        print(f"no LoCoMo files found in {args.data}", file=sys.stderr)
        return 2
    ks = (5, 10)
    started = time.perf_counter()
    embedder = cached_embedder(args.embedder, args.cache)
    with RippleMem(path=None, user_id="locomo", embedder=embedder) as mem:
        scores, latency = evaluate(mem, samples, args.modes, ks)
    print(
        f"LoCoMo: {len(samples)} conversations, embedder {embedder.model_id}, "
        f"{time.perf_counter() - started:.0f} s\n"
    )
    print_table(scores, latency, ks)
    return 0


if __name__ == "__main__":
    sys.exit(main())
