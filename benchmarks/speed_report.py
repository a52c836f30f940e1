"""The markdown tables benchmarks/speed.py prints from its workers' results."""

from __future__ import annotations

from typing import Any

LABEL = {
    "ripplemem": "RippleMem (SQLite + Chroma)",
    "ripplemem-numpy": "RippleMem (SQLite + numpy)",
    "chroma": "plain Chroma + MiniLM",
    "inmemory": "LangChain InMemoryVectorStore",
    "mem0": "mem0 OSS (infer=False, local Qdrant)",
}
RSS_TARGET_MB, P50_TARGET_MS, INGEST_TARGET, P50_RATIO_TARGET = 4096, 50.0, 0.8, 1.3


def combined(embed_per_s: float, store_per_s: float) -> float:
    """Ingest/s when every text is embedded and then stored: 1 / (1/embed + 1/store)."""
    return 1 / (1 / embed_per_s + 1 / store_per_s)


def print_speed(sizes: dict[int, dict[str, Any]]) -> None:
    """One table per size: the raw embedding row, then every system and recall mode."""
    for size, found in sizes.items():
        embedding = found["embedding"]
        print(
            f"### {size:,} memories\n\nraw embedding throughput (the cache build): "
            f"{embedding['per_s']:,.0f} texts/s (other procs {embedding['other_cores']:.2f} cores)\n"
        )
        print(
            "| system | mode | embedding | memories held | store-only ingest/s | ingest/s incl. embedding "
            "| recall p50 (ms) | recall p95 (ms) | peak RSS (MB) | disk (MB) | other procs (cores) |"
        )
        print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        for (system, live), result in found["runs"].items():
            name = LABEL[system]
            if "error" in result:
                print(f"| {name} | - | {'live' if live else 'cached'} | {result['error']} ||||||||")
                continue
            if live:
                how, store = f"live: {result['runtime']}", "-"
                total = f"{result['ingest_per_s']:,.0f} (measured)"
            else:
                extra = f", {result['live_texts']:,} texts live" if result["live_texts"] else ""
                how = f"cached vectors replayed{extra}"
                store = f"{result['ingest_per_s']:,.0f}"
                total = f"{combined(embedding['per_s'], result['ingest_per_s']):,.0f}"
            held = "-" if result.get("held") is None else f"{result['held']:,}"
            for mode, latency in result["modes"].items():
                print(
                    f"| {name} | {mode} | {how} | {held} | {store} | {total} | {latency['p50_ms']:.2f} "
                    f"| {latency['p95_ms']:.2f} | {result['rss_mb']:,.0f} | {result['disk_mb']:,.0f} "
                    f"| {result['other_cores']:.2f} |"
                )
        for system, why in found["skipped"].items():
            print(f"| {LABEL[system]} | - | - | {why} ||||||||")
        print()


def print_targets(sizes: dict[int, dict[str, Any]]) -> None:
    """RippleMem (cached run) against the issue's targets and against plain Chroma at each size."""
    print("| size | check | value | target | met |")
    print("|---:|---|---:|---:|---|")
    for size, found in sizes.items():
        mine, chroma = found["runs"].get(("ripplemem", False)), found["runs"].get(("chroma", False))
        if not mine or "error" in mine:
            continue
        embed = found["embedding"]["per_s"]
        checks = [
            (
                "ingest incl. embedding / raw embedding",
                combined(embed, mine["ingest_per_s"]) / embed,
                INGEST_TARGET,
                ">=",
            )
        ]
        checks += [
            (f"{mode} recall p50 (ms)", mine["modes"][mode]["p50_ms"], P50_TARGET_MS, "<=")
            for mode in mine["modes"]
        ]
        checks.append(("peak RSS (MB)", mine["rss_mb"], RSS_TARGET_MB, "<="))
        if chroma and "error" not in chroma:
            checks.append(
                (
                    "ingest incl. embedding / plain Chroma's",
                    combined(embed, mine["ingest_per_s"]) / combined(embed, chroma["ingest_per_s"]),
                    INGEST_TARGET,
                    ">=",
                )
            )
            base = chroma["modes"]["chroma"]["p50_ms"]
            checks += [
                (
                    f"{mode} recall p50 / plain Chroma's",
                    mine["modes"][mode]["p50_ms"] / base,
                    P50_RATIO_TARGET,
                    "<=",
                )
                for mode in mine["modes"]
            ]
        for check, value, target, sign in checks:
            met = value >= target if sign == ">=" else value <= target
            print(f"| {size:,} | {check} | {value:,.2f} | {sign} {target:g} | {'yes' if met else 'NO'} |")
    print()


def print_locomo(count: int, results: dict[str, dict[str, Any]]) -> None:
    """LoCoMo evidence recall@10 per system and mode, overall and per category."""
    columns = ["overall", "multi-hop", "temporal", "open-domain", "single-hop"]
    print(f"LoCoMo evidence recall@10, {count} conversations, every turn one memory:\n")
    print("| system | mode | " + " | ".join(f"{c} R@10" for c in columns) + " | p50 (ms) | questions |")
    print("|---|---|" + "---:|" * (len(columns) + 2))
    for system, result in results.items():
        if "error" in result:
            print(f"| {LABEL[system]} | - | {result['error']} |" + "|" * (len(columns) + 1))
            continue
        for mode, found in result.items():
            cells = [f"{found['recall'][c]:.3f}" if c in found["recall"] else "-" for c in columns]
            print(
                f"| {LABEL[system]} | {mode} | "
                + " | ".join(cells)
                + f" | {found['p50_ms']:.1f} | {found['questions']} |"
            )
