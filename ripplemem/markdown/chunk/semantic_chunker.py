"""Semantic boundary chunking for text without structure (docs/design-notes.md#chunking).

Units are the same as the Markdown chunker's (paragraphs; sentences of a paragraph that is too
long), each embedded once with an ``Embedder``. Between units ``g-1`` and ``g``:

- ``within`` is the mean cosine similarity of neighbouring pairs inside the ``window`` units
  before the gap and inside the ``window`` units after it (1.0 when a window has one unit), and
  ``cross`` the mean similarity of every (before, after) pair;
- the gap is a topic boundary when ``cross < threshold * within`` (window_size 3,
  threshold 0.5) and ``cross`` is no higher than at the gaps beside it (the bottom of the dip,
  not its shoulder).

Chunks are then read left to right: a chunk ends at the first boundary once it holds at least
``min_tokens`` of new text; a chunk that would pass ``max_tokens`` first is cut at the gap of
lowest ``cross`` similarity that leaves it ``min_tokens``. Only such forced cuts get an overlap
(whole trailing paragraphs up to ``overlap_tokens``, as in the Markdown chunker): a real topic
boundary needs none. A last chunk under ``min_tokens`` joins the one before it when both fit in
``max_tokens``.
Headings (when there are any) still split the text into sections first.

Defaults: window 3 and threshold 0.5; min_tokens = max_tokens / 5 (the source's 200 : 1000
characters). Without an embedder, ``HashingEmbedder`` stands in: boundaries then come
from shifts in vocabulary (lexical cohesion, as in TextTiling) rather than meaning.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ripplemem.embedding.base import Embedder
from ripplemem.embedding.embedders import HashingEmbedder
from ripplemem.errors import InvalidInputError
from ripplemem.markdown.chunk.chunk_types import (
    DEFAULT_MAX_TOKENS,
    DEFAULT_MIN_TOKENS_RATIO,
    DEFAULT_OVERLAP_TOKENS,
    Chunk,
)
from ripplemem.markdown.chunk.markdown_chunker import (
    Profile,
    assemble,
    check_page_starts,
    check_sizes,
    check_text,
    parse_sections,
)
from ripplemem.markdown.chunk.packing import Span, TokenPrefix, Unit, overlap_start

DEFAULT_WINDOW = 3
DEFAULT_THRESHOLD = 0.5
SEMANTIC = Profile("semantic")


def gap_scores(embeddings: np.ndarray, window: int = DEFAULT_WINDOW) -> tuple[np.ndarray, np.ndarray]:
    """For each gap g = 1..n-1 (before unit g): (within, cross) similarities of the windows.

    Returns two arrays of length n, index 0 unused (0.0).
    """
    vectors = np.asarray(embeddings, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    unit = vectors / norms
    n = len(unit)
    # Only pairs within the window are compared: an n x n similarity matrix of a long text
    # without headings (60,000 sentences: 14 GB) would exhaust memory.
    neighbour = np.einsum("ij,ij->i", unit[:-1], unit[1:]) if n > 1 else np.zeros(0, dtype=np.float32)
    within = np.zeros(n, dtype=np.float64)
    cross = np.zeros(n, dtype=np.float64)
    for gap in range(1, n):
        lo, hi = max(0, gap - window), min(n, gap + window)
        pairs = np.concatenate([neighbour[lo : gap - 1], neighbour[gap : hi - 1]])
        within[gap] = float(pairs.mean()) if len(pairs) else 1.0
        cross[gap] = float((unit[lo:gap] @ unit[gap:hi].T).mean())
    return within, cross


def boundary_gaps(within: np.ndarray, cross: np.ndarray, threshold: float = DEFAULT_THRESHOLD) -> np.ndarray:
    """A boolean per gap: a topic boundary (the source's test, at a valley of the cross similarity)."""
    n = len(within)
    strong = np.zeros(n, dtype=bool)
    for gap in range(1, n):
        if cross[gap] >= threshold * within[gap]:
            continue
        left = cross[gap - 1] if gap > 1 else np.inf
        right = cross[gap + 1] if gap + 1 < n else np.inf
        strong[gap] = cross[gap] <= left and cross[gap] <= right
    return strong


class SemanticChunker:
    """Cuts text where the meaning shifts, within min/max token bounds (see the module docstring)."""

    def __init__(
        self,
        embedder: Embedder | None = None,
        *,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        min_tokens: int | None = None,
        overlap_tokens: int = DEFAULT_OVERLAP_TOKENS,
        window: int = DEFAULT_WINDOW,
        threshold: float = DEFAULT_THRESHOLD,
    ) -> None:
        check_sizes(max_tokens, overlap_tokens)
        if min_tokens is None:
            min_tokens = max(1, max_tokens // DEFAULT_MIN_TOKENS_RATIO)
        if not 0 <= min_tokens <= max_tokens:
            raise InvalidInputError(f"min_tokens must be between 0 and max_tokens, got {min_tokens}")
        if window < 1:
            raise InvalidInputError(f"window must be >= 1, got {window}")
        self.embedder: Embedder = embedder if embedder is not None else HashingEmbedder()
        self.max_tokens = max_tokens
        self.min_tokens = min_tokens
        self.overlap_tokens = overlap_tokens
        self.window = window
        self.threshold = threshold

    def chunk(
        self, text: str, *, page_starts: Sequence[int] | None = None, profile: Profile = SEMANTIC
    ) -> list[Chunk]:
        """Chunks of ``text``; ``profile`` adds heading rules (e.g. a news headline)."""
        check_text(text)
        starts = check_page_starts(page_starts)
        sections = parse_sections(text, profile, self.max_tokens)
        needs = [s for s in sections if TokenPrefix(s.units).tokens(0, len(s.units)) > self.max_tokens]
        texts = [text[u.start : u.end] for s in needs for u in s.units]
        vectors = np.asarray(self.embedder.embed_documents(texts)) if texts else np.zeros((0, 1))
        if len(vectors) != len(texts):
            raise InvalidInputError(f"the embedder returned {len(vectors)} vectors for {len(texts)} texts")
        by_section: dict[int, np.ndarray] = {}
        offset = 0
        for section in needs:
            by_section[id(section)] = vectors[offset : offset + len(section.units)]
            offset += len(section.units)
        packs = []
        for section in sections:
            embeddings = by_section.get(id(section))
            if embeddings is None:
                packs.append([Span(0, len(section.units), 0)])
            else:
                packs.append(self.pack(section.units, embeddings))
        return assemble(text, sections, packs, profile.name, starts)

    def pack(self, units: Sequence[Unit], embeddings: np.ndarray) -> list[Span]:
        """Spans of units cut at topic boundaries, each within max_tokens."""
        n = len(units)
        within, cross = gap_scores(embeddings, self.window)
        strong = boundary_gaps(within, cross, self.threshold)
        prefix = TokenPrefix(units)
        spans: list[Span] = []
        first = first_new = 0
        while first < n:
            stop = first_new + 1
            forced = False
            while stop < n:
                if (
                    strong[stop]
                    and units[stop - 1].content
                    and prefix.tokens(first_new, stop) >= self.min_tokens
                ):
                    break
                if prefix.tokens(first, stop + 1) > self.max_tokens:
                    stop = self._best_cut(units, prefix, cross, first_new, stop)
                    forced = True
                    break
                stop += 1
            spans.append(Span(first, stop, first_new - first))
            if stop >= n:
                break
            next_first = stop
            if forced:
                next_first = overlap_start(
                    units,
                    prefix,
                    max(first_new, first + 1),
                    stop,
                    stop + 1,
                    self.max_tokens,
                    self.overlap_tokens,
                )
            first, first_new = next_first, stop
        if len(spans) > 1:
            last, before = spans[-1], spans[-2]
            if (
                prefix.tokens(last.first + last.overlap, n) < self.min_tokens
                and prefix.tokens(before.first, n) <= self.max_tokens
            ):
                spans[-2:] = [Span(before.first, n, before.overlap)]
        return spans

    def _best_cut(
        self, units: Sequence[Unit], prefix: TokenPrefix, cross: np.ndarray, first_new: int, stop: int
    ) -> int:
        """The gap in (first_new, stop] least similar across that leaves min_tokens (and some
        text, not only headings) before it; ``stop`` when there is none."""
        best, best_cross = stop, np.inf
        for gap in range(first_new + 1, stop + 1):
            if (
                units[gap - 1].content
                and prefix.tokens(first_new, gap) >= self.min_tokens
                and cross[gap] < best_cross
            ):
                best, best_cross = gap, float(cross[gap])
        return best


def chunk_semantic(
    text: str,
    *,
    embedder: Embedder | None = None,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    min_tokens: int | None = None,
    overlap_tokens: int = DEFAULT_OVERLAP_TOKENS,
    page_starts: Sequence[int] | None = None,
    profile: Profile = SEMANTIC,
) -> list[Chunk]:
    """Split unstructured text at topic shifts (see the module docstring)."""
    chunker = SemanticChunker(
        embedder, max_tokens=max_tokens, min_tokens=min_tokens, overlap_tokens=overlap_tokens
    )
    return chunker.chunk(text, page_starts=page_starts, profile=profile)
