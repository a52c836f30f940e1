"""The SQLite schema, its version, and the migrations that bring older stores up to date."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from ripplemem.store.tables.memories import INDEXED_METADATA_KEYS, indexed_value

SCHEMA_VERSION = 7

_V1 = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS memories (
    rowid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    user_id TEXT NOT NULL,
    agent_id TEXT,
    session_id TEXT,
    type TEXT NOT NULL,
    content TEXT NOT NULL,
    modality TEXT NOT NULL DEFAULT 'text',
    importance REAL NOT NULL,
    created_at REAL NOT NULL,
    event_time REAL,
    last_accessed REAL,
    access_count INTEGER NOT NULL DEFAULT 0,
    mention_count INTEGER NOT NULL DEFAULT 1,
    tier TEXT NOT NULL DEFAULT 'hot',
    status TEXT NOT NULL DEFAULT 'active',
    valid_from REAL,
    valid_to REAL,
    source TEXT,
    metadata TEXT NOT NULL DEFAULT '{}',
    embedding BLOB
);
CREATE INDEX IF NOT EXISTS ix_memories_user_type_time ON memories(user_id, type, event_time);
CREATE INDEX IF NOT EXISTS ix_memories_user_session ON memories(user_id, session_id);
CREATE INDEX IF NOT EXISTS ix_memories_user_agent ON memories(user_id, agent_id);
CREATE INDEX IF NOT EXISTS ix_memories_user_created ON memories(user_id, created_at);
-- Keyword index: rowid = memories.rowid. 'scope' holds one opaque token per user so a MATCH
-- intersects with the user's postings inside FTS5 instead of filtering every user's hits.
CREATE VIRTUAL TABLE IF NOT EXISTS memories_fts USING fts5(
    scope, tokens, tokenize = 'porter unicode61 remove_diacritics 2'
);
CREATE TABLE IF NOT EXISTS entities (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL,
    agent_id TEXT,
    name TEXT NOT NULL,
    canonical TEXT NOT NULL,
    type TEXT NOT NULL DEFAULT 'thing',
    aliases TEXT NOT NULL DEFAULT '[]',
    created_at REAL NOT NULL,
    UNIQUE (user_id, canonical)
);
CREATE TABLE IF NOT EXISTS edges (
    src TEXT NOT NULL,
    dst TEXT NOT NULL,
    type TEXT NOT NULL,
    user_id TEXT NOT NULL,
    predicate TEXT NOT NULL DEFAULT '',
    weight REAL NOT NULL DEFAULT 1.0,
    confidence REAL NOT NULL DEFAULT 1.0,
    created_at REAL NOT NULL,
    last_activated REAL,
    activations INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (user_id, src, dst, type, predicate)
);
CREATE INDEX IF NOT EXISTS ix_edges_user_dst ON edges(user_id, dst);
"""


def _migrate_to_v1(conn: sqlite3.Connection) -> None:
    conn.executescript(_V1)


def _migrate_to_v2(conn: sqlite3.Connection) -> None:
    # Entity name vectors, for ALIAS edges by embedding similarity ("NYC" / "New York City").
    # Idempotent: a crash before the version is recorded must not break the next open.
    columns = {row[1] for row in conn.execute("PRAGMA table_info(entities)")}
    if "embedding" not in columns:
        conn.execute("ALTER TABLE entities ADD COLUMN embedding BLOB")


_V3_HISTORY = """
CREATE TABLE IF NOT EXISTS history (
    seq INTEGER PRIMARY KEY,
    memory_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    at REAL NOT NULL,
    event TEXT NOT NULL,
    cause TEXT NOT NULL DEFAULT '',
    detail TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX IF NOT EXISTS ix_history_user_memory ON history(user_id, memory_id, seq);
"""


def _migrate_to_v3(conn: sqlite3.Connection) -> None:
    # The change log behind mem.history(), and where a cold memory's vector lives in the archive.
    conn.executescript(_V3_HISTORY)
    columns = {row[1] for row in conn.execute("PRAGMA table_info(memories)")}
    if "archive_segment" not in columns:
        conn.execute("ALTER TABLE memories ADD COLUMN archive_segment TEXT")


_V4_KNOWLEDGE_BASES = """
CREATE TABLE IF NOT EXISTS knowledge_bases (
    name TEXT PRIMARY KEY,
    created_at REAL NOT NULL,
    created_by TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS kb_grants (
    kb TEXT NOT NULL,
    user_id TEXT NOT NULL,
    granted_at REAL NOT NULL,
    granted_by TEXT NOT NULL,
    PRIMARY KEY (kb, user_id)
);
CREATE INDEX IF NOT EXISTS ix_kb_grants_user ON kb_grants(user_id, kb);
CREATE TABLE IF NOT EXISTS kb_sources (
    kb TEXT NOT NULL,
    source TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    ingested_at REAL NOT NULL,
    chunks INTEGER NOT NULL,
    pages INTEGER NOT NULL DEFAULT 0,
    format TEXT NOT NULL DEFAULT '',
    title TEXT,
    PRIMARY KEY (kb, source)
);
CREATE INDEX IF NOT EXISTS ix_memories_user_source ON memories(user_id, source);
"""


def _migrate_to_v4(conn: sqlite3.Connection) -> None:
    # Knowledge bases: document chunks shared with the users they are granted to, and the
    # content hash of every ingested file (re-ingesting an unchanged file does nothing).
    conn.executescript(_V4_KNOWLEDGE_BASES)


_V5_READINGS = """
CREATE TABLE IF NOT EXISTS readings (
    id INTEGER PRIMARY KEY,
    user_id TEXT NOT NULL,
    metric TEXT NOT NULL,
    value REAL NOT NULL,
    unit TEXT NOT NULL DEFAULT '',
    at REAL NOT NULL,
    source TEXT,
    memory_id TEXT
);
CREATE INDEX IF NOT EXISTS ix_readings_user_metric_at ON readings(user_id, metric, at);
"""


def _migrate_to_v5(conn: sqlite3.Connection) -> None:
    # Sensor time series (heart rate, steps, SpO2, ...): one row per reading; memory_id is the
    # episodic memory an out-of-range reading became part of.
    conn.executescript(_V5_READINGS)


_V6_MODALITY_VECTORS = """
CREATE TABLE IF NOT EXISTS modality_vectors (
    memory_id TEXT PRIMARY KEY REFERENCES memories(id) ON DELETE CASCADE,
    user_id TEXT NOT NULL,
    modality TEXT NOT NULL,
    embedding BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS ix_modality_vectors_user ON modality_vectors(user_id, modality);
"""


def _migrate_to_v6(conn: sqlite3.Connection) -> None:
    # An image's or a sound's own vector, in its encoder's space (CLIP, CLAP), beside the memory's
    # text vector; deleting the memory deletes it (foreign keys are on).
    conn.executescript(_V6_MODALITY_VECTORS)


def _migrate_to_v7(conn: sqlite3.Connection) -> None:
    # A partial expression index per caller-id key, on (user, that key's value), holding only the
    # memories that have the key. IF NOT EXISTS: two processes opening an older store both run this.
    for key in INDEXED_METADATA_KEYS:
        value = indexed_value(key)
        conn.execute(
            f"CREATE INDEX IF NOT EXISTS ix_memories_meta_{key} ON memories(user_id, {value}) "
            f"WHERE {value} IS NOT NULL"
        )


# MIGRATIONS[n] brings a store at version n-1 to version n.
MIGRATIONS: dict[int, Callable[[sqlite3.Connection], None]] = {
    1: _migrate_to_v1,
    2: _migrate_to_v2,
    3: _migrate_to_v3,
    4: _migrate_to_v4,
    5: _migrate_to_v5,
    6: _migrate_to_v6,
    7: _migrate_to_v7,
}
