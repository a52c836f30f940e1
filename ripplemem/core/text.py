"""Text helpers: CJK-aware keyword tokens for BM25, and token estimates for budgets."""

from __future__ import annotations

import re

# CJK Unified Ideographs (+ Extension A), Hiragana, Katakana, Hangul syllables.
_CJK = "\u3400-\u4dbf\u4e00-\u9fff\u3040-\u30ff\uac00-\ud7af"
_TOKEN_RE = re.compile(rf"[{_CJK}]+|[^\W_]+(?:['’][^\W_]+)*", re.UNICODE)
_CJK_RUN_RE = re.compile(rf"^[{_CJK}]+$")
_CJK_CHAR_RE = re.compile(rf"[{_CJK}]")
_WORD_RE = re.compile(r"[^\W_]+", re.UNICODE)

# Words too common to help a keyword query; BM25's idf would damp them anyway, but dropping
# them keeps FTS5 queries short and fast.
STOPWORDS = frozenset(
    """a an the and or but if of at by for with about against between into through during before
    after above below to from up down in out on off over under again further then once here there
    when where why how all any both each few more most other some such no nor not only own same so
    than too very s t can will just don should now i me my myself we our ours ourselves you your
    yours yourself yourselves he him his himself she her hers herself it its itself they them their
    theirs themselves what which who whom this that these those am is are was were be been being
    have has had having do does did doing would could ought i'm you're he's she's it's we're
    they're i've you've we've they've i'd you'd he'd she'd we'd they'd i'll you'll he'll she'll
    we'll they'll isn't aren't wasn't weren't hasn't haven't hadn't doesn't don't didn't won't
    wouldn't shan't shouldn't can't cannot couldn't mustn't let's that's who's what's here's
    there's when's where's why's how's""".split()
)


def keyword_tokens(text: str, *, drop_stopwords: bool = False) -> list[str]:
    """Lowercased word tokens; runs of CJK characters become overlapping character bigrams.

    Bigrams make Chinese searchable without a dictionary: 绿茶 in a query meets 喝绿茶 in a memory,
    which a trigram index cannot do for two-character words.
    """
    tokens: list[str] = []
    for match in _TOKEN_RE.finditer(text.lower()):
        piece = match.group(0)
        if _CJK_RUN_RE.match(piece):
            if len(piece) == 1:
                tokens.append(piece)
            else:
                tokens.extend(piece[i : i + 2] for i in range(len(piece) - 1))
        elif not (drop_stopwords and piece in STOPWORDS):
            tokens.append(piece.replace("’", "'"))
    return tokens


def estimate_tokens(text: str) -> int:
    """Rough LLM token count: one per CJK character, 1.3 per other word, at least 1 for text."""
    if not text:
        return 0
    cjk = len(_CJK_CHAR_RE.findall(text))
    words = len(_WORD_RE.findall(_CJK_CHAR_RE.sub(" ", text)))
    return max(1, cjk + round(words * 1.3))


def count_phrase(number: int, one: str, many: str) -> str:
    """'1 memory', '3 memories'."""
    return f"{number} {one if number == 1 else many}"
