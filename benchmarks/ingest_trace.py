"""Store-side ingest traced 10k memories at a time: where a slow run slows down.

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/ingest_trace.py --n 150000 --path /tmp/trace-store \\
        --embed-cache /tmp/rm-vectors

The texts and their MiniLM vectors come from speed.py's embedding cache (build it first with
speed.py or this script's own embedder: missing chunks are embedded and kept), so only the store's
work is timed. For each 10k: memories/s, bytes read and written from storage per memory
(/proc/self/io), RSS, and the CPU other processes used meanwhile. The process id is printed first,
so a profiler can attach to a run that turns slow (docs/scale.md, "Where ingest time goes").
"""

from __future__ import annotations

import argparse
import json
import os
import time

from speed_cache import EmbedCache, ReplayEmbedder
from speed_systems import contention_meter
from speed_texts import make_texts

from ripplemem import RippleMem, StoreOptions
from ripplemem.embedding.embedders import resolve_embedder


def _io() -> tuple[int, int]:
    """Bytes this process read from and wrote to storage so far."""
    with open("/proc/self/io") as file:
        fields = dict(line.split(": ") for line in file.read().splitlines())
    return int(fields["read_bytes"]), int(fields["write_bytes"])


def _rss_mb() -> int:
    """Resident memory now, MB."""
    with open("/proc/self/status") as file:
        for line in file:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) // 1024
    return 0


def main() -> None:
    """Ingest --n cached texts into a new store at --path, one line of JSON per 10k."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=150_000)
    parser.add_argument("--path", required=True, help="a new store directory")
    parser.add_argument("--embed-cache", required=True, help="speed.py's embedding cache folder")
    args = parser.parse_args()
    live = resolve_embedder(None)
    replay = ReplayEmbedder(live)
    cache = EmbedCache(os.path.join(args.embed_cache, live.model_id, "synthetic"), make_texts(args.n))
    cache.build(live.embed_documents, contention_meter)
    mem = RippleMem(args.path, user_id="bench", embedder=replay, store=StoreOptions(vector_index="chroma"))
    mem.stats()  # opens the vector index before the timed part
    print(json.dumps({"pid": os.getpid()}), flush=True)
    done = 0
    for texts, vectors in cache.chunks():
        replay.load(texts, vectors)
        (read0, written0), meter, started = _io(), contention_meter(), time.perf_counter()
        mem.add_many([{"content": text} for text in texts])
        seconds, (read1, written1) = time.perf_counter() - started, _io()
        done += len(texts)
        line = {
            "at": done,
            "per_s": round(len(texts) / seconds),
            "read_kb": round((read1 - read0) / len(texts) / 1024, 1),
            "write_kb": round((written1 - written0) / len(texts) / 1024, 1),
            "rss_mb": _rss_mb(),
            "other_cores": round(meter(), 2),
        }
        print(json.dumps(line), flush=True)
    mem.close()


if __name__ == "__main__":
    main()
