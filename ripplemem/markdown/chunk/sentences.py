"""Token estimates, sentence spans and the splitting of oversized text (sentences, lines, words)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

# --- token counting --------------------------------------------------------------------------
# The same ranges and word rule as ripplemem.core.text.estimate_tokens (tests check they agree), kept
# as (cjk, words) counts so that the count of a span of units is the sum of the units' counts.
_CJK = "\u3400-\u4dbf\u4e00-\u9fff\u3040-\u30ff\uac00-\ud7af"
_CJK_CHAR_RE = re.compile(rf"[{_CJK}]")
_WORD_RE = re.compile(rf"[^\W_{_CJK}]+")
_ATOM_RE = re.compile(rf"[{_CJK}]|[^\W_{_CJK}]+|\s+|.", re.DOTALL)
WORD_WEIGHT = 1.3


def token_counts(text: str, start: int = 0, end: int | None = None) -> tuple[int, int]:
    """(CJK characters, other words) in ``text[start:end]``."""
    stop = len(text) if end is None else end
    return len(_CJK_CHAR_RE.findall(text, start, stop)), len(_WORD_RE.findall(text, start, stop))


def tokens_from_counts(cjk: int, words: int) -> int:
    """The estimate_tokens value of a non-empty text with these counts."""
    return max(1, cjk + round(words * WORD_WEIGHT))


# --- sentences -------------------------------------------------------------------------------
_CLOSERS = "\"'”’」』》）)\\]】"
_SENTENCE_END_RE = re.compile(
    rf"[。！？；]+[{_CLOSERS}]*"
    rf"|[.!?]+[{_CLOSERS}]*(?=\s|$|[{_CJK}])"
)
_ABBREVIATIONS = frozenset(
    {
        "mr",
        "mrs",
        "ms",
        "dr",
        "prof",
        "st",
        "vs",
        "etc",
        "e.g",
        "i.e",
        "fig",
        "figs",
        "no",
        "nos",
        "inc",
        "ltd",
        "jr",
        "sr",
        "cf",
        "al",
        "eq",
        "eqs",
        "approx",
        "dept",
    }
)
_ENUMERATOR_RE = re.compile(r"\s*(?:\d{1,3}|[A-Za-z]|[ivxIVX]{1,4})")
_LAST_WORD_RE = re.compile(r"([A-Za-z][A-Za-z.]*)\.$")
_LINE_RE = re.compile(r"[^\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]+")
_SOFT_BREAK = frozenset(",，、:：;；)）—–-/")


def trim(text: str, start: int, end: int) -> tuple[int, int]:
    """Shrink [start, end) to its first and last non-whitespace characters (empty -> start == end)."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _is_abbreviation(text: str, match_start: int, line_start: int) -> bool:
    """A "." that ends "Dr.", an initial ("J.") or a list number ("1.") is not a sentence end."""
    if text[match_start] != ".":
        return False
    if _ENUMERATOR_RE.fullmatch(text, line_start, match_start):
        return True
    word = _LAST_WORD_RE.search(text, max(line_start, match_start - 12), match_start + 1)
    if word is None:
        return False
    token = word.group(1).lower().rstrip(".")
    return token in _ABBREVIATIONS or (len(token) == 1 and text[word.start(1)].isupper())


def sentence_spans(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """Trimmed sentence spans of ``text[start:end]``: cut after . ! ? (before a space or CJK text)
    and after 。！？； (anywhere), closing quotes and brackets staying with their sentence."""
    stop = len(text) if end is None else end
    spans: list[tuple[int, int]] = []
    cursor = start
    for match in _SENTENCE_END_RE.finditer(text, start, stop):
        if _is_abbreviation(text, match.start(), cursor):
            continue
        span = trim(text, cursor, match.end())
        if span[0] < span[1]:
            spans.append(span)
        cursor = match.end()
    span = trim(text, cursor, stop)
    if span[0] < span[1]:
        spans.append(span)
    return spans


def split_sentences(text: str) -> list[str]:
    """The sentences of a text, English and Chinese (see ``sentence_spans``)."""
    return [text[s:e] for s, e in sentence_spans(text)]


def _line_spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    spans = []
    for match in _LINE_RE.finditer(text, start, end):
        span = trim(text, match.start(), match.end())
        if span[0] < span[1]:
            spans.append(span)
    return spans


def _hard_spans(text: str, start: int, end: int, max_tokens: int) -> list[tuple[int, int]]:
    """Cut a span with no usable sentence or line break into pieces of at most max_tokens,
    between words / CJK characters, preferring a space or comma in the piece's second half."""
    atoms: list[tuple[int, int, int, int, bool]] = []  # start, end, cjk, words, soft cut after
    for match in _ATOM_RE.finditer(text, start, end):
        piece = match.group()
        if _CJK_CHAR_RE.fullmatch(piece):
            atoms.append((match.start(), match.end(), 1, 0, False))
        elif _WORD_RE.fullmatch(piece):
            atoms.append((match.start(), match.end(), 0, 1, False))
        else:
            atoms.append((match.start(), match.end(), 0, 0, piece.isspace() or piece in _SOFT_BREAK))
    pieces: list[tuple[int, int]] = []
    i, n = 0, len(atoms)
    while i < n:
        cjk = words = 0
        j = i
        best_soft = -1
        while j < n:
            c, w = cjk + atoms[j][2], words + atoms[j][3]
            if j > i and tokens_from_counts(c, w) > max_tokens:
                break
            cjk, words = c, w
            j += 1
            if atoms[j - 1][4] and tokens_from_counts(cjk, words) * 2 >= max_tokens:
                best_soft = j
        cut = j if j == n or best_soft <= i else best_soft
        span = trim(text, atoms[i][0], atoms[cut - 1][1])
        if span[0] < span[1]:
            pieces.append(span)
        i = cut
    return pieces


def split_oversized(
    text: str, start: int, end: int, max_tokens: int, *, code: bool = False
) -> list[tuple[int, int]]:
    """Pieces of at most max_tokens: sentences (not for code), then lines, then hard cuts."""
    levels: list[_Splitter] = [_line_spans]
    if not code:
        levels.insert(0, sentence_spans)
    return _split_levels(text, start, end, max_tokens, levels)


_Splitter = Callable[[str, int, int], list[tuple[int, int]]]


def _split_levels(
    text: str, start: int, end: int, max_tokens: int, levels: Sequence[_Splitter]
) -> list[tuple[int, int]]:
    if tokens_from_counts(*token_counts(text, start, end)) <= max_tokens:
        return [(start, end)]
    if not levels:
        return _hard_spans(text, start, end, max_tokens)
    parts = levels[0](text, start, end)
    if len(parts) <= 1:
        return _split_levels(text, start, end, max_tokens, levels[1:])
    pieces: list[tuple[int, int]] = []
    for s, e in parts:
        pieces.extend(_split_levels(text, s, e, max_tokens, levels[1:]))
    return pieces
