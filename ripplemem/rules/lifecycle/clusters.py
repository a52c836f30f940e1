"""Episodic memories about one thing, grouped, and the general fact a chat model reads in them.

`cluster_related` links memories that share an entity or have similar embeddings and returns the
connected groups; `summarize_cluster` asks a chat model for the fact a group supports (e.g.
many runs -> "the user runs three times a week"), and returns None for junk, refusals or failures.
"""

from __future__ import annotations

import json
import logging
import re
from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ripplemem.core.text import estimate_tokens
from ripplemem.errors import InvalidInputError, InvalidTypeError
from ripplemem.rules.lifecycle._common import as_ids, check_chat_model, reply_text, unfence
from ripplemem.rules.lifecycle.settings import DEFAULT_SETTINGS, LifecycleSettings

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

logger = logging.getLogger("ripplemem.lifecycle.rules")


@dataclass(frozen=True)
class MemoryCluster:
    """Memories about one thing, in input order, and the entities at least two of them share."""

    ids: tuple[Any, ...]
    shared_entities: tuple[str, ...]


def cluster_related(
    ids: Sequence[Any],
    *,
    entities: Sequence[Iterable[str]] | None = None,
    embeddings: Any = None,
    ignore_entities: Collection[str] = (),
    settings: LifecycleSettings = DEFAULT_SETTINGS,
) -> list[MemoryCluster]:
    """Groups of at least `cluster_min_size` memories linked by a shared entity or similar embeddings.

    Two memories are linked when they share an entity key (canonical name) or their embeddings
    have cosine similarity >= `cluster_similarity`; groups are the connected components. Entities
    in `ignore_entities`, or in more than `cluster_common_entity_fraction` of the memories (and
    more than `cluster_min_size` of them), link nothing: the user's own name would chain
    everything. Biggest clusters first.
    """
    id_list = as_ids(ids)
    n = len(id_list)
    parent = np.arange(n)

    def find(i: int) -> int:
        root = i
        while parent[root] != root:
            root = parent[root]
        while parent[i] != root:
            parent[i], i = root, parent[i]
        return int(root)

    def union(i: int, j: int) -> None:
        a, b = find(i), find(j)
        if a != b:
            parent[max(a, b)] = min(a, b)

    entity_sets: list[set[str]] = [set() for _ in range(n)]
    if entities is not None:
        if len(entities) != n:
            raise InvalidInputError(f"entities has {len(entities)} rows, expected {n}")
        ignored = set(ignore_entities)
        raw = [set(row) - ignored for row in entities]
        frequency = Counter(key for row in raw for key in row)
        too_common = {
            key
            for key, count in frequency.items()
            if count > settings.cluster_common_entity_fraction * n and count > settings.cluster_min_size
        }
        first_holder: dict[str, int] = {}
        for index, row in enumerate(raw):
            entity_sets[index] = row - too_common
            for key in entity_sets[index]:
                if key in first_holder:
                    union(first_holder[key], index)
                else:
                    first_holder[key] = index
    if embeddings is not None:
        for i, j in _similar_pairs(embeddings, n, settings.cluster_similarity):
            union(i, j)

    groups: dict[int, list[int]] = {}
    for index in range(n):
        groups.setdefault(find(index), []).append(index)
    clusters = []
    for members in groups.values():
        if len(members) < settings.cluster_min_size:
            continue
        counts = Counter(key for index in members for key in entity_sets[index])
        shared = tuple(
            key for key, count in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])) if count >= 2
        )
        clusters.append((members, MemoryCluster(tuple(id_list[i] for i in members), shared)))
    clusters.sort(key=lambda pair: (-len(pair[0]), pair[0][0]))
    return [cluster for _, cluster in clusters]


def _similar_pairs(embeddings: Any, n: int, threshold: float, block: int = 1024) -> list[tuple[int, int]]:
    raw = np.asarray(embeddings, dtype=np.float32)
    if raw.ndim != 2 or raw.shape[0] != n:
        raise InvalidInputError(f"embeddings must have shape ({n}, dim), got {raw.shape}")
    norms = np.linalg.norm(raw, axis=1, keepdims=True)
    matrix = (raw / np.where(norms == 0, 1, norms)).astype(np.float32)
    pairs: list[tuple[int, int]] = []
    for start in range(0, n, block):
        sims = matrix[start : start + block] @ matrix.T
        rows, cols = np.nonzero(sims >= threshold)
        keep = cols > rows + start
        pairs.extend(zip((rows[keep] + start).tolist(), cols[keep].tolist(), strict=True))
    return pairs


# --- Summaries of clusters with a chat model ----------------------------------------------------

SUMMARY_PROMPT = """\
Below are separate memories of one user, oldest first. State in one short sentence the general, \
lasting fact they support together (a habit, preference, relationship or recurring plan), e.g. \
"The user goes running about three times a week." Write it in the language of the memories. \
Reply with only that sentence. If they support no general fact, reply exactly NONE.\
"""
_NO_SUMMARY = {"none", "null", "n/a", "na", "no", "nothing", "无", "没有", "无。", "none."}
_LABEL = re.compile(
    r"^\s*(?:[-*•]\s*)?(?:\*\*)?(?:summary|fact|answer|result|总结|摘要|结论|事实)"
    r"(?:\*\*)?\s*[:：]\s*",
    re.IGNORECASE,
)
_REFUSAL = re.compile(
    r"^(?:i'?m sorry|sorry|i cannot|i can'?t|as an ai|抱歉|对不起|我无法|作为一个?AI)", re.IGNORECASE
)


def _summary_messages(texts: Sequence[str], settings: LifecycleSettings) -> list[Any]:
    from langchain_core.messages import HumanMessage, SystemMessage

    if isinstance(texts, str) or not isinstance(texts, Sequence):
        raise InvalidTypeError(f"texts must be a list of strings, got {type(texts).__name__}")
    lines: list[str] = []
    used = 0
    for index, text in enumerate(texts[: settings.summary_max_texts]):
        if not isinstance(text, str):
            raise InvalidTypeError(f"texts[{index}] must be a string, got {type(text).__name__}")
        line = f"{len(lines) + 1}. {' '.join(text.split())}"
        cost = estimate_tokens(line)
        if lines and used + cost > settings.summary_max_tokens_in:
            break
        lines.append(line)
        used += cost
    return [SystemMessage(SUMMARY_PROMPT), HumanMessage("Memories:\n" + "\n".join(lines))]


def parse_summary(reply: Any, settings: LifecycleSettings = DEFAULT_SETTINGS) -> str | None:
    """The one-sentence summary in a chat model reply, or None if the reply is not a usable summary."""
    text = reply_text(reply)
    if not text:
        return None
    text = unfence(text)
    if text.startswith("{"):
        try:
            data = json.loads(text)
        except ValueError:
            return None
        value = data.get("summary") or data.get("fact") if isinstance(data, dict) else None
        if not isinstance(value, str):
            return None
        text = value
    lines = [_LABEL.sub("", line).strip() for line in text.splitlines()]
    text = " ".join(line.lstrip("-*• ").strip() for line in lines if line.strip())
    text = text.strip().strip("\"“”'「」").strip()
    if not text or text.lower().rstrip(".。") in _NO_SUMMARY or _REFUSAL.match(text):
        return None
    if len(text) > settings.summary_max_chars or text.startswith(("{", "[")):
        return None
    return text


def summarize_cluster(
    llm: BaseChatModel, texts: Sequence[str], *, settings: LifecycleSettings = DEFAULT_SETTINGS
) -> str | None:
    """The general fact a group of memories supports, from a chat model; None when there is none.

    Never raises for what the model does: a failed call, junk, a refusal, JSON without a summary
    or "NONE" all give None (and a warning for failures). Texts beyond `summary_max_texts` or the
    `summary_max_tokens_in` budget are left out of the prompt.
    """
    check_chat_model(llm, "summarize_cluster")
    if not [text for text in texts if isinstance(text, str) and text.strip()]:
        return None
    messages = _summary_messages(texts, settings)
    try:
        reply = llm.invoke(messages)
    except Exception as exc:  # any model or network failure
        logger.warning("cluster summary failed: %s: %s", type(exc).__name__, exc)
        return None
    return parse_summary(reply, settings)


async def asummarize_cluster(
    llm: BaseChatModel, texts: Sequence[str], *, settings: LifecycleSettings = DEFAULT_SETTINGS
) -> str | None:
    """Async summarize_cluster: the same answer without blocking the event loop."""
    check_chat_model(llm, "asummarize_cluster")
    if not [text for text in texts if isinstance(text, str) and text.strip()]:
        return None
    messages = _summary_messages(texts, settings)
    try:
        reply = await llm.ainvoke(messages)
    except Exception as exc:  # any model or network failure
        logger.warning("cluster summary failed: %s: %s", type(exc).__name__, exc)
        return None
    return parse_summary(reply, settings)
