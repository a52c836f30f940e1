"""Document types (docs/design-notes.md#chunking): what marks their structure, and how to tell them apart.

- novel: 第X卷/部 > 第X章/回 (Book/Part > Chapter N, Prologue), and scene breaks (``***``,
  ``* * *``, ``——``, ``※※※``) that end a chunk without a new heading; paragraphs packed.
- legal: 第X编 > 分编 > 章 > 节 > 第X条 (Part/Title > Chapter > Section > Article N / § N). Each
  article starts a chunk and its label ends the heading path; long articles split by paragraph (款).
- paper: Markdown headings, numbered headings (``2.1 Method``, ``II. RESULTS``, ``一、引言``) and
  known section names (Abstract, References, 摘要, 参考文献 ...); paragraphs packed.
- technical: Markdown headings; code fences whole, glued to a "...:" line that introduces them.
- news: the first line as the headline, then semantic boundaries (``semantic_chunker``).

Every type also understands Markdown headings (a "## 第一章" heading takes the pattern's level),
and chunks never cross a heading or, in novels, a scene break. Patterns only match a whole line
(after a leading ``**bold**`` marker is dropped) and, for chapter-like headings, a short one with
no sentence end, so "他在第三章里写道" or a cross-reference "第十条规定的" inside a line is text.

``detect_document_type`` applies these rules in order; the first that holds wins:

1. legal: at least 2 article lines (第X条 / Article N / § N);
2. paper: an Abstract / 摘要 line, plus a References / 参考文献 line or 2 numbered headings; or
   3 numbered headings, one of them a subsection (``2.1 Setup``, ``（一）数据``), as in reports;
3. novel: no code fence, and at least 2 chapter lines (第X章 / 第X回 / Chapter N), or 1 when the
   text has at most one Markdown heading;
4. technical: a code fence, or mostly code-like lines (ending in ``{ } ; ,`` and the like);
5. markdown: a Markdown heading or a Markdown table;
6. semantic: anything else (plain prose without structure).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ripplemem.markdown.chunk.markdown_chunker import (
    ATX_RE,
    FENCE_CLOSE_RE,
    FENCE_OPEN_RE,
    HeadingMatch,
    HeadingRule,
    Profile,
    plain_line,
)

_NUM = "[0-9０-９零〇一二三四五六七八九十百千万两壹贰叁肆伍陆柒捌玖拾佰仟]+"
_EN_WORD_NUMBERS = (
    "one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|"
    "sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety"
)
_EN_NUM = rf"(?:\d+|[IVXLCDM]+|(?i:(?:{_EN_WORD_NUMBERS})(?:[- ](?:{_EN_WORD_NUMBERS}))?))"
_SENTENCE_MARKS = re.compile(r"[。！？；]|[.!?;]\s|[，,。.;；]$")
_SPACES_RE = re.compile(r"\s+")
_LABEL_PUNCTUATION = " \t\u3000:：.．、·—-"


_LABEL_TITLE_RE = re.compile(r"^(第\S*?[编章节条卷部回集篇])\s*(.*)$")
_CJK_GAP_RE = re.compile(r"(?<=[\u4e00-\u9fff])\s+(?=[\u4e00-\u9fff])")


def _title(line: str) -> str:
    """A heading as a path element: spaces collapsed, and "第一章　总　　则" read as "第一章 总则"
    (spaces between Chinese characters are typesetting)."""
    title = _SPACES_RE.sub(" ", line).strip()
    match = _LABEL_TITLE_RE.match(title)
    if match:
        rest = _CJK_GAP_RE.sub("", match.group(2))
        title = f"{match.group(1)} {rest}" if rest else match.group(1)
    return title


def _line_rule(
    pattern: str,
    level: int,
    *,
    limit: int = 40,
    label: Callable[[re.Match[str]], str] | None = None,
    inline: bool = False,
) -> HeadingRule:
    """A rule for a heading line whose pattern names its label (``(?P<label>第一章)``).

    ``inline``: the line is body text too (a legal article) and its label is the title, unless
    the line holds only the label ("Article 5" on its own line), which is then a plain heading.
    A line holding only the label may take the next short line as its subtitle (``bare``).
    """
    compiled = re.compile(pattern)

    def rule(line: str) -> HeadingMatch | None:
        match = compiled.match(line)
        if match is None:
            return None
        name = _title(label(match) if label else match.group("label"))
        rest = line[match.end("label") :].strip(_LABEL_PUNCTUATION)
        if not rest:  # "CHAPTER I." alone: its subtitle may follow on the next line
            return HeadingMatch(level, name, bare=True)
        if inline:
            return HeadingMatch(level, name, inline=True)
        if len(line) > limit or _SENTENCE_MARKS.search(rest):
            return None
        return HeadingMatch(level, _title(line))

    return rule


# --- novels ----------------------------------------------------------------------------------
# After "第一章": a separator, the title itself ("第一章风起"), or the end of the line.
_AFTER_LABEL = r"(?:[\s:：、.．·—-]|[^\W\d_]|$)"
_CN_VOLUME = _line_rule(rf"^(?P<label>第{_NUM}[卷部集篇]){_AFTER_LABEL}", 1)
_CN_CHAPTER = _line_rule(rf"^(?P<label>第{_NUM}[章回]){_AFTER_LABEL}", 2)
_CN_SPECIAL = _line_rule(r"^(?P<label>序章|序言|楔子|引子|尾声|后记|番外)(?:[\s:：、.．·—-]|$)", 2, limit=30)
_EN_VOLUME = _line_rule(rf"^(?P<label>(?:BOOK|Book|PART|Part|VOLUME|Volume)\s+{_EN_NUM})\b", 1, limit=80)
_EN_CHAPTER = _line_rule(rf"^(?P<label>(?:CHAPTER|Chapter)\s+{_EN_NUM})\b", 2, limit=80)
_EN_SPECIAL = _line_rule(
    r"^(?P<label>PROLOGUE|Prologue|EPILOGUE|Epilogue|INTERLUDE|Interlude)\b", 2, limit=60
)
NOVEL_RULES: tuple[HeadingRule, ...] = (
    _CN_VOLUME,
    _CN_CHAPTER,
    _CN_SPECIAL,
    _EN_VOLUME,
    _EN_CHAPTER,
    _EN_SPECIAL,
)
CHAPTER_RULES: tuple[HeadingRule, ...] = (_CN_CHAPTER, _EN_CHAPTER)

# --- legal texts -----------------------------------------------------------------------------
_CN_ARTICLE_RE = rf"^(?P<label>第{_NUM}条(?:之[一二三四五六七八九十]+)?)(?=[\s:：]|$)"
_EN_ARTICLE_RE = r"^(?P<label>(?:ARTICLE|Article|Art\.)\s+(\d+[a-z]?|[IVXLC]+)|§\s*(\d+[a-z]?))\b"


def _en_article_label(match: re.Match[str]) -> str:
    return f"Article {match.group(2)}" if match.group(2) else f"§ {match.group(3)}"


LEGAL_RULES: tuple[HeadingRule, ...] = (
    _line_rule(rf"^(?P<label>第{_NUM}编){_AFTER_LABEL}", 1),
    _line_rule(rf"^(?P<label>第{_NUM}分编){_AFTER_LABEL}", 2),
    _line_rule(rf"^(?P<label>第{_NUM}章){_AFTER_LABEL}", 3),
    _line_rule(rf"^(?P<label>第{_NUM}节){_AFTER_LABEL}", 4),
    _line_rule(_CN_ARTICLE_RE, 5, inline=True),
    _line_rule(rf"^(?P<label>(?:PART|Part|TITLE|Title)\s+{_EN_NUM})\b", 1, limit=80),
    _line_rule(rf"^(?P<label>(?:CHAPTER|Chapter)\s+{_EN_NUM})\b", 3, limit=80),
    _line_rule(r"^(?P<label>(?:SECTION|Section)\s+\d+)\b", 4, limit=60),
    _line_rule(_EN_ARTICLE_RE, 5, label=_en_article_label, inline=True),
)
ARTICLE_RULES: tuple[HeadingRule, ...] = LEGAL_RULES[4:5] + LEGAL_RULES[-1:]

# --- papers ----------------------------------------------------------------------------------
_SECTION_NAMES = (
    "abstract|introduction|background|related work|preliminaries|method|methods|methodology|approach|"
    "experiments?|experimental setup|evaluation|results|discussion|conclusions?|limitations|"
    "future work|acknowledge?ments?|references|bibliography|appendix(?: [a-z])?|supplementary material"
)
_CN_SECTION_NAMES = "摘要|摘\\s*要|关键词|引言|前言|绪论|相关工作|方法|实验|结果|讨论|结论|致谢|参考文献|附录"
_NAMED_SECTION_RE = re.compile(
    rf"^(?:(\d{{1,2}}(?:\.\d{{1,2}}){{0,3}})\.?\s+|([IVX]{{1,5}})\.\s+)?"
    rf"((?i:{_SECTION_NAMES})|{_CN_SECTION_NAMES})\s*[:：]?$"
)
_NUMBERED_RE = re.compile(r"^(?:(\d{1,2}(?:\.\d{1,2}){0,3})\.?|([IVX]{1,5})\.)\s+(\S.{0,80})$")
_CN_NUMBERED_RE = re.compile(
    r"^(?:([一二三四五六七八九十]{1,3})[、.．]|[（(]([一二三四五六七八九十]{1,3})[)）])\s*(\S.{0,40})$"
)
_ABSTRACT_INLINE_RE = re.compile(r"^(Abstract|ABSTRACT|摘\s*要)\s*[:：.—-]+\s*\S")


def _depth(number: str | None) -> int:
    return number.count(".") + 1 if number else 1


def _named_section(line: str) -> HeadingMatch | None:
    match = _NAMED_SECTION_RE.match(line)
    if match is None:
        return None
    return HeadingMatch(_depth(match.group(1)), _title(line.rstrip(":：")))


def _numbered_section(line: str) -> HeadingMatch | None:
    match = _NUMBERED_RE.match(line)
    if match is None:
        return None
    title = match.group(3)
    first = title[0]
    if not (first.isupper() or "\u4e00" <= first <= "\u9fff") or len(title.split()) > 12:
        return None
    if title[-1] in ".。,，;；:：" or _SENTENCE_MARKS.search(title):
        return None
    return HeadingMatch(_depth(match.group(1)), _title(line))


def _cn_numbered_section(line: str) -> HeadingMatch | None:
    match = _CN_NUMBERED_RE.match(line)
    if match is None or _SENTENCE_MARKS.search(match.group(3)):
        return None
    return HeadingMatch(1 if match.group(1) else 2, _title(line))


def _abstract_inline(line: str) -> HeadingMatch | None:
    match = _ABSTRACT_INLINE_RE.match(line)
    if match is None:
        return None
    return HeadingMatch(1, "摘要" if match.group(1).startswith("摘") else "Abstract", True)


PAPER_RULES: tuple[HeadingRule, ...] = (
    _named_section,
    _abstract_inline,
    _numbered_section,
    _cn_numbered_section,
)

# --- profiles --------------------------------------------------------------------------------
PROFILES: dict[str, Profile] = {
    "markdown": Profile("markdown"),
    "novel": Profile("novel", heading_rules=NOVEL_RULES, scene_breaks=True, first_line_title=True),
    "legal": Profile("legal", heading_rules=LEGAL_RULES, first_line_title=True),
    "paper": Profile("paper", heading_rules=PAPER_RULES, first_line_title=True),
    "technical": Profile("technical", glue_code_intro=True),
    "semantic": Profile("semantic"),
    "news": Profile("news", first_line_title=True),
}

# --- detection -------------------------------------------------------------------------------
_TABLE_ROW_RE = re.compile(r"^\|.*\|$")
_TABLE_RULE_RE = re.compile(r"^\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?$")
_CODE_LINE_ENDINGS = tuple("{}[];,>)") + ("=>", "->", ":")
_SETEXT_UNDERLINE_RE = re.compile(r"^ {0,3}=+[ \t]*$")


def _any(rules: tuple[HeadingRule, ...], line: str) -> bool:
    return any(rule(line) is not None for rule in rules)


def detect_document_type(text: str) -> str:
    """The chunker ``chunker="auto"`` uses for this text (rules in the module docstring)."""
    articles = chapters = fences = headings = table_rules = code_like = lines = 0
    abstract = references = False
    numbered = subsections = 0
    fence: str | None = None
    previous_blank = True
    for raw in text.splitlines():
        if fence is not None:
            close = FENCE_CLOSE_RE.match(raw)
            if close and close.group(1).startswith(fence):
                fence = None
            continue
        line = plain_line(raw)
        if not line:
            previous_blank = True
            continue
        lines += 1
        opening = FENCE_OPEN_RE.match(raw)
        if opening:
            fences += 1
            fence = opening.group(1)
            continue
        atx = ATX_RE.match(raw)
        if atx and atx.group(2):
            headings += 1
            line = plain_line(atx.group(2))
        elif _SETEXT_UNDERLINE_RE.match(raw) and not previous_blank:
            headings += 1
        previous_blank = False
        articles += _any(ARTICLE_RULES, line)
        chapters += _any(CHAPTER_RULES, line)
        named = _named_section(line)
        if named is not None or _abstract_inline(line):
            lowered = line.lower()
            abstract = abstract or lowered.startswith(("abstract", "摘")) or "abstract" in lowered
            references = references or any(w in lowered for w in ("references", "bibliography", "参考文献"))
        else:
            section = _numbered_section(line) or _cn_numbered_section(line)
            if section is not None:
                numbered += 1
                subsections += section.level > 1
        table_rules += bool(_TABLE_RULE_RE.match(line) and "|" in line)
        code_like += line.endswith(_CODE_LINE_ENDINGS) or line.startswith(("//", "<", "}", "#!"))
    if articles >= 2:
        return "legal"
    if (abstract and (references or numbered >= 2)) or (numbered >= 3 and subsections):
        return "paper"
    if fences == 0 and (chapters >= 2 or (chapters == 1 and headings <= 1)):
        return "novel"
    if fences or (lines >= 5 and code_like >= 0.5 * lines):
        return "technical"
    if headings or table_rules:
        return "markdown"
    return "semantic"
