"""Heading-aware Markdown chunking: headings -> paragraphs -> token estimate -> overlap
(docs/design-notes.md#chunking).

The document is read as a sequence of *sections* (a heading and the blocks under it) made of
*units*, then each section's units are packed greedily into chunks of at most ``max_tokens``:

- A unit is a paragraph (a blank-line separated block), a fenced code block, or a heading line.
  A block whose lines are paragraphs of their own (lines ending in a sentence terminator, lines
  indented like Chinese novel text, list items, table rows) gives one unit per line.
- A unit over ``max_tokens`` is split: paragraphs at sentence ends (``. ! ?`` before a space,
  not after "Dr." or a list number "1."; ``。！？；`` anywhere), then at line breaks, then hard
  between words or CJK characters as the last resort (preferring a space or a comma in the
  second half of the piece). Code fences are kept whole unless one fence alone is over
  ``max_tokens``; then it is split between lines.
- Chunks never cross a heading: every chunk belongs to one section, and its ``heading_path`` is
  that section's headings ("H1 > H2" as ``breadcrumb``). A heading with no text of its own before
  the next heading joins the next section's first chunk, and a section's first paragraph is split
  if needed so that its opening sentences share a chunk with the headings (a chunk of bare
  headings finds nothing); a code block that fits is not split for that.
- Overlap is made only of whole paragraphs (or whole code blocks): after a chunk is cut, the next
  one starts with as many of its trailing paragraphs as fit in ``overlap_tokens`` (and still
  leave room for new text). Pieces of a split paragraph, headings, and text before the chunk's
  own new text are never repeated, so a character is in at most two consecutive chunks.

So no chunk's ``estimate_tokens(text)`` exceeds ``max_tokens`` (no unit is unsplittable: one word
or one CJK character counts as one token), every non-whitespace character of the input is in a
chunk, ``chunk.text == source[chunk.start:chunk.end]``, and the loop always advances by at least
one new unit, so it ends.

Defaults: ``max_tokens=256`` and ``overlap_tokens=64`` (see ``chunk_types`` for why). Sentence
splitting lives in ``sentences.py``, units and the greedy packing in ``packing.py``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import NamedTuple

from ripplemem.errors import InvalidInputError, InvalidTypeError
from ripplemem.markdown.chunk.chunk_types import DEFAULT_MAX_TOKENS, DEFAULT_OVERLAP_TOKENS, Chunk, page_of
from ripplemem.markdown.chunk.packing import Span, TokenPrefix, Unit, make_unit, pack_greedy
from ripplemem.markdown.chunk.sentences import split_oversized, token_counts, tokens_from_counts, trim


# --- sections ----------------------------------------------------------------------------------
@dataclass
class Section:
    """The units under one heading path; chunks never mix two sections."""

    heading_path: tuple[str, ...]
    units: list[Unit] = field(default_factory=list)


class HeadingMatch(NamedTuple):
    """A line recognised as a heading: its outline level, its title, whether the line is body
    text too (a legal article, "第一条 为了……", starts a section and is its first paragraph), and
    whether it is a bare label waiting for a subtitle line."""

    level: int
    title: str
    inline: bool = False
    # The line is only a label ("CHAPTER I", "第一章"): a short line after it is its subtitle.
    bare: bool = False


HeadingRule = Callable[[str], "HeadingMatch | None"]


@dataclass(frozen=True)
class Profile:
    """What a document type adds to plain Markdown: heading patterns, scene breaks, code glue."""

    name: str = "markdown"
    heading_rules: tuple[HeadingRule, ...] = ()
    scene_breaks: bool = False
    glue_code_intro: bool = False
    first_line_title: bool = False


ATX_RE = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
FENCE_OPEN_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
FENCE_CLOSE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})[ \t]*$")
_SETEXT_RE = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_THEMATIC_BREAK_RE = re.compile(r"^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_SCENE_BREAK_RE = re.compile(r"^(?:[*＊·•◇◆○●☆★※#~～=_\-][\s　]*){3,}$|^(?:——)+$|^[…]{2,}$|^\*$")
_EMPHASIS_RE = re.compile(r"^(\*\*|__|\*|_)(.+?)\1")
_ITEM_START_RE = re.compile(r"^(?:[-*+•·]\s|\d{1,3}[.)、]\s?|[（(][一二三四五六七八九十\d]{1,3}[)）]|\|)")
_NOT_SUBTITLE_END = frozenset('。！？.!?；;，,:："”’」』)）')
_NOT_SUBTITLE_START = frozenset('"“‘「『(（[-*•·|>')
_SENTENCE_INSIDE_RE = re.compile(r"[。！？]|[.!?;]\s")
_BLANK_LINE_RE = re.compile(r"[^\S\n]*\n")
_BREAK_ENDINGS = frozenset('。！？!?.…"”’」』）);；')


def plain_line(line: str) -> str:
    """A stripped line with leading bold/italic markers removed ("**第一条** 为了" -> "第一条 为了")."""
    stripped = line.strip()
    match = _EMPHASIS_RE.match(stripped)
    if match:
        stripped = (match.group(2) + stripped[match.end() :]).strip()
    return stripped


def _lines_are_paragraphs(text: str, lines: Sequence[tuple[int, int, int]]) -> bool:
    """Whether most line ends in a block look like paragraph ends (not a hard-wrapped paragraph)."""
    breaks = 0
    for (_, _, end), (next_line, next_start, _) in pairwise(lines):
        indent = text[next_line:next_start]
        if (
            text[end - 1] in _BREAK_ENDINGS
            or "\u3000" in indent
            or len(indent) >= 2
            or _ITEM_START_RE.match(text[next_start : next_start + 8])
        ):
            breaks += 1
    return breaks >= 0.6 * (len(lines) - 1)


class _Parser:
    """One pass over the lines: fences, headings, scene breaks and paragraphs into sections."""

    def __init__(self, text: str, profile: Profile) -> None:
        self.text = text
        self.profile = profile
        self.sections: list[Section] = []
        self.stack: list[tuple[int, str]] = []
        self.current = Section(())
        self.paragraph: list[tuple[int, int, int]] = []  # (line start, trimmed start, trimmed end)
        self.awaiting_subtitle = False

    def flush(self) -> None:
        lines, self.paragraph = self.paragraph, []
        if not lines:
            return
        groups = (
            [[line] for line in lines]
            if len(lines) > 1 and _lines_are_paragraphs(self.text, lines)
            else [lines]
        )
        for group in groups:
            self.current.units.append(make_unit(self.text, group[0][1], group[-1][2], "paragraph"))

    def open_section(self, match: HeadingMatch) -> None:
        self.flush()
        if self.current.units:
            self.sections.append(self.current)
        while self.stack and self.stack[-1][0] >= match.level:
            self.stack.pop()
        self.stack.append((match.level, match.title))
        self.current = Section(tuple(title for _, title in self.stack))

    def take_subtitle(self, start: int, end: int) -> bool:
        """Join a short line after a bare label ("CHAPTER I" / "General provisions") to it."""
        line = self.text[start:end]
        if (
            self.paragraph
            or not self.current.units
            or self.current.units[-1].kind != "heading"
            or len(line) > 80
            or len(line.split()) > 12
            or line[-1] in _NOT_SUBTITLE_END
            or line[0] in _NOT_SUBTITLE_START
            or line[0].isdigit()
            or _SENTENCE_INSIDE_RE.search(line)
        ):
            return False
        heading = self.current.units[-1]
        level, title = self.stack[-1]
        self.stack[-1] = (level, f"{title} {' '.join(line.split())}")
        self.current.heading_path = tuple(title for _, title in self.stack)
        self.current.units[-1] = self.heading_unit(heading.start, end)
        return True

    def heading_unit(self, start: int, end: int) -> Unit:
        unit = make_unit(self.text, start, end, "heading")
        unit.path = self.current.heading_path
        return unit

    def scene_break(self, start: int, end: int) -> None:
        self.flush()
        self.current.units.append(make_unit(self.text, start, end, "break"))
        self.sections.append(self.current)
        self.current = Section(self.current.heading_path)

    def match_rules(self, line: str) -> HeadingMatch | None:
        plain = plain_line(line)
        for rule in self.profile.heading_rules:
            match = rule(plain)
            if match is not None:
                return match
        return None

    def run(self) -> list[Section]:
        text = self.text
        pos = 0
        fence: tuple[str, int, int] | None = None  # marker char, marker length, block start
        first_content = True
        for raw in text.splitlines(keepends=True):
            line_start, pos = pos, pos + len(raw)
            start, end = trim(text, line_start, pos)
            line = raw.rstrip("\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")
            if fence is not None:
                close = FENCE_CLOSE_RE.match(line)
                if close and close.group(1)[0] == fence[0] and len(close.group(1)) >= fence[1]:
                    self.current.units.append(make_unit(text, fence[2], end, "code"))
                    fence = None
                continue
            if start == end:
                self.flush()
                continue
            is_first, first_content = first_content, False
            awaiting, self.awaiting_subtitle = self.awaiting_subtitle, False
            opening = FENCE_OPEN_RE.match(line)
            if opening and not (opening.group(1)[0] == "`" and "`" in opening.group(2)):
                self.flush()
                fence = (opening.group(1)[0], len(opening.group(1)), start)
                continue
            atx = ATX_RE.match(line)
            if atx and atx.group(2):
                rule = self.match_rules(atx.group(2))
                level = rule.level if rule else len(atx.group(1))
                self.open_section(HeadingMatch(level, rule.title if rule else atx.group(2).strip()))
                self.current.units.append(self.heading_unit(start, end))
                self.awaiting_subtitle = bool(rule and rule.bare)
                continue
            stripped = text[start:end]
            if self.profile.scene_breaks and (
                _THEMATIC_BREAK_RE.match(line) or _SCENE_BREAK_RE.match(stripped)
            ):
                self.scene_break(start, end)
                continue
            setext = _SETEXT_RE.match(line)
            if (
                setext
                and len(self.paragraph) == 1
                and not _THEMATIC_BREAK_RE.match(text[self.paragraph[0][1] : self.paragraph[0][2]])
            ):
                title_start, title_end = self.paragraph[0][1], self.paragraph[0][2]
                self.paragraph = []
                level = 1 if setext.group(1)[0] == "=" else 2
                self.open_section(HeadingMatch(level, text[title_start:title_end]))
                self.current.units.append(self.heading_unit(title_start, end))
                continue
            rule = self.match_rules(stripped)
            if rule is None and is_first and self.profile.first_line_title:
                rule = _title_line(text, stripped, pos)
            if rule is not None:
                self.open_section(rule)
                if not rule.inline:
                    self.current.units.append(self.heading_unit(start, end))
                    self.awaiting_subtitle = rule.bare
                    continue
            elif awaiting and self.take_subtitle(start, end):
                continue
            self.paragraph.append((line_start, start, end))
        if fence is not None:
            self.current.units.append(make_unit(text, fence[2], trim(text, fence[2], len(text))[1], "code"))
        self.flush()
        if self.current.units:
            self.sections.append(self.current)
        return self.sections


def _title_line(text: str, line: str, line_end: int) -> HeadingMatch | None:
    """A first line that reads as a title or headline: short, no sentence end, a blank line and
    more text after it. Level 0, above every heading the document's own patterns find."""
    rest = text[line_end:]
    if (
        len(line) <= 120
        and len(line.split()) <= 20
        and line[-1] not in "。！？.!?；;:：，,"
        and _BLANK_LINE_RE.match(rest)
        and rest.strip()
    ):
        return HeadingMatch(0, " ".join(line.split()))
    return None


def _fold_headings(sections: list[Section]) -> list[Section]:
    """Give a section that holds only headings or breaks to the next one, so no chunk is only a
    heading; a trailing scene break joins the section before it."""
    folded: list[Section] = []
    pending: list[Unit] = []
    for section in sections:
        units = pending + section.units
        if not any(unit.content for unit in section.units):
            pending = units
            continue
        pending = []
        folded.append(Section(section.heading_path, units))
    if pending:
        if folded and not any(unit.kind == "heading" for unit in pending):
            folded[-1].units.extend(pending)
        else:
            folded.append(Section(sections[-1].heading_path, pending))
    return folded


def _split_units(text: str, units: list[Unit], max_tokens: int) -> list[Unit]:
    """Replace every unit over max_tokens by its pieces (see split_oversized)."""
    result: list[Unit] = []
    for unit in units:
        if tokens_from_counts(unit.cjk, unit.words) <= max_tokens:
            result.append(unit)
            continue
        kind = "heading" if unit.kind == "heading" else "piece"
        for s, e in split_oversized(text, unit.start, unit.end, max_tokens, code=unit.kind == "code"):
            piece = make_unit(text, s, e, kind)
            piece.path = unit.path
            result.append(piece)
    return result


def _room_after_headings(text: str, units: list[Unit], max_tokens: int) -> list[Unit]:
    """Split the first text unit of a section so that its first piece fits beside the headings
    above it (a chunk of headings alone would be useless to retrieve)."""
    lead = 0
    while lead < len(units) and not units[lead].content:
        lead += 1
    if lead == 0 or lead == len(units) or units[lead].kind == "code":
        return units  # a code block that fits stays whole, even if its heading must go alone
    prefix = TokenPrefix(units)
    head = prefix.tokens(0, lead)
    if prefix.tokens(0, lead + 1) <= max_tokens or head >= max_tokens:
        return units
    body = units[lead]
    for budget in range(max_tokens - head, 0, -1):
        pieces = [
            make_unit(text, s, e, "piece") for s, e in split_oversized(text, body.start, body.end, budget)
        ]
        if TokenPrefix([*units[:lead], pieces[0]]).tokens(0, lead + 1) <= max_tokens:
            return [*units[:lead], *pieces, *units[lead + 1 :]]
    return units


def parse_sections(text: str, profile: Profile, max_tokens: int) -> list[Section]:
    """The document as sections of units, every unit at most max_tokens."""
    sections = _fold_headings(_Parser(text, profile).run())
    for section in sections:
        units = section.units
        if profile.glue_code_intro:
            units = _glue_code_intros(text, units, max_tokens)
        units = _split_units(text, units, max_tokens)
        section.units = _room_after_headings(text, units, max_tokens)
    return sections


def _glue_code_intros(text: str, units: list[Unit], max_tokens: int) -> list[Unit]:
    """Keep "Install it with:" and the code block after it in one unit when they fit."""
    glued: list[Unit] = []
    for unit in units:
        previous = glued[-1] if glued else None
        if (
            unit.kind == "code"
            and previous is not None
            and previous.kind == "paragraph"
            and text[previous.end - 1] in ":："
            and tokens_from_counts(previous.cjk + unit.cjk, previous.words + unit.words) <= max_tokens
        ):
            glued[-1] = Unit(
                previous.start, unit.end, previous.cjk + unit.cjk, previous.words + unit.words, "code"
            )
        else:
            glued.append(unit)
    return glued


# --- chunks ----------------------------------------------------------------------------------
def assemble(
    text: str,
    sections: Sequence[Section],
    packs: Sequence[Sequence[Span]],
    chunker: str,
    page_starts: Sequence[int] | None,
) -> list[Chunk]:
    """Chunk records from each section's spans, numbered in document order."""
    chunks: list[Chunk] = []
    for section, spans in zip(sections, packs, strict=True):
        previous_end = -1
        for span in spans:
            start = section.units[span.first].start
            end = section.units[span.stop - 1].end
            body = text[start:end]
            units = section.units[span.first : span.stop]
            path = section.heading_path
            if not any(unit.content for unit in units) and units[-1].kind == "heading":
                path = units[-1].path  # only headings folded from above: they name themselves
            chunks.append(
                Chunk(
                    text=body,
                    index=len(chunks),
                    start=start,
                    end=end,
                    heading_path=path,
                    tokens=tokens_from_counts(*token_counts(body)),
                    overlap=previous_end - start if span.overlap else 0,
                    page=page_of(start, page_starts) if page_starts else None,
                    end_page=page_of(end - 1, page_starts) if page_starts else None,
                    chunker=chunker,
                )
            )
            previous_end = end
    return chunks


def check_text(text: str) -> None:
    """Reject anything but a str (bytes would be chunked as their repr)."""
    if not isinstance(text, str):
        raise InvalidTypeError(f"text must be a str, got {type(text).__name__}")


def check_sizes(max_tokens: int, overlap_tokens: int) -> None:
    """Reject sizes no chunker can honour."""
    for name, value in (("max_tokens", max_tokens), ("overlap_tokens", overlap_tokens)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise InvalidTypeError(f"{name} must be an int, got {type(value).__name__}")
    if max_tokens < 1:
        raise InvalidInputError(f"max_tokens must be >= 1, got {max_tokens}")
    if overlap_tokens < 0:
        raise InvalidInputError(f"overlap_tokens must be >= 0, got {overlap_tokens}")


def check_page_starts(page_starts: Sequence[int] | None) -> list[int] | None:
    """Page start offsets as a sorted list (None stays None)."""
    if page_starts is None:
        return None
    starts = [int(offset) for offset in page_starts]
    if any(b < a for a, b in pairwise(starts)):
        raise InvalidInputError("page_starts must be in ascending order")
    return starts


def chunk_with_profile(
    text: str,
    profile: Profile,
    *,
    max_tokens: int,
    overlap_tokens: int,
    page_starts: Sequence[int] | None = None,
) -> list[Chunk]:
    """Parse with a profile's heading rules, then pack each section greedily."""
    check_text(text)
    check_sizes(max_tokens, overlap_tokens)
    starts = check_page_starts(page_starts)
    sections = parse_sections(text, profile, max_tokens)
    packs = [pack_greedy(section.units, max_tokens, overlap_tokens) for section in sections]
    return assemble(text, sections, packs, profile.name, starts)


MARKDOWN = Profile("markdown")


def chunk_markdown(
    text: str,
    *,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    overlap_tokens: int = DEFAULT_OVERLAP_TOKENS,
    page_starts: Sequence[int] | None = None,
) -> list[Chunk]:
    """Split Markdown into heading-aware chunks of whole paragraphs (see the module docstring)."""
    return chunk_with_profile(
        text, MARKDOWN, max_tokens=max_tokens, overlap_tokens=overlap_tokens, page_starts=page_starts
    )
