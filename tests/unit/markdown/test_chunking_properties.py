"""Property tests: whatever the document, chunks cover it, stay in budget, keep order, and end.

Documents are generated in English and Chinese: Markdown headings, long paragraphs, sentences
without an end, code fences, lists, chapter and article lines, scene breaks, odd line endings.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from ripplemem.core.text import estimate_tokens
from ripplemem.markdown.chunk.chunk_types import Chunk
from ripplemem.markdown.chunk.chunking import chunk_text
from ripplemem.markdown.chunk.semantic_chunker import SemanticChunker
from ripplemem.markdown.chunk.sentences import sentence_spans, token_counts, tokens_from_counts

CHUNKERS = ["markdown", "novel", "legal", "paper", "technical", "semantic", "news", "auto"]
PROPERTY_SETTINGS = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)

EN_WORDS = [
    "the",
    "memory",
    "graph",
    "spreads",
    "activation",
    "across",
    "edges",
    "agents",
    "recall",
    "what",
    "users",
    "said",
    "yesterday",
    "about",
    "green",
    "tea",
    "and",
    "Berlin",
    "flights",
    "while",
    "documents",
    "hold",
    "facts",
    "retrieval",
    "ranks",
    "chunks",
    "by",
    "similarity",
    "Dr.",
    "Smith",
    "e.g.",
    "version",
    "3.14",
    "don't",
    "isn't",
]
ZH_CHARS = "记忆图谱激活扩散用户昨天说过喜欢绿茶柏林航班文档检索相似度分块章节条款法律小说场景"
EN_END = [".", "!", "?", "", "...", '?"', ".)"]
ZH_END = ["。", "！", "？", "；", "", "……", "。”"]

en_sentence = st.builds(
    lambda words, end: " ".join(words).capitalize() + end,
    st.lists(st.sampled_from(EN_WORDS), min_size=1, max_size=30),
    st.sampled_from(EN_END),
)
zh_sentence = st.builds(
    lambda chars, comma, end: "，".join(chars) + end,
    st.lists(st.text(ZH_CHARS, min_size=1, max_size=25), min_size=1, max_size=3),
    st.booleans(),
    st.sampled_from(ZH_END),
)
sentence = st.one_of(en_sentence, zh_sentence)
paragraph = st.builds(
    lambda sentences, joiner: joiner.join(sentences),
    st.lists(sentence, min_size=1, max_size=12),
    st.sampled_from([" ", "", "\n"]),
)
long_paragraph = st.builds(" ".join, st.lists(en_sentence, min_size=15, max_size=40))
endless_sentence = st.builds(
    lambda n, word: " ".join([word] * n), st.integers(50, 400), st.sampled_from(EN_WORDS)
)
endless_chinese = st.text(ZH_CHARS, min_size=100, max_size=600)
heading = st.builds(
    lambda level, words: "#" * level + " " + " ".join(words),
    st.integers(1, 4),
    st.lists(st.sampled_from(EN_WORDS), min_size=1, max_size=6),
)
code_fence = st.builds(
    lambda lang, lines: f"```{lang}\n" + "\n".join(lines) + "\n```",
    st.sampled_from(["", "python", "bash"]),
    st.lists(
        st.sampled_from(
            [
                "x = 1",
                "# not a heading",
                "",
                "print('hello world')",
                "for item in items: total += item",
                "第一章 不是标题",
            ]
        ),
        min_size=0,
        max_size=40,
    ),
)
bullet_list = st.builds(
    lambda items: "\n".join(f"- {item}" for item in items), st.lists(sentence, min_size=2, max_size=8)
)
chapter = st.builds(
    lambda n, title: f"第{n}章 {title}",
    st.sampled_from("一二三四五六七八九十"),
    st.text(ZH_CHARS, min_size=1, max_size=6),
)
en_chapter = st.builds(lambda n: f"Chapter {n}", st.integers(1, 30))
article = st.builds(
    lambda n, body: f"第{n}条　{body}", st.sampled_from(["一", "二", "十", "一百零一"]), zh_sentence
)
scene_break = st.sampled_from(["***", "* * *", "——", "※※※", "---"])
block = st.one_of(
    paragraph,
    paragraph,
    paragraph,
    long_paragraph,
    endless_sentence,
    endless_chinese,
    heading,
    code_fence,
    bullet_list,
    chapter,
    en_chapter,
    article,
    scene_break,
)
separator = st.sampled_from(["\n\n", "\n\n", "\n", "\n\n\n", "  \n\n", "\r\n\r\n", "\n\u3000\u3000"])


@st.composite
def documents(draw: st.DrawFn) -> str:
    blocks = draw(st.lists(block, min_size=0, max_size=14))
    text = ""
    for item in blocks:
        text += item + draw(separator)
    return draw(st.sampled_from(["", " ", "\n"])) + text


LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"


def at_line_start(text: str, position: int) -> bool:
    before = text[:position]
    head = before.rstrip()
    return not head or any(char in LINE_BREAKS for char in before[len(head) :])


def at_line_end(text: str, position: int) -> bool:
    after = text[position:]
    tail = after.lstrip()
    return not tail or any(char in LINE_BREAKS for char in after[: len(after) - len(tail)])


sizes = st.tuples(st.integers(4, 160), st.integers(0, 60))


def check_chunks(text: str, chunks: list[Chunk], max_tokens: int, overlap_tokens: int) -> None:
    """Every invariant a caller relies on."""
    covered = np.zeros(len(text) + 1, dtype=np.int32)
    for i, chunk in enumerate(chunks):
        assert chunk.index == i
        assert 0 <= chunk.start < chunk.end <= len(text)
        assert chunk.text == text[chunk.start : chunk.end]
        assert not chunk.text[0].isspace() and not chunk.text[-1].isspace()
        assert chunk.tokens == estimate_tokens(chunk.text) <= max_tokens
        covered[chunk.start] += 1
        covered[chunk.end] -= 1
    depth = np.cumsum(covered)[:-1]
    for position, char in enumerate(text):
        if not char.isspace():
            assert depth[position] >= 1, f"character {position} {char!r} is in no chunk"
    assert depth.max(initial=0) <= 2, "a character sits in three chunks"
    for before, after in zip(chunks, chunks[1:], strict=False):
        assert after.start > before.start and after.end > before.end
        if after.start < before.end:
            shared = text[after.start : before.end]
            assert after.overlap == len(shared)
            assert estimate_tokens(shared) <= overlap_tokens
            # Whole paragraphs: the overlap starts a line and ends one.
            assert at_line_start(text, after.start) and at_line_end(text, before.end)
            assert after.heading_path == before.heading_path
        else:
            assert after.overlap == 0
            assert not text[before.end : after.start].strip()
    assert chunks[0].overlap == 0 if chunks else True


@pytest.mark.parametrize("chunker", CHUNKERS)
@PROPERTY_SETTINGS
@given(text=documents(), size=sizes)
def test_chunks_cover_the_document_within_budget(chunker: str, text: str, size: tuple[int, int]) -> None:
    max_tokens, overlap_tokens = size
    chunks = chunk_text(text, chunker, max_tokens=max_tokens, overlap_tokens=overlap_tokens)
    check_chunks(text, chunks, max_tokens, overlap_tokens)
    if chunker != "auto":
        assert {chunk.chunker for chunk in chunks} <= {chunker}


@pytest.mark.parametrize("chunker", ["markdown", "novel", "legal", "paper", "news"])
@settings(max_examples=100, deadline=None)
@given(text=st.text(max_size=400), size=sizes)
def test_any_unicode_text_terminates_and_is_covered(chunker: str, text: str, size: tuple[int, int]) -> None:
    max_tokens, overlap_tokens = size
    check_chunks(
        text,
        chunk_text(text, chunker, max_tokens=max_tokens, overlap_tokens=overlap_tokens),
        max_tokens,
        overlap_tokens,
    )


@PROPERTY_SETTINGS
@given(
    paragraphs=st.lists(
        st.one_of(
            en_sentence, zh_sentence, st.builds(" ".join, st.lists(en_sentence, min_size=2, max_size=6))
        ),
        min_size=1,
        max_size=30,
    ),
    size=sizes,
)
def test_overlap_is_made_of_whole_paragraphs(paragraphs: list[str], size: tuple[int, int]) -> None:
    max_tokens, overlap_tokens = size
    assume(all(p.strip() for p in paragraphs))
    text = "\n\n".join(paragraphs)
    starts, ends, position = set(), set(), 0
    for paragraph_text in paragraphs:
        starts.add(position)
        ends.add(position + len(paragraph_text))
        position += len(paragraph_text) + 2
    chunks = chunk_text(text, "markdown", max_tokens=max_tokens, overlap_tokens=overlap_tokens)
    check_chunks(text, chunks, max_tokens, overlap_tokens)
    for before, after in zip(chunks, chunks[1:], strict=False):
        if after.overlap:
            assert after.start in starts and before.end in ends
            assert after.start > before.start  # never the whole previous chunk


def heading_oracle(text: str, position: int) -> tuple[str, ...]:
    """The ATX heading path in force at ``position`` (fence-aware), as a reader would see it."""
    stack: list[tuple[int, str]] = []
    in_fence = False
    offset = 0
    for line in text.splitlines(keepends=True):
        if offset >= position:
            break
        offset += len(line)
        stripped = line.strip()
        if stripped.startswith("```"):
            in_fence = not in_fence
            continue
        match = re.match(r"^(#{1,6}) (.+)$", stripped)
        if match and not in_fence:
            level = len(match.group(1))
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, match.group(2).strip()))
    return tuple(title for _, title in stack)


markdown_block = st.one_of(paragraph, long_paragraph, heading, code_fence, bullet_list)


@PROPERTY_SETTINGS
@given(blocks=st.lists(markdown_block, min_size=1, max_size=16), size=sizes)
def test_heading_path_is_the_section_each_chunk_ends_in(blocks: list[str], size: tuple[int, int]) -> None:
    max_tokens, overlap_tokens = size
    text = "\n\n".join(blocks)
    chunks = chunk_text(text, "markdown", max_tokens=max_tokens, overlap_tokens=overlap_tokens)
    check_chunks(text, chunks, max_tokens, overlap_tokens)
    for chunk in chunks:
        assert chunk.heading_path == heading_oracle(text, chunk.end - 1)
        assert chunk.breadcrumb == " > ".join(chunk.heading_path)


@PROPERTY_SETTINGS
@given(text=documents(), size=sizes, data=st.data())
def test_page_numbers_follow_the_page_starts(text: str, size: tuple[int, int], data: st.DataObject) -> None:
    page_starts = sorted(set(data.draw(st.lists(st.integers(0, max(0, len(text))), max_size=8))))
    chunks = chunk_text(text, "markdown", max_tokens=size[0], overlap_tokens=size[1], page_starts=page_starts)
    for chunk in chunks:
        assert chunk.page == (bisect.bisect_right(page_starts, chunk.start) or None)
        assert chunk.end_page == (bisect.bisect_right(page_starts, chunk.end - 1) or None)
        if chunk.page is not None:
            assert chunk.end_page is not None and chunk.page <= chunk.end_page


@settings(max_examples=200, deadline=None)
@given(text=st.one_of(st.text(min_size=1), paragraph, endless_chinese, code_fence))
def test_additive_counts_agree_with_estimate_tokens(text: str) -> None:
    assert tokens_from_counts(*token_counts(text)) == estimate_tokens(text)


@settings(max_examples=100, deadline=None)
@given(text=st.one_of(paragraph, long_paragraph, st.text()))
def test_sentence_spans_cover_the_text_in_order(text: str) -> None:
    spans = sentence_spans(text)
    covered: set[int] = set()
    for (_, e1), (s2, _) in zip(spans, spans[1:], strict=False):
        assert e1 <= s2
    for s, e in spans:
        assert s < e and not text[s].isspace() and not text[e - 1].isspace()
        covered.update(range(s, e))
    assert all(i in covered for i, char in enumerate(text) if not char.isspace())


class RandomEmbedder:
    """Vectors from a seeded generator in a tiny space, some all zero: boundaries anywhere."""

    model_id = "random-test"

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        vectors = self.rng.normal(size=(len(texts), 3)).astype(np.float32)
        vectors[self.rng.random(len(texts)) < 0.1] = 0.0
        return vectors

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_documents([text])[0]


@PROPERTY_SETTINGS
@given(
    text=documents(),
    size=sizes,
    seed=st.integers(0, 2**32 - 1),
    window=st.integers(1, 4),
    min_ratio=st.floats(0.0, 1.0),
)
def test_semantic_bounds_hold_whatever_the_embeddings(
    text: str, size: tuple[int, int], seed: int, window: int, min_ratio: float
) -> None:
    max_tokens, overlap_tokens = size
    chunker = SemanticChunker(
        RandomEmbedder(seed),
        max_tokens=max_tokens,
        overlap_tokens=overlap_tokens,
        min_tokens=int(max_tokens * min_ratio),
        window=window,
    )
    check_chunks(text, chunker.chunk(text), max_tokens, overlap_tokens)
