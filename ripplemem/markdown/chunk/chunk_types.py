"""The Chunk record every chunker returns, the shared size defaults, and page lookup.

Defaults (the HelloAgents memory chapter gives the method, "paragraphs as the smallest unit, token
estimates tuned for mixed Chinese and English, an overlap step", but no numbers;
docs/design-notes.md#chunking):

- ``DEFAULT_MAX_TOKENS = 256``: the window of the default embedder, all-MiniLM-L6-v2
  (max_seq_length 256), so a chunk is embedded whole instead of being cut at its 256th token.
  hello-agents' 800 "tokens" were mostly past that window.
- ``DEFAULT_OVERLAP_TOKENS = 64``: a quarter of a chunk at most. Overlap is made of whole
  paragraphs, so the real overlap is the trailing paragraphs that fit in 64 tokens, often none.
- ``DEFAULT_MIN_TOKENS_RATIO = 5``: the semantic chunker's smallest chunk is max_tokens / 5, the
  ratio of the semantic-boundary chunking source's min_chunk_size 200 to max_chunk_size 1000.

Token counts are ``ripplemem.core.text.estimate_tokens``: one per CJK character, 1.3 per other word.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

DEFAULT_MAX_TOKENS = 256
DEFAULT_OVERLAP_TOKENS = 64
DEFAULT_MIN_TOKENS_RATIO = 5
BREADCRUMB_SEPARATOR = " > "


@dataclass(frozen=True)
class Chunk:
    """One piece of a document: exactly ``source[start:end]``, with where it sits in the outline.

    ``text`` is never rewritten: it is the input slice from the first to the last non-whitespace
    character of the chunk. ``overlap`` counts the leading characters that the previous chunk
    also holds (whole paragraphs repeated for context; 0 for the first chunk and when a cut falls
    inside a paragraph). ``page`` / ``end_page`` are the 1-based pages (slides, sheets) of its
    first and last character, when the input came with page start offsets.
    """

    text: str
    index: int
    start: int
    end: int
    heading_path: tuple[str, ...] = ()
    tokens: int = 0
    overlap: int = 0
    page: int | None = None
    end_page: int | None = None
    chunker: str = "markdown"

    @property
    def breadcrumb(self) -> str:
        """The heading path as one line, "H1 > H2 > H3" ("" outside any heading)."""
        return BREADCRUMB_SEPARATOR.join(self.heading_path)

    @property
    def new_text(self) -> str:
        """The text without the overlap repeated from the previous chunk."""
        return self.text[self.overlap :]

    @property
    def embed_text(self) -> str:
        """What to embed: the breadcrumb on its own line, then the text (a chunk deep inside a
        section does not contain its headings, so their words would be lost otherwise)."""
        if not self.heading_path:
            return self.text
        return f"{self.breadcrumb}\n\n{self.text}"


def page_of(offset: int, page_starts: Sequence[int]) -> int | None:
    """The 1-based page holding ``offset``, given each page's start offset in ascending order.

    None when there are no pages or the offset lies before the first one (the same reading as
    ``ConvertedDocument.page_of``).
    """
    return bisect_right(page_starts, offset) or None
