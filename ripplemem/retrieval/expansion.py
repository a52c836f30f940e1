"""Query expansion with any LangChain chat model: MQE rewrites and HyDE passages.

Where the numbers come from: docs/design-notes.md#query-expansion.

MQE asks for n rewrites of the query in other words, which lifts recall for vague or colloquial
queries; HyDE asks for a hypothetical answer passage, whose embedding sits nearer the real answer
than the question's does. Every expansion is searched, the candidates pooled
(`candidate_pool_size`) and fused by rank (`fuse_by_rank`; a recall's searches by `fuse_expanded`).
Bad model output is retried and, when tries run out, expansion falls back to the original query
with a logged warning: it never raises for what the model said.
Reading the replies is `expansion_replies`'s job.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Hashable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from ripplemem.core.choices import ExpandMode, literal_values
from ripplemem.core.types import Hit, Recall, Subgraph
from ripplemem.core.validation import check_count, check_nonblank_text
from ripplemem.errors import InvalidInputError, InvalidTypeError
from ripplemem.llm.chat import (
    ChatTask,
    LLMRequiredError,
    answer_language_rule,
    arun_tasks,
    require_llm,
    run_tasks,
)
from ripplemem.llm.expansion_replies import dedupe_texts, parse_passage, parse_queries
from ripplemem.retrieval.pipeline import merge_subgraphs

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import BaseMessage

__all__ = [
    "EXPAND_MODES",
    "POOL_MINIMUM",
    "POOL_MULTIPLIER",
    "RRF_K",
    "Expansion",
    "LLMRequiredError",
    "QueryExpander",
    "acandidate_search",
    "candidate_pool_size",
    "candidate_search",
    "check_expand",
    "expand_query",
    "fuse_by_rank",
    "fuse_expanded",
    "parse_passage",
    "parse_queries",
]

logger = logging.getLogger("ripplemem.retrieval.expansion")

EXPAND_MODES = literal_values(ExpandMode)
# The HelloAgents memory chapter's "candidate_pool_multiplier=4", with a floor: pool = max(4 x k, 20).
POOL_MULTIPLIER = 4
POOL_MINIMUM = 20
# Reciprocal-rank fusion constant of Cormack, Clarke and Buettcher (SIGIR 2009), the usual default:
# it damps the gap between rank 1 and rank 2 so that agreement across lists outweighs one top spot.
RRF_K = 60

MQE_PROMPT = """\
You rewrite search queries for a search over a person's memories and documents.
Write {n} different rewrites of the query that keep its meaning but use other words: synonyms, \
a more formal and a more colloquial wording, or the question spelled out. Keep names, numbers \
and dates exactly as written. Do not answer the query.
{language}
Reply with only a JSON array of {n} strings, like ["...", "..."], and nothing else.\
"""
MQE_RETRY = "That reply was not usable: {error}. Reply again with only a JSON array of {n} rewritten queries."
HYDE_PROMPT = """\
You write the passage that would answer a question, as it might read in a note, a document or a \
past conversation. Write about {words} words of plain statements, with no preamble, no caveats \
and no questions. If you do not know the facts, write a plausible passage anyway: it is only used \
to search for real text and is never shown as an answer.
{language}\
"""
HYDE_RETRY = "That reply was not usable: {error}. Reply again with only the passage."


def candidate_pool_size(k: int, *, multiplier: int = POOL_MULTIPLIER, minimum: int = POOL_MINIMUM) -> int:
    """How many candidates each expanded query fetches for k final hits: max(4 x k, 20)."""
    check_count("k", k, minimum=1)
    return max(multiplier * k, minimum)


def fuse_by_rank(
    ranked_lists: Sequence[Sequence[Hashable]],
    k: int | None = None,
    *,
    weights: Sequence[float] | None = None,
    rrf_k: int = RRF_K,
) -> list[tuple[Any, float]]:
    """Reciprocal-rank fusion: each id scores sum(weight / (rrf_k + rank)) over the lists, rank from 1.

    An id repeated inside one list counts at its best rank only. Ties keep the order in which
    ids were first seen (earlier lists first), so the original query's list wins ties when it
    comes first. Returns (id, score) best first, at most k of them (all when k is None).
    """
    if isinstance(ranked_lists, (str, bytes)) or not isinstance(ranked_lists, Sequence):
        raise InvalidTypeError(
            f"ranked_lists must be a list of ranked id lists, got {type(ranked_lists).__name__}"
        )
    if k is not None:
        check_count("k", k, minimum=1)
    check_count("rrf_k", rrf_k, minimum=0)
    if weights is None:
        weights = [1.0] * len(ranked_lists)
    elif len(weights) != len(ranked_lists):
        raise InvalidInputError(f"weights has {len(weights)} entries for {len(ranked_lists)} ranked lists")
    scores: dict[Any, float] = {}
    for index, (ranked, weight) in enumerate(zip(ranked_lists, weights, strict=True)):
        if isinstance(ranked, (str, bytes)) or not isinstance(ranked, Sequence):
            raise InvalidTypeError(
                f"ranked_lists[{index}] must be a list of ids, got {type(ranked).__name__}"
            )
        seen: set[Any] = set()
        for rank, item in enumerate(ranked, start=1):
            if item in seen:
                continue
            seen.add(item)
            scores[item] = scores.get(item, 0.0) + float(weight) / (rrf_k + rank)
    fused = sorted(scores.items(), key=lambda pair: -pair[1])  # stable: first-seen order breaks ties
    return fused if k is None else fused[:k]


def candidate_search(
    queries: Sequence[str],
    search: Callable[[str, int], Sequence[Hashable]],
    k: int,
    *,
    weights: Sequence[float] | None = None,
) -> list[tuple[Any, float]]:
    """Search every query for a pool of candidates and fuse the lists by rank.

    `search(query, pool)` returns ids best first; the result keeps the fused pool (not just k),
    so that the caller's own scoring chooses the final k.
    """
    pool = candidate_pool_size(k)
    return fuse_by_rank([list(search(query, pool)) for query in queries], pool, weights=weights)


async def acandidate_search(
    queries: Sequence[str],
    search: Callable[[str, int], Awaitable[Sequence[Hashable]]],
    k: int,
    *,
    weights: Sequence[float] | None = None,
) -> list[tuple[Any, float]]:
    """Async candidate_search: the searches run concurrently."""
    import asyncio

    pool = candidate_pool_size(k)
    lists = await asyncio.gather(*(search(query, pool) for query in queries))
    return fuse_by_rank([list(found) for found in lists], pool, weights=weights)


def check_expand(expand: Any, llm: Any, *, how: str = "pass llm=... to RippleMem(...)") -> str | None:
    """Validate a recall(expand=...) argument against the model at hand; returns the mode or None.

    Raises InvalidInputError for an unknown mode and LLMRequiredError when a mode is asked for
    without a model ("expand='mqe' needs an LLM: pass llm=... to RippleMem(...)").
    """
    if expand is None or expand is False:
        return None
    if not isinstance(expand, str) or expand not in EXPAND_MODES:
        raise InvalidInputError(f"expand must be one of 'mqe', 'hyde', 'both' or None, got {expand!r}")
    require_llm(llm, f"expand={expand!r}", how)
    return expand


@dataclass(frozen=True)
class Expansion:
    """What one query expanded into, and what went wrong if the model gave nothing usable."""

    query: str
    mode: str
    paraphrases: tuple[str, ...] = ()
    passage: str | None = None
    problems: tuple[str, ...] = ()

    @property
    def queries(self) -> list[str]:
        """The texts to search, original first, then the rewrites, then the HyDE passage."""
        texts = [self.query, *self.paraphrases, *([self.passage] if self.passage else [])]
        return dedupe_texts(texts)

    @property
    def fell_back(self) -> bool:
        """True when the model added nothing and only the original query is left."""
        return len(self.queries) == 1


class QueryExpander:
    """Expands a query with a chat model: MQE rewrites, a HyDE passage, or both."""

    def __init__(
        self,
        llm: BaseChatModel | None,
        *,
        n_queries: int = 3,
        max_retries: int = 1,
        passage_words: int = 100,
        max_passage_chars: int = 2000,
        max_concurrency: int | None = None,
    ) -> None:
        self.llm = require_llm(llm, "QueryExpander", "pass a LangChain chat model as llm")
        check_count("n_queries", n_queries, minimum=1)
        check_count("max_retries", max_retries, minimum=0)
        check_count("passage_words", passage_words, minimum=10)
        check_count("max_passage_chars", max_passage_chars, minimum=100)
        self.n_queries = n_queries
        self.max_retries = max_retries
        self.passage_words = passage_words
        self.max_passage_chars = max_passage_chars
        self.max_concurrency = max_concurrency

    # -- public API ---------------------------------------------------------------------------

    def mqe(self, query: str) -> list[str]:
        """The query followed by up to n_queries rewrites; just [query] if the model gave none."""
        return self.expansion(query, "mqe").queries

    async def amqe(self, query: str) -> list[str]:
        """Async mqe."""
        return (await self.aexpansion(query, "mqe")).queries

    def hyde(self, query: str) -> str:
        """A hypothetical answer passage to embed; the query itself if the model gave none."""
        return self.expansion(query, "hyde").passage or query.strip()

    async def ahyde(self, query: str) -> str:
        """Async hyde."""
        return (await self.aexpansion(query, "hyde")).passage or query.strip()

    def expand(self, query: str, mode: str = "mqe") -> list[str]:
        """The texts to search for a query: the original first, then what `mode` added."""
        return self.expansion(query, mode).queries

    async def aexpand(self, query: str, mode: str = "mqe") -> list[str]:
        """Async expand."""
        return (await self.aexpansion(query, mode)).queries

    def expansion(self, query: str, mode: str = "mqe") -> Expansion:
        """The full expansion record; in "both" mode the two requests go out as one batch."""
        query, tasks = self._tasks(query, mode)
        run_tasks(self.llm, list(tasks.values()), max_concurrency=self.max_concurrency)
        return self._collect(query, mode, tasks)

    async def aexpansion(self, query: str, mode: str = "mqe") -> Expansion:
        """Async expansion; in "both" mode the two requests run concurrently."""
        query, tasks = self._tasks(query, mode)
        await arun_tasks(self.llm, list(tasks.values()), max_concurrency=self.max_concurrency)
        return self._collect(query, mode, tasks)

    def mqe_messages(self, query: str) -> list[BaseMessage]:
        """The conversation the model is first shown for MQE."""
        from langchain_core.messages import HumanMessage, SystemMessage

        system = MQE_PROMPT.format(n=self.n_queries, language=answer_language_rule(query))
        return [SystemMessage(system), HumanMessage(f"Query: {query}")]

    def hyde_messages(self, query: str) -> list[BaseMessage]:
        """The conversation the model is first shown for HyDE."""
        from langchain_core.messages import HumanMessage, SystemMessage

        system = HYDE_PROMPT.format(
            words=self.passage_words, language=answer_language_rule(query, "the question")
        )
        return [SystemMessage(system), HumanMessage(f"Question: {query}")]

    # -- internals ------------------------------------------------------------------------------

    def _tasks(self, query: Any, mode: Any) -> tuple[str, dict[str, ChatTask[Any]]]:
        query = check_nonblank_text("query", query)
        if mode not in EXPAND_MODES:
            raise InvalidInputError(f"mode must be one of 'mqe', 'hyde' or 'both', got {mode!r}")
        tasks: dict[str, ChatTask[Any]] = {}
        if mode in ("mqe", "both"):
            tasks["mqe"] = ChatTask(
                self.mqe_messages(query),
                lambda reply: parse_queries(reply, query, self.n_queries),
                MQE_RETRY.replace("{n}", str(self.n_queries)),
                self.max_retries,
            )
        if mode in ("hyde", "both"):
            tasks["hyde"] = ChatTask(
                self.hyde_messages(query),
                lambda reply: parse_passage(reply, query, self.max_passage_chars),
                HYDE_RETRY,
                self.max_retries,
            )
        return query, tasks

    def _collect(self, query: str, mode: str, tasks: dict[str, ChatTask[Any]]) -> Expansion:
        problems = []
        for kind, task in tasks.items():
            if task.error is not None:
                # The query stays out of the log: it is the user's.
                logger.warning("query expansion (%s) fell back to the original query: %s", kind, task.error)
                problems.append(f"{kind}: {task.error}")
        mqe, hyde = tasks.get("mqe"), tasks.get("hyde")
        return Expansion(
            query=query,
            mode=mode,
            paraphrases=tuple(mqe.result) if mqe is not None and mqe.ok and mqe.result else (),
            passage=hyde.result if hyde is not None and hyde.ok else None,
            problems=tuple(problems),
        )


def expand_query(llm: BaseChatModel, query: str, mode: str) -> tuple[list[str], dict[str, object]]:
    """The texts to search for an expanded query (original first) and ``Recall.expansion``, the
    record of the expansion."""
    expansion = QueryExpander(llm).expansion(query, mode)
    described: dict[str, object] = {
        "mode": mode,
        "queries": expansion.queries,
        "problems": list(expansion.problems),
    }
    return expansion.queries, described


def fuse_expanded(query: str, results: Sequence[Recall], k: int) -> Recall:
    """One recall from the searches of every expanded query (each a candidate pool), fused by rank:
    the original query's list first, so it wins ties."""
    best: dict[str, Hit] = {}
    for result in results:
        for hit in result.hits:
            best.setdefault(hit.memory.id, hit)
    fused = fuse_by_rank([[hit.memory.id for hit in result.hits] for result in results], k)
    hits = [
        replace(best[memory_id], score=score, components={**best[memory_id].components, "rank_fusion": score})
        for memory_id, score in fused
    ]
    subgraph = Subgraph()
    for result in results:
        subgraph = merge_subgraphs(subgraph, result.subgraph)
    return Recall(query=query, hits=hits, mode=results[0].mode, subgraph=subgraph)
