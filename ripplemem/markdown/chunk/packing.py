"""Units, the smallest pieces of a chunk, and their greedy packing into chunks of at most
``max_tokens`` with whole-paragraph overlap."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from ripplemem.markdown.chunk.sentences import token_counts, tokens_from_counts


@dataclass(slots=True)
class Unit:
    """The smallest piece a chunk is made of: a trimmed span of the source and its counts.

    kind: "paragraph" and "code" are whole blocks and may be repeated as overlap; "piece" (part of
    a split block), "heading" and "break" (a scene break) never are.
    """

    start: int
    end: int
    cjk: int
    words: int
    kind: str
    path: tuple[str, ...] = ()  # for a heading: the heading path it opens

    @property
    def whole(self) -> bool:
        """Whether this unit is a whole paragraph or code block (the only things overlap repeats)."""
        return self.kind in ("paragraph", "code")

    @property
    def content(self) -> bool:
        """Whether the unit is text of its own (not a heading line or a scene-break line)."""
        return self.kind not in ("heading", "break")


def make_unit(text: str, start: int, end: int, kind: str) -> Unit:
    """A unit over text[start:end] with its token counts."""
    cjk, words = token_counts(text, start, end)
    return Unit(start, end, cjk, words, kind)


class Span(NamedTuple):
    """Units [first, stop) of a section form one chunk; the first ``overlap`` of them are repeated
    from the chunk before."""

    first: int
    stop: int
    overlap: int


class TokenPrefix:
    """Prefix sums of unit counts, so the tokens of any run of units cost O(1)."""

    def __init__(self, units: Sequence[Unit]) -> None:
        self.cjk = [0]
        self.words = [0]
        for unit in units:
            self.cjk.append(self.cjk[-1] + unit.cjk)
            self.words.append(self.words[-1] + unit.words)

    def tokens(self, first: int, stop: int) -> int:
        """estimate_tokens of units[first:stop] joined as in the source."""
        return tokens_from_counts(self.cjk[stop] - self.cjk[first], self.words[stop] - self.words[first])

    def raw(self, first: int, stop: int) -> int:
        """CJK characters plus words of units[first:stop] (0: no text worth repeating)."""
        return (self.cjk[stop] - self.cjk[first]) + (self.words[stop] - self.words[first])


def overlap_start(
    units: Sequence[Unit],
    prefix: TokenPrefix,
    first_new: int,
    stop: int,
    next_stop: int,
    max_tokens: int,
    overlap_tokens: int,
) -> int:
    """Where the chunk after units[..stop) starts: as many trailing whole paragraphs of
    units[first_new:stop] as fit in overlap_tokens and leave room for units[stop:next_stop].

    Returns ``stop`` when nothing is repeated (also when the candidates hold no words at all).
    """
    start = stop
    while (
        start - 1 >= first_new
        and units[start - 1].whole
        and prefix.tokens(start - 1, stop) <= overlap_tokens
        and prefix.tokens(start - 1, next_stop) <= max_tokens
    ):
        start -= 1
    if start < stop and prefix.raw(start, stop) == 0:
        return stop
    return start


def pack_greedy(units: Sequence[Unit], max_tokens: int, overlap_tokens: int) -> list[Span]:
    """Fill chunks with whole units up to max_tokens; repeat trailing whole paragraphs as overlap."""
    prefix = TokenPrefix(units)
    spans: list[Span] = []
    first, first_new, n = 0, 0, len(units)
    while first < n:
        stop = first_new + 1  # at least one new unit; each unit fits alone
        while stop < n and prefix.tokens(first, stop + 1) <= max_tokens:
            stop += 1
        spans.append(Span(first, stop, first_new - first))
        if stop >= n:
            break
        # The overlap comes from this chunk's new units, never from its own first unit.
        next_first = overlap_start(
            units, prefix, max(first_new, first + 1), stop, stop + 1, max_tokens, overlap_tokens
        )
        first, first_new = next_first, stop
    return spans
