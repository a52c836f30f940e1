"""What an erase text points to, among one user's memories: the text itself in a memory's content
or metadata, all its keywords, an entity it names, a memory whose vector stands out from the rest
(for a description only, never for an identifier such as an address or a number), and the
memories sharing a specific entity with those. Each rule costs one pass or one query,
whatever the length of the text (it is capped like a recall query)."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

import numpy as np

from ripplemem.core.text import keyword_tokens
from ripplemem.store.queries.erase import memory_texts
from ripplemem.store.rows import RowStore
from ripplemem.store.tables.graph import (
    mentioned_entities,
    mentioning_memories,
    rarely_mentioned,
    user_entities,
)

# A match's entities lead to the other memories mentioning them, unless the entity is a hub
# (the user's own name, "today"): followed only when it is mentioned by at most this many memories.
ENTITY_FANOUT = 5
# The keyword rule asks for at most this many of the text's distinct keywords (one FTS5 query).
MAX_KEYWORDS = 32
# Dense-only matches: within DENSE_MARGIN of the best cosine and DENSE_GAP above the next memory.
# MiniLM puts "my medical condition" at 0.34 to a diagnosis and 0.21 or less to everything else.
DENSE_MARGIN = 0.15
DENSE_GAP = 0.1
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


def exact_matches(store: RowStore, user_id: str, text: str) -> list[str]:
    """The user's memories (any status) holding the text in their content or metadata, any case."""
    wanted = text.casefold()
    escaped = {wanted, json.dumps(wanted)[1:-1], json.dumps(wanted, ensure_ascii=False)[1:-1]}
    with store.read() as conn:
        return [
            r[0]
            for r in memory_texts(conn, user_id)
            if wanted in r[1].casefold() or any(form in (r[2] or "").casefold() for form in escaped)
        ]


def keyword_matches(store: RowStore, user_id: str, text: str) -> list[str]:
    """The user's memories (any status) holding every one of the text's first MAX_KEYWORDS keywords."""
    terms = list(dict.fromkeys(keyword_tokens(text, drop_stopwords=True)))[:MAX_KEYWORDS]
    with store.read() as conn:
        return store.keyword_match_ids(conn, user_id, terms)


def entity_matches(store: RowStore, user_id: str, text: str) -> list[str]:
    """The user's memories mentioning an entity whose name (or canonical name) the text contains as
    whole words: the text's word runs of each name length, looked up in one set."""
    words = _WORD_RE.findall(text.casefold())
    with store.read() as conn:
        keys = {
            e.id: {" ".join(_WORD_RE.findall(n.casefold())) for n in (e.name, e.canonical)} - {""}
            for e in user_entities(conn, user_id)
        }
        lengths = {key.count(" ") + 1 for names in keys.values() for key in names}
        runs = {" ".join(words[i : i + n]) for n in lengths for i in range(len(words) - n + 1)}
        named = [entity_id for entity_id, names in keys.items() if names & runs]
        return list(dict.fromkeys(mentioning_memories(conn, user_id, named)))


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


def through_entities(store: RowStore, user_id: str, ids: Sequence[str]) -> list[str]:
    """Memories sharing a specific (non-hub) entity with one of the matched memories."""
    with store.read() as conn:
        mentioned = list(dict.fromkeys(mentioned_entities(conn, user_id, ids)))
        specific = rarely_mentioned(conn, user_id, mentioned, ENTITY_FANOUT)
        return list(dict.fromkeys(mentioning_memories(conn, user_id, specific)))
