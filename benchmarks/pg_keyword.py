"""Keyword-only recall on PostgreSQL: RippleMem's in-process BM25 beside PostgreSQL full text.

The same memories, stored once by RippleMem on a throwaway PostgreSQL 16 (pgserver), searched by:
  recall keyword        mem.recall(mode="keyword"): BM25 candidates, then the type profiles
  BM25 index            the engine's per-user in-process index (what an unfiltered search uses)
  BM25 filtered         PostgresStore.keyword_search: a filtered search (here a filter on every
                        memory type, so it passes every row) ranks the rows it reads, in process
  pg tokens cd / rank   tsvector('simple') over RippleMem's own stemmed keyword tokens (Chinese:
                        its CJK bigrams), GIN index, OR of the query's terms, ts_rank_cd / ts_rank
  pg tokens cd filt.    the same with the every-type filter, for the filtered comparison
  pg english            to_tsvector('english', text): PostgreSQL's own parser and Snowball stems
  pg jieba              tsvector('simple') over jieba's search-mode words (doc and query)
  pg simple text        to_tsvector('simple', text): a Chinese run stays one "word"
The pg columns are added to the memories_fts table of the benchmark's own schema; every query
joins memories with RippleMem's filter SQL, as a backend doing it would. PostgreSQL has no
Chinese parser here: zhparser and pg_jieba are not installed (nor pg_trgm), hence the pre-split
columns. Sets: LoCoMo (evidence R@10 over each conversation's turns, as benchmarks/locomo.py),
the Chinese chat and the Chinese conversation (as chinese_recall.py, chinese_conversation.py),
stored with the cached MiniLM embedder like those benchmarks; then --size synthetic memories in
English (speed_texts.py) and Chinese (chinese_keywords.generated) for latency only, stored with the
model-free hashing embedder (keyword search does not read vectors). Latency: p50 of every query.

    python benchmarks/pg_keyword.py [--size 10000] [--limit N] [--uri postgresql://...]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import chinese_conversation
import chinese_recall
from chinese_keywords import MEMORIES as ZH_FACTS
from chinese_keywords import QUERIES as ZH_QUERIES
from chinese_keywords import generated
from embed_cache import DEFAULT_CACHE, cached_embedder
from locomo import CATEGORIES, DEFAULT_DATA, evidence_ids, load_conversations, turns
from speed_texts import make_queries, make_texts

from ripplemem import RippleMem, StoreOptions
from ripplemem.embedding.embedders import Embedder, resolve_embedder
from ripplemem.index.bm25 import query_terms, stem
from ripplemem.retrieval.hybrid import keyword_search
from ripplemem.store.tables.memories import MemoryFilter

K = 10
EVERY_TYPE = ("working", "episodic", "semantic", "perceptual", "document")
# tsvector column (tsv_<name> in memories_fts, filled by fill_columns) -> its text search configuration.
COLUMNS = {
    "tokens": "simple",
    "english": "english",
    "jieba": "simple",
    "text": "simple",
}
# name -> (column, rank function, filtered); the in-process methods are built in methods().
PG_METHODS = {
    "pg tokens cd": ("tokens", "ts_rank_cd", False),
    "pg tokens rank": ("tokens", "ts_rank", False),
    "pg tokens cd filt.": ("tokens", "ts_rank_cd", True),
    "pg english": ("english", "ts_rank_cd", False),
    "pg jieba": ("jieba", "ts_rank_cd", False),
    "pg simple text": ("text", "ts_rank_cd", False),
}
IN_PROCESS = ("recall keyword", "BM25 index", "BM25 filtered")


@dataclass
class User:
    """One user's memories (add_many items), a label per item, and questions with gold labels."""

    user_id: str
    items: list[dict[str, Any]]
    labels: list[Any]
    questions: list[tuple[str, set[Any]]]
    label_of: dict[str, Any] = field(default_factory=dict)  # memory id -> label, after ingest


@dataclass
class Bench:
    """A set: its users, the recall time, and whether its questions have labels."""

    name: str
    users: list[User]
    now: datetime | None = None
    labelled: bool = True


def locomo_set(limit: int | None) -> Bench:
    """Every LoCoMo conversation as one user; questions of categories 1-4 with evidence."""
    users = []
    for name, sample in load_conversations([str(DEFAULT_DATA)])[:limit]:
        items = turns(sample)
        questions = [
            (str(qa["question"]), gold)
            for qa in sample["qa"]
            if qa.get("category") in CATEGORIES and (gold := evidence_ids(qa.get("evidence", [])))
        ]
        users.append(User(name, items, [item["metadata"]["dia_id"] for item in items], questions))
    return Bench("LoCoMo", users)


def chinese_sets() -> list[Bench]:
    """The Chinese chat (chinese_recall.py) and the Chinese conversation (chinese_conversation.py)."""
    chat, holds = chinese_recall.chat_items()
    chat_questions = [(query, set(relevant)) for _, query, relevant in ZH_QUERIES]
    weeks = len(ZH_FACTS) // chinese_recall.PER_SESSION
    chat_now = chinese_recall.START + timedelta(days=7 * weeks + 1)
    talk, where = chinese_conversation.chat_items()
    talk_questions = [(question, set(evidence)) for _, question, evidence in chinese_conversation.QUESTIONS]
    return [
        Bench("zh chat", [User("zh-chat", chat, list(holds), chat_questions)], chat_now),
        Bench(
            "zh conversation", [User("zh-talk", talk, list(where), talk_questions)], chinese_conversation.NOW
        ),
    ]


def synthetic_sets(size: int) -> list[Bench]:
    """`size` synthetic memories in English and in Chinese (numbered, so none is a duplicate)."""
    english = [{"content": text} for text in make_texts(size)]
    chinese = [{"content": f"{text} #{number}"} for number, text in enumerate(generated(size), 1)]
    zh_queries = [query for _, query, _ in ZH_QUERIES]
    return [
        Bench(
            f"en {size:,}",
            [User("en", english, [None] * size, [(q, set()) for q in make_queries(200)])],
            None,
            False,
        ),
        Bench(
            f"zh {size:,}",
            [User("zh", chinese, [None] * size, [(q, set()) for q in zh_queries * 5])],
            None,
            False,
        ),
    ]


def jieba_words(text: str) -> str:
    """jieba's search-mode words of a text, space-joined (PostgreSQL's parser drops punctuation)."""
    import jieba

    return " ".join(word for word in jieba.lcut_for_search(text) if word.strip())


def ingest(uri: str, bench: Bench, embedder: Embedder) -> RippleMem:
    """Store every user's memories in the set's own schema; fills each user's label_of."""
    schema = "kw_" + "".join(c if c.isalnum() else "_" for c in bench.name.lower())
    mem = RippleMem(
        user_id="pg-keyword",
        embedder=embedder,
        store=StoreOptions(backend="postgres", uri=uri, schema=schema),
    )
    for user in bench.users:
        stored = mem.scope(user_id=user.user_id).add_many(user.items, progress=False)
        user.label_of = {memory.id: label for memory, label in zip(stored, user.labels, strict=True)}
    fill_columns(uri, schema)
    return mem


def fill_columns(uri: str, schema: str) -> None:
    """Add one tsvector column per COLUMNS entry to memories_fts, fill it, and GIN-index it."""
    import psycopg
    from psycopg import sql

    with psycopg.connect(uri, autocommit=True) as conn:
        conn.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(schema)))
        conn.execute(
            "ALTER TABLE memories_fts " + ", ".join(f"ADD COLUMN tsv_{name} tsvector" for name in COLUMNS)
        )
        rows = conn.execute(
            "SELECT f.rowid, f.tokens, m.content FROM memories_fts f JOIN memories m ON m.rowid = f.rowid"
        ).fetchall()
        values = [
            (" ".join(stem(t) for t in tokens.split()), jieba_words(content), rowid)
            for rowid, tokens, content in rows
        ]
        with conn.transaction(), conn.cursor() as cur:
            cur.executemany(
                "UPDATE memories_fts SET tsv_tokens = to_tsvector('simple', %s), "
                "tsv_jieba = to_tsvector('simple', %s) WHERE rowid = %s",
                values,
            )
            cur.execute(
                "UPDATE memories_fts f SET tsv_english = to_tsvector('english', m.content), "
                "tsv_text = to_tsvector('simple', m.content) FROM memories m WHERE m.rowid = f.rowid"
            )
        for name in COLUMNS:
            conn.execute(f"CREATE INDEX ON memories_fts USING gin (tsv_{name})")
        conn.execute("VACUUM ANALYZE memories_fts")


def pg_query_text(column: str, query: str) -> str:
    """The text PostgreSQL parses into the query's lexemes: RippleMem's query terms (stemmed,
    stopwords dropped) for the tokens column, jieba's words for the jieba one, else the query."""
    if column == "tokens":
        return " ".join(query_terms(query))
    if column == "jieba":
        return jieba_words(query)
    return query


def pg_search(mem: RippleMem, column: str, rank: str, flt: MemoryFilter, query: str) -> list[str]:
    """The best K memory ids by PostgreSQL full text: any of the query's lexemes (plainto_tsquery's
    AND turned into OR, as BM25 matches any term), ranked by `rank`."""
    text = pg_query_text(column, query)
    if not text.strip():
        return []
    where, params = flt.where()
    statement = (
        "SELECT m.id FROM memories m JOIN memories_fts f ON f.rowid = m.rowid, "
        f"CAST(replace(CAST(plainto_tsquery('{COLUMNS[column]}', ?) AS text), ' & ', ' | ') AS tsquery) q "
        f"WHERE {where} AND f.tsv_{column} @@ q ORDER BY {rank}(f.tsv_{column}, q) DESC, m.rowid LIMIT ?"
    )
    with mem._engine.store.read() as conn:
        return [row[0] for row in conn.execute(statement, [text, *params, K])]


def methods(mem: RippleMem, user: User, now: datetime | None) -> dict[str, Callable[[str], list[str]]]:
    """Every method as a function from a query to the best K memory ids of this user."""
    handle = mem.scope(user_id=user.user_id)
    engine = mem._engine
    only_user = MemoryFilter(user_id=user.user_id)
    every_type = MemoryFilter(user_id=user.user_id, types=EVERY_TYPE)

    def recall(query: str) -> list[str]:
        return [
            hit.memory.id
            for hit in handle.recall(query, k=K, mode="keyword", now=now, record_access=False).hits
        ]

    def index(query: str) -> list[str]:
        found = keyword_search(query, only_user, K, engine.store, engine.keyword_index(user.user_id))
        return [memory_id for memory_id, _ in found]

    def filtered(query: str) -> list[str]:
        return [memory_id for memory_id, _ in engine.store.keyword_search(query, every_type, K)]

    found: dict[str, Callable[[str], list[str]]] = {
        "recall keyword": recall,
        "BM25 index": index,
        "BM25 filtered": filtered,
    }
    for name, (column, rank, with_filter) in PG_METHODS.items():
        flt = every_type if with_filter else only_user
        found[name] = lambda query, c=column, r=rank, f=flt: pg_search(mem, c, r, f, query)
    return found


def measure(mem: RippleMem, bench: Bench) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """Per method: every question's R@K (labelled sets) and every query's seconds."""
    recalls: dict[str, list[float]] = {}
    seconds: dict[str, list[float]] = {}
    for user in bench.users:
        runs = methods(mem, user, bench.now)
        for run in runs.values():  # warm up: the engine's index and graph, the pool, the plans
            run(user.questions[0][0])
        for question, gold in user.questions:  # the methods in turn, so a busy spell hits each alike
            for name, run in runs.items():
                started = time.perf_counter()
                ranked = run(question)
                seconds.setdefault(name, []).append(time.perf_counter() - started)
                if bench.labelled:
                    labels = {user.label_of.get(memory_id) for memory_id in ranked}
                    recalls.setdefault(name, []).append(len(gold & labels) / len(gold))
    return recalls, seconds


def start_server(uri: str | None, folder: str) -> tuple[str, Any]:
    """The given server, or a throwaway pgserver in `folder` (stopped by the caller), with pgvector."""
    import psycopg

    server = None
    if uri is None:
        import pgserver

        server = pgserver.get_server(folder, cleanup_mode="stop")
        uri = server.get_uri()
    with psycopg.connect(uri, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        if server is not None:  # a throwaway server need not wait for the disk at each commit
            conn.execute("ALTER SYSTEM SET synchronous_commit = off")
            conn.execute("SELECT pg_reload_conf()")
        missing = [
            name
            for name in ("zhparser", "pg_jieba")
            if not conn.execute("SELECT 1 FROM pg_available_extensions WHERE name = %s", (name,)).fetchone()
        ]
    print(f"server: PostgreSQL {server_version(uri)}; not installed: {', '.join(missing) or 'none'}")
    return uri, server


def server_version(uri: str) -> str:
    """The server's version number."""
    import psycopg

    with psycopg.connect(uri) as conn:
        return str(conn.execute("SHOW server_version").fetchone()[0])  # type: ignore[index]


def print_tables(results: list[tuple[Bench, int, dict[str, list[float]], dict[str, list[float]]]]) -> None:
    """R@K per labelled set, then p50 ms per set, one row per method."""
    names = list(IN_PROCESS) + list(PG_METHODS)
    labelled = [(b, n, r) for b, n, r, _ in results if b.labelled]
    print(
        f"\n| R@{K} | "
        + " | ".join(f"{b.name} ({n:,} memories, {len(r[names[0]])} q)" for b, n, r in labelled)
        + " |"
    )
    print("|---|" + "---:|" * len(labelled))
    for name in names:
        print(f"| {name} | " + " | ".join(f"{statistics.fmean(r[name]):.3f}" for _, _, r in labelled) + " |")
    print("\n| p50 ms | " + " | ".join(f"{b.name} ({n:,})" for b, n, _, _ in results) + " |")
    print("|---|" + "---:|" * len(results))
    for name in names:
        print(
            f"| {name} | "
            + " | ".join(f"{statistics.median(s[name]) * 1000:.2f}" for _, _, _, s in results)
            + " |"
        )


def main(argv: Sequence[str] | None = None) -> int:
    """Run every set and print the two tables."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--size", type=int, default=10_000, help="synthetic memories per language (0: none)")
    parser.add_argument("--limit", type=int, default=None, help="only the first N LoCoMo conversations")
    parser.add_argument("--uri", help="a PostgreSQL server with pgvector (default: a throwaway pgserver)")
    parser.add_argument("--cache", default=str(DEFAULT_CACHE), help="embedding cache folder")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    folder = tempfile.TemporaryDirectory(prefix="ripplemem-bench-pgkw-")
    uri, server = start_server(args.uri, folder.name)
    model = cached_embedder(None, args.cache)
    hashing = resolve_embedder("hashing")
    sets = [(b, model) for b in [locomo_set(args.limit), *chinese_sets()]]
    sets += [(b, hashing) for b in synthetic_sets(args.size)] if args.size else []
    results = []
    try:
        for bench, embedder in sets:
            mem = ingest(uri, bench, embedder)
            held = sum(len(user.label_of) for user in bench.users) // len(bench.users)
            recalls, seconds = measure(mem, bench)
            mem.close()
            results.append((bench, held, recalls, seconds))
            print(
                f"{bench.name}: {held:,} memories per user, {time.perf_counter() - started:.0f} s", flush=True
            )
    finally:
        if server is not None:
            server.cleanup()
        folder.cleanup()
    print_tables(results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
