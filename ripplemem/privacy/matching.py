"""What an erase text points to, among one user's memories: the text itself in a memory's content
or metadata, all its keywords, an entity it names, a memory whose vector stands out from the rest
(for a description only, never for an identifier such as an address or a number), and the
memories sharing a specific entity with those. Each rule costs one pass or one query,
whatever the length of the text (it is capped like a recall query)."""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Sequence
from typing import Any

import numpy as np

from ripplemem.core.text import keyword_tokens
from ripplemem.store.memory_rows import scope_token
from ripplemem.store.sqlite import SQLiteStore

# A match's entities lead to the other memories mentioning them, unless the entity is a hub
# (the user's own name, "today"): followed only when it is mentioned by at most this many memories.
ENTITY_FANOUT = 5
# The keyword rule asks for at most this many of the text's distinct keywords (one FTS5 query).
MAX_KEYWORDS = 32
# Dense-only matches: within DENSE_MARGIN of the best cosine and DENSE_GAP above the next memory.
# MiniLM puts "my medical condition" at 0.34 to a diagnosis and 0.21 or less to everything else.
DENSE_MARGIN = 0.15
DENSE_GAP = 0.1
_CHUNK = 500  # values per IN (...) list
# The memories mentioning some entities. Named index: without statistics SQLite scans all the
# user's edges for each chunk instead (its primary key covers the query but starts with src).
MENTIONING = ("SELECT src FROM edges INDEXED BY ix_edges_user_dst "
              "WHERE user_id = ? AND type = 'MENTIONS' AND dst IN ({})")
_WORD_RE = re.compile(r"\w+")
_LETTERS_RE = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*")
_EDGE_PUNCTUATION = ".,;:!?\"'()[]"


def is_description(text: str) -> bool:
    """Whether a text describes something in words (dense similarity can find what it means):
    two or more words of letters, or CJK text. An address, a number or one word is a literal."""
    words = [w.strip(_EDGE_PUNCTUATION) for w in text.split()]
    words = [w for w in words if w]
    if not words or not all(_LETTERS_RE.fullmatch(w) for w in words):
        return False
    return len(words) >= 2 or any(ord(c) >= 0x2E80 for c in text)


def exact_matches(store: SQLiteStore, user_id: str, text: str) -> list[str]:
    """The user's memories (any status) holding the text in their content or metadata, any case."""
    wanted = text.casefold()
    escaped = {wanted, json.dumps(wanted)[1:-1], json.dumps(wanted, ensure_ascii=False)[1:-1]}
    with store.read() as conn:
        rows = conn.execute("SELECT id, content, metadata FROM memories WHERE user_id = ?", (user_id,))
        return [r[0] for r in rows if wanted in r[1].casefold()
                or any(form in (r[2] or "").casefold() for form in escaped)]


def keyword_matches(store: SQLiteStore, user_id: str, text: str) -> list[str]:
    """The user's memories (any status) holding every one of the text's first MAX_KEYWORDS keywords."""
    terms = list(dict.fromkeys(keyword_tokens(text, drop_stopwords=True)))[:MAX_KEYWORDS]
    if not terms:
        return []
    every = " AND ".join('"' + t.replace('"', '""') + '"' for t in terms)
    with store.read() as conn:
        # The FTS query runs once (as a join, SQLite may run it again for every memory of the user).
        return [r[0] for r in conn.execute(
            "SELECT id FROM memories WHERE user_id = ? AND rowid IN "
            "(SELECT rowid FROM memories_fts WHERE memories_fts MATCH ?)",
            (user_id, f'scope:"{scope_token(user_id)}" AND tokens:({every})'))]


def entity_matches(store: SQLiteStore, user_id: str, text: str) -> list[str]:
    """The user's memories mentioning an entity whose name (or canonical name) the text contains as
    whole words: the text's word runs of each name length, looked up in one set."""
    words = _WORD_RE.findall(text.casefold())
    with store.read() as conn:
        entities = conn.execute("SELECT id, name, canonical FROM entities WHERE user_id = ?",
                                (user_id,)).fetchall()
        keys = {r[0]: {" ".join(_WORD_RE.findall(n.casefold())) for n in (r[1], r[2])} - {""}
                for r in entities}
        lengths = {key.count(" ") + 1 for names in keys.values() for key in names}
        runs = {" ".join(words[i:i + n]) for n in lengths for i in range(len(words) - n + 1)}
        named = [entity_id for entity_id, names in keys.items() if names & runs]
        return list(dict.fromkeys(r[0] for r in rows_in(conn, MENTIONING, user_id, named)))


def dense_matches(vectors: dict[str, np.ndarray], query: np.ndarray, floor: float) -> list[str]:
    """The memories whose cosine to the query stands out: at least ``floor``, within DENSE_MARGIN
    of the best, and followed by a drop of at least DENSE_GAP to the next of the user's memories
    (the largest such clean break is the cut). A similarity with no clear break (an e-mail address
    at 0.27 among memories at 0.2-0.26) takes nothing."""
    if not vectors:
        return []
    ids = list(vectors)
    scores = np.stack([vectors[i] for i in ids]) @ query
    order = np.argsort(-scores)
    ranked = [float(scores[i]) for i in order]
    taken = 0
    for k, score in enumerate(ranked):
        if score < floor or score < ranked[0] - DENSE_MARGIN:
            break
        following = ranked[k + 1] if k + 1 < len(ranked) else 0.0
        if score - following >= DENSE_GAP:
            taken = k + 1
    return [ids[i] for i in order[:taken]]


def through_entities(store: SQLiteStore, user_id: str, ids: Sequence[str]) -> list[str]:
    """Memories sharing a specific (non-hub) entity with one of the matched memories."""
    with store.read() as conn:
        mentioned = list(dict.fromkeys(r[0] for r in rows_in(
            conn, "SELECT dst FROM edges WHERE user_id = ? AND type = 'MENTIONS' AND src IN ({})",
            user_id, ids)))
        specific = [r[0] for r in rows_in(
            conn, "SELECT dst FROM edges WHERE user_id = ? AND type = 'MENTIONS' AND dst IN ({}) "
                  f"GROUP BY dst HAVING COUNT(*) <= {ENTITY_FANOUT}", user_id, mentioned)]
        return list(dict.fromkeys(r[0] for r in rows_in(conn, MENTIONING, user_id, specific)))


def rows_in(conn: sqlite3.Connection, sql: str, user_id: str, values: Sequence[Any]) -> list[Any]:
    """The rows of a query of one user whose ``{}`` is an IN list, run over the values in chunks."""
    found: list[Any] = []
    for start in range(0, len(values), _CHUNK):
        chunk = list(values[start:start + _CHUNK])
        found.extend(conn.execute(sql.format(",".join("?" * len(chunk))), [user_id, *chunk]).fetchall())
    return found
