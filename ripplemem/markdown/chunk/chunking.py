"""``chunk_text``: one entry point for every chunker, and ``chunker="auto"`` to pick one by content.

Chunkers:

- ``markdown``: headings, paragraphs, whole-paragraph overlap (``markdown_chunker``);
- ``novel``, ``legal``, ``paper``, ``technical``: the same packing with each document type's
  structure (``structure``): chapters and scene breaks, 编/章/节/条 and Articles, numbered and named
  paper sections, code blocks glued to their introduction;
- ``semantic``: boundaries where the meaning of neighbouring paragraphs or sentences shifts
  (``semantic_chunker``); ``news`` is the same with the first line taken as the headline;
- ``auto``: ``structure.detect_document_type`` picks one of the above (legal, paper, novel,
  technical, markdown, else semantic: see its rule order).

Every chunker returns ``Chunk`` records with ``text == source[start:end]`` (no normalisation), in
document order, each of at most ``max_tokens`` by ``ripplemem.core.text.estimate_tokens``, together
holding every non-whitespace character; consecutive chunks share at most ``overlap_tokens`` of
whole paragraphs. Defaults: max_tokens 256, overlap_tokens 64, min_tokens (semantic only)
max_tokens / 5; ``chunk_types`` says why.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from ripplemem.core.choices import Chunker, literal_values
from ripplemem.embedding.base import Embedder
from ripplemem.errors import InvalidInputError
from ripplemem.markdown.chunk.chunk_types import DEFAULT_MAX_TOKENS, DEFAULT_OVERLAP_TOKENS, Chunk
from ripplemem.markdown.chunk.markdown_chunker import check_text, chunk_with_profile
from ripplemem.markdown.chunk.semantic_chunker import chunk_semantic
from ripplemem.markdown.chunk.structure import PROFILES, detect_document_type

ChunkerName = Literal["auto", "markdown", "semantic", "novel", "legal", "paper", "technical", "news"]
CHUNKERS: tuple[str, ...] = literal_values(Chunker)
_SEMANTIC = frozenset({"semantic", "news"})


def resolve_chunker(text: str, chunker: str = "auto") -> str:
    """The chunker that ``chunk_text(text, chunker)`` runs ("auto" becomes a document type)."""
    if not isinstance(chunker, str) or chunker not in CHUNKERS:
        raise InvalidInputError(f"chunker must be one of {', '.join(CHUNKERS)}; got {chunker!r}")
    return detect_document_type(text) if chunker == "auto" else chunker


def chunk_text(
    text: str,
    chunker: ChunkerName | str = "auto",
    *,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    overlap_tokens: int = DEFAULT_OVERLAP_TOKENS,
    min_tokens: int | None = None,
    embedder: Embedder | None = None,
    page_starts: Sequence[int] | None = None,
) -> list[Chunk]:
    """Split a document (Markdown or plain text) into chunks for retrieval.

    ``embedder`` is used by the semantic chunkers only (``HashingEmbedder`` when None; pass the
    store's embedder for boundaries by meaning). ``page_starts``: the offset where each page
    begins, ascending (page 1 first), to set ``Chunk.page``. ``min_tokens`` bounds semantic chunks
    from below and is ignored by the others.
    """
    check_text(text)
    name = resolve_chunker(text, chunker)
    if name in _SEMANTIC:
        return chunk_semantic(
            text,
            embedder=embedder,
            max_tokens=max_tokens,
            min_tokens=min_tokens,
            overlap_tokens=overlap_tokens,
            page_starts=page_starts,
            profile=PROFILES[name],
        )
    return chunk_with_profile(
        text, PROFILES[name], max_tokens=max_tokens, overlap_tokens=overlap_tokens, page_starts=page_starts
    )
