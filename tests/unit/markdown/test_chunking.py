"""Chunkers on realistic documents: the breadcrumbs, heading paths and cut points a reader checks."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import pytest

from ripplemem.core.text import estimate_tokens
from ripplemem.embedding.embedders import Embedder
from ripplemem.errors import InvalidInputError, InvalidTypeError
from ripplemem.markdown.chunk.chunk_types import DEFAULT_MAX_TOKENS, DEFAULT_OVERLAP_TOKENS, Chunk
from ripplemem.markdown.chunk.chunking import chunk_text, resolve_chunker
from ripplemem.markdown.chunk.markdown_chunker import chunk_markdown
from ripplemem.markdown.chunk.semantic_chunker import SemanticChunker
from ripplemem.markdown.chunk.sentences import split_sentences
from ripplemem.markdown.chunk.structure import detect_document_type

NOVEL_ZH = """青石镇

第一章 风起

　　天色刚亮，林远就被窗外的鸡鸣声吵醒了。他揉了揉眼睛，看见母亲已经在灶台前忙碌。
　　“远儿，今天要去镇上赶集，你早点起来。”母亲头也不回地说。
　　“知道了，娘。”林远应了一声，翻身下床。
　　他翻开那本旧书，第三章里夹着一张发黄的地图。

＊＊＊

　　镇上比往常热闹许多。卖糖葫芦的老汉吆喝着，孩子们围成一圈。
　　林远在人群中看见了一个陌生的背影，那人披着蓑衣，腰间挂着一柄短刀。

第二章 夜雨

　　那天夜里下起了大雨。雨点打在瓦片上，噼啪作响。
　　林远睡不着，披衣坐起，听见院门外有人轻轻敲了三下。
"""

NOVEL_EN = """Pride and Prejudice

Chapter 1

It is a truth universally acknowledged, that a single man in possession of a good fortune, must \
be in want of a wife.

"My dear Mr. Bennet," said his lady to him one day, "have you heard that Netherfield Park is let \
at last?"

Mr. Bennet replied that he had not.

Chapter 2

Mr. Bennet was among the earliest of those who waited on Mr. Bingley.
"""

LEGAL_ZH = """中华人民共和国个人信息保护法

第一章　总　　则

第一条　为了保护个人信息权益，规范个人信息处理活动，促进个人信息合理利用，根据宪法，制定本法。

第二条　自然人的个人信息受法律保护，任何组织、个人不得侵害自然人的个人信息权益。

第二章　个人信息处理规则
第一节　一般规定
第十三条　符合下列情形之一的，个人信息处理者方可处理个人信息：
（一）取得个人的同意；
（二）为订立、履行个人作为一方当事人的合同所必需，或者按照依法制定的劳动规章制度和依法签订的集体合同实施人力资源管理所必需；
（三）为履行法定职责或者法定义务所必需；
（四）为应对突发公共卫生事件，或者紧急情况下为保护自然人的生命健康和财产安全所必需；
（五）法律、行政法规规定的其他情形。
依照本法其他有关规定，处理个人信息应当取得个人同意，但是有前款第二项至第五项规定情形的，不需取得个人同意。
第十四条　基于个人同意处理个人信息的，该同意应当由个人在充分知情的前提下自愿、明确作出。
第十三条第一款规定的情形除外。
"""

LEGAL_EN = """REGULATION (EU) 2016/679 OF THE EUROPEAN PARLIAMENT AND OF THE COUNCIL

CHAPTER I

General provisions

Article 1

Subject-matter and objectives

1. This Regulation lays down rules relating to the protection of natural persons with regard to \
the processing of personal data and rules relating to the free movement of personal data.

2. This Regulation protects fundamental rights and freedoms of natural persons.

Article 2

Material scope

1. This Regulation applies to the processing of personal data wholly or partly by automated means.

CHAPTER II

Principles

Article 5

Principles relating to processing of personal data

1. Personal data shall be processed lawfully, fairly and in a transparent manner.
"""

README = """# RippleMem

Long-term memory for LLM agents, offline by default.

## Install

Install it with:

```bash
pip install ripplemem
```

## Quickstart

```python
# create a store for one user
from ripplemem import RippleMem

mem = RippleMem(path="memory", user_id="alice")
mem.add("Alice drinks green tea every morning")
print(mem.recall("what does Alice drink?"))
```

The recall returns hits with scores and the reason each one was found.

### Options

Pass `embedder="multilingual"` for Chinese text.
"""

PAPER = """Ripple Recall: Spreading Activation for Agent Memory

Abstract

We study long-term memory for language agents. Our method spreads activation over a memory graph.

1 Introduction

Agents forget what users told them. Vector search alone misses memories two hops away.

2 Method

2.1 Spreading activation

Activation starts at seed memories and flows along weighted edges for a few iterations.

2.2 Scoring

Each memory type has its own profile of relevance, recency and importance.

3 Experiments

We evaluate on LoCoMo and report recall of the evidence turns.

References

[1] A. M. Collins and E. F. Loftus. A spreading-activation theory of semantic processing. 1975.
"""

PAPER_ZH = """基于扩散激活的智能体记忆检索

摘要：本文研究智能体的长期记忆。我们在记忆图谱上进行扩散激活。

一、引言

智能体常常忘记用户说过的话。仅靠向量检索会漏掉两跳之外的记忆。

二、方法

（一）扩散激活

激活从种子记忆出发，沿带权边传播若干轮。

参考文献

[1] Collins A M, Loftus E F. A spreading-activation theory of semantic processing. 1975.
"""

NEWS = (
    "City council approves tram budget\n\n"
    "The city council approved the new budget on Tuesday after a long debate. "
    "The budget increases spending on public transport by ten percent. "
    "Council members argued about the cost of the new tram line for hours. "
    "The mayor said the tram would cut traffic in the city centre. "
    "Opposition members wanted more money for road repairs instead. "
    "The final vote was seven to four in favour of the plan. "
    "In sports, the local football club won its third match in a row. "
    "The striker scored twice in the first half against the visiting team. "
    "Fans celebrated in the stadium until late in the evening. "
    "The coach praised the defence for keeping a clean sheet. "
    "The club now sits second in the league table. "
    "Next week the team travels to the capital for a difficult away game. "
    "Meanwhile, scientists reported a new species of frog in the rainforest. "
    "The tiny frog is bright orange and lives high in the trees. "
    "Researchers found it during a survey of remote mountain valleys. "
    "They believe the species is already threatened by logging. "
    "The discovery was published in a biology journal on Monday. "
    "Conservation groups called for the forest to be protected.\n"
)


def paths(chunks: Sequence[Chunk]) -> list[tuple[str, ...]]:
    return [chunk.heading_path for chunk in chunks]


def chunk_starting(chunks: Sequence[Chunk], prefix: str) -> Chunk:
    matches = [chunk for chunk in chunks if chunk.text.startswith(prefix)]
    assert matches, f"no chunk starts with {prefix!r}"
    return matches[0]


# --- Markdown --------------------------------------------------------------------------------
def test_breadcrumbs_follow_the_heading_outline() -> None:
    doc = (
        "# Guide\n\nWhat this guide covers.\n\n## Install\n\nUse pip.\n\n### From source\n\n"
        "Clone the repository.\n\n## Usage\n\nCall recall() with a question.\n"
    )
    chunks = chunk_markdown(doc)
    assert [c.breadcrumb for c in chunks] == [
        "Guide",
        "Guide > Install",
        "Guide > Install > From source",
        "Guide > Usage",
    ]
    assert chunks[2].text == "### From source\n\nClone the repository."
    assert all(chunk.text == doc[chunk.start : chunk.end] for chunk in chunks)


def test_a_heading_with_no_text_of_its_own_opens_the_next_chunk() -> None:
    doc = "# Manual\n\n## Setup\n\nRun the installer.\n\n## Empty at the end\n"
    chunks = chunk_markdown(doc)
    assert chunks[0].text == "# Manual\n\n## Setup\n\nRun the installer."
    assert chunks[0].heading_path == ("Manual", "Setup")
    assert chunks[1].text == "## Empty at the end"
    assert chunks[1].heading_path == ("Manual", "Empty at the end")


def test_setext_headings_and_windows_line_endings() -> None:
    doc = "Title\r\n=====\r\n\r\nIntro text.\r\n\r\nPart two\r\n--------\r\n\r\nMore text.\r\n"
    chunks = chunk_markdown(doc)
    assert paths(chunks) == [("Title",), ("Title", "Part two")]
    assert chunks[1].text == "Part two\r\n--------\r\n\r\nMore text."


def test_small_sections_are_not_merged_across_headings() -> None:
    doc = "## Tea\n\nAlice drinks green tea.\n\n## Trains\n\nBob takes the 8:15 to Berlin.\n"
    chunks = chunk_markdown(doc, max_tokens=500)
    assert [c.text for c in chunks] == [
        "## Tea\n\nAlice drinks green tea.",
        "## Trains\n\nBob takes the 8:15 to Berlin.",
    ]


def test_long_english_paragraph_splits_at_sentence_ends() -> None:
    sentences = [f"Sentence number {i} talks about memory graphs and recall." for i in range(40)]
    doc = "# Notes\n\n" + " ".join(sentences) + "\n"
    chunks = chunk_markdown(doc, max_tokens=60, overlap_tokens=0)
    assert len(chunks) > 3
    for chunk in chunks:
        assert chunk.tokens <= 60
        assert chunk.text.endswith("recall.")
        assert chunk.heading_path == ("Notes",)
    assert chunks[0].text.startswith("# Notes\n\nSentence number 0 ")


def test_long_chinese_paragraph_splits_after_chinese_punctuation() -> None:
    paragraph = "".join(
        f"第{i}句话讲的是记忆图谱和扩散激活；" if i % 3 else f"这是第{i}句。" for i in range(60)
    )
    chunks = chunk_markdown(paragraph, max_tokens=50, overlap_tokens=0)
    assert len(chunks) > 3
    for chunk in chunks:
        assert chunk.tokens <= 50
        assert chunk.text[-1] in "。；"
    assert "".join(chunk.text for chunk in chunks) == paragraph


def test_a_sentence_longer_than_the_limit_is_cut_between_words() -> None:
    words = " ".join(f"word{i}" for i in range(300))
    chunks = chunk_markdown(words, max_tokens=40)
    assert all(chunk.tokens <= 40 for chunk in chunks)
    for chunk in chunks:
        assert re.fullmatch(r"word\d+( word\d+)*", chunk.text)
    assert " ".join(chunk.text for chunk in chunks) == words


def test_overlap_repeats_whole_trailing_paragraphs() -> None:
    paragraphs = [f"Paragraph {i} is short but says something about tea." for i in range(12)]
    doc = "\n\n".join(paragraphs)
    chunks = chunk_markdown(doc, max_tokens=50, overlap_tokens=15)
    assert len(chunks) > 2
    for before, after in zip(chunks, chunks[1:], strict=False):
        assert after.overlap > 0
        repeated = after.text[: after.overlap]
        assert repeated in paragraphs  # exactly one whole paragraph
        assert before.text.endswith(repeated)
        assert after.new_text.lstrip().startswith("Paragraph")
    no_overlap = chunk_markdown(doc, max_tokens=50, overlap_tokens=0)
    assert all(chunk.overlap == 0 for chunk in no_overlap)
    assert "\n\n".join(chunk.text for chunk in no_overlap) == doc


def test_token_estimates_count_chinese_characters_and_english_words() -> None:
    chunks = chunk_markdown("我喜欢绿茶 and green tea")
    assert chunks[0].tokens == 5 + round(3 * 1.3) == estimate_tokens(chunks[0].text)


def test_page_numbers_come_from_page_starts() -> None:
    pages = ["Page one text about tea.", "Page two text about trains.", "Page three text about frogs."]
    doc = "\n\n".join(pages)
    starts = [0, len(pages[0]) + 2, len(pages[0]) + len(pages[1]) + 4]
    chunks = chunk_markdown(doc, max_tokens=8, overlap_tokens=0, page_starts=starts)
    assert [(c.text, c.page, c.end_page) for c in chunks] == [
        (pages[0], 1, 1),
        (pages[1], 2, 2),
        (pages[2], 3, 3),
    ]
    whole = chunk_markdown(doc, page_starts=starts)
    assert (whole[0].page, whole[0].end_page) == (1, 3)
    assert chunk_markdown(doc)[0].page is None


def test_chunk_helpers_for_embedding_and_display() -> None:
    doc = "# Guide\n\n## Install\n\n" + "\n\n".join(f"Step {i} of the install." for i in range(30))
    chunks = chunk_markdown(doc, max_tokens=30, overlap_tokens=8)
    later = chunks[2]
    assert later.embed_text == f"Guide > Install\n\n{later.text}"
    assert later.overlap and later.new_text == later.text[later.overlap :]
    assert later.text[: later.overlap].strip() == chunks[1].text[-later.overlap :].strip()


def test_empty_and_blank_input_give_no_chunks() -> None:
    assert chunk_text("") == []
    assert chunk_text("  \n\n\t \u3000\n") == []


def test_bad_arguments_are_rejected_with_the_field_named() -> None:
    with pytest.raises(InvalidTypeError, match="text"):
        chunk_text(b"bytes")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="chunker"):
        chunk_text("hello", "pdf")
    with pytest.raises(InvalidInputError, match="max_tokens"):
        chunk_text("hello", max_tokens=0)
    with pytest.raises(InvalidInputError, match="overlap_tokens"):
        chunk_text("hello", overlap_tokens=-1)
    with pytest.raises(InvalidInputError, match="page_starts"):
        chunk_text("hello", page_starts=[5, 0])
    with pytest.raises(InvalidInputError, match="min_tokens"):
        chunk_text("hello", "semantic", max_tokens=10, min_tokens=20)


def test_defaults_fit_the_default_embedder_window() -> None:
    assert (DEFAULT_MAX_TOKENS, DEFAULT_OVERLAP_TOKENS) == (256, 64)
    long_doc = "\n\n".join(f"Paragraph {i}. " + "Some words about memory. " * 20 for i in range(20))
    assert max(chunk.tokens for chunk in chunk_text(long_doc, "markdown")) <= 256


# --- technical documents ---------------------------------------------------------------------
def test_readme_code_blocks_stay_whole_with_their_introduction() -> None:
    assert detect_document_type(README) == "technical"
    chunks = chunk_text(README)
    assert [c.breadcrumb for c in chunks] == [
        "RippleMem",
        "RippleMem > Install",
        "RippleMem > Quickstart",
        "RippleMem > Quickstart > Options",
    ]
    assert "Install it with:\n\n```bash\npip install ripplemem\n```" in chunks[1].text
    # "# create a store" inside the fence is a comment, not a heading.
    assert all("create a store" not in part for c in chunks for part in c.heading_path)


def test_a_code_block_that_fits_is_never_cut_even_when_its_section_is() -> None:
    chunks = chunk_text(README, "technical", max_tokens=48, overlap_tokens=0)  # the fence is 43
    fenced = [c for c in chunks if "```python" in c.text]
    assert len(fenced) == 1
    assert fenced[0].text.rstrip().endswith("```")
    assert "The recall returns hits" not in fenced[0].text


def test_a_code_block_over_the_limit_is_cut_between_lines() -> None:
    code = "\n".join(f"total_{i} = compute(values[{i}], weight={i})" for i in range(80))
    doc = f"# Script\n\n```python\n{code}\n```\n"
    chunks = chunk_text(doc, "technical", max_tokens=60)
    assert len(chunks) > 2
    for chunk in chunks:
        assert chunk.tokens <= 60
        end = chunk.end
        assert end == len(doc.rstrip()) or doc[end] == "\n"


# --- novels ----------------------------------------------------------------------------------
def test_chinese_novel_chunks_follow_chapters_and_scene_breaks() -> None:
    assert detect_document_type(NOVEL_ZH) == "novel"
    chunks = chunk_text(NOVEL_ZH)
    assert paths(chunks) == [("青石镇", "第一章 风起"), ("青石镇", "第一章 风起"), ("青石镇", "第二章 夜雨")]
    first, scene, second = chunks
    assert first.text.startswith("青石镇\n\n第一章 风起")
    assert first.text.endswith("＊＊＊")  # the scene ends the chunk although the next one would fit
    assert scene.text.startswith("镇上比往常热闹许多")
    assert second.text.startswith("第二章 夜雨") and "第一章" not in second.text
    assert all(chunk.chunker == "novel" for chunk in chunks)


def test_a_chapter_mentioned_inside_a_sentence_is_not_a_heading() -> None:
    chunks = chunk_text(NOVEL_ZH, "novel", max_tokens=40, overlap_tokens=0)
    assert {path[-1] for path in paths(chunks)} == {"第一章 风起", "第二章 夜雨"}
    holder = next(c for c in chunks if "第三章里夹着" in c.text)
    assert holder.heading_path == ("青石镇", "第一章 风起")


def test_english_novel_chapters() -> None:
    assert detect_document_type(NOVEL_EN) == "novel"
    chunks = chunk_text(NOVEL_EN)
    assert [c.breadcrumb for c in chunks] == [
        "Pride and Prejudice > Chapter 1",
        "Pride and Prejudice > Chapter 2",
    ]
    # "Mr." does not end a sentence, so a split would never fall after it.
    assert split_sentences("Mr. Bennet replied that he had not. She left.") == [
        "Mr. Bennet replied that he had not.",
        "She left.",
    ]


def test_gutenberg_style_chapter_labels_take_the_next_line_as_subtitle() -> None:
    doc = "CHAPTER I.\n\nThe Arrival\n\nIt was a dark night.\n\nCHAPTER II. The Visit\n\nMr. Bennet went.\n"
    chunks = chunk_text(doc)
    assert [c.breadcrumb for c in chunks] == ["CHAPTER I The Arrival", "CHAPTER II. The Visit"]
    assert chunks[0].text == "CHAPTER I.\n\nThe Arrival\n\nIt was a dark night."


# --- legal texts -----------------------------------------------------------------------------
def test_chinese_law_one_article_per_chunk_under_its_chapter_and_section() -> None:
    assert detect_document_type(LEGAL_ZH) == "legal"
    chunks = chunk_text(LEGAL_ZH)
    assert [c.heading_path[1:] for c in chunks] == [
        ("第一章 总则", "第一条"),
        ("第一章 总则", "第二条"),
        ("第二章 个人信息处理规则", "第一节 一般规定", "第十三条"),
        ("第二章 个人信息处理规则", "第一节 一般规定", "第十四条"),
    ]
    assert all(c.heading_path[0] == "中华人民共和国个人信息保护法" for c in chunks)
    assert chunks[1].text.startswith("第二条")
    assert chunks[3].text.startswith("第十四条")
    # A line starting with a cross-reference ("第十三条第一款规定的…") stays in its article.
    assert chunks[3].text.endswith("第十三条第一款规定的情形除外。")


def test_a_long_article_is_split_but_keeps_its_label() -> None:
    chunks = chunk_text(LEGAL_ZH, "legal", max_tokens=80, overlap_tokens=30)
    article_13 = [c for c in chunks if c.heading_path[-1] == "第十三条"]
    assert len(article_13) >= 3
    assert article_13[0].text.startswith("第二章")
    assert all(c.tokens <= 80 for c in article_13)
    # Each item (项) is a paragraph: a short one is repeated at the start of the next chunk.
    assert article_13[1].text.startswith("（一）取得个人的同意；\n（二）")
    assert article_13[1].overlap == len("（一）取得个人的同意；")


def test_english_regulation_articles_take_their_titles() -> None:
    assert detect_document_type(LEGAL_EN) == "legal"
    chunks = chunk_text(LEGAL_EN)
    assert [c.heading_path[1:] for c in chunks] == [
        ("CHAPTER I General provisions", "Article 1 Subject-matter and objectives"),
        ("CHAPTER I General provisions", "Article 2 Material scope"),
        ("CHAPTER II Principles", "Article 5 Principles relating to processing of personal data"),
    ]


# --- papers ----------------------------------------------------------------------------------
def test_paper_sections_from_numbered_and_named_headings() -> None:
    assert detect_document_type(PAPER) == "paper"
    chunks = chunk_text(PAPER)
    title = "Ripple Recall: Spreading Activation for Agent Memory"
    assert [c.heading_path for c in chunks] == [
        (title, "Abstract"),
        (title, "1 Introduction"),
        (title, "2 Method", "2.1 Spreading activation"),
        (title, "2 Method", "2.2 Scoring"),
        (title, "3 Experiments"),
        (title, "References"),
    ]
    assert chunks[2].text.startswith("2 Method\n\n2.1 Spreading activation")


def test_chinese_paper_sections() -> None:
    assert detect_document_type(PAPER_ZH) == "paper"
    chunks = chunk_text(PAPER_ZH)
    assert [c.heading_path[1:] for c in chunks] == [
        ("摘要",),
        ("一、引言",),
        ("二、方法", "（一）扩散激活"),
        ("参考文献",),
    ]
    assert chunks[0].text.startswith("基于扩散激活的智能体记忆检索\n\n摘要：本文研究")


REPORT_ZH = """关于推进数据治理的工作方案

一、总体要求

（一）指导思想

坚持问题导向，统筹发展和安全。

（二）工作目标

到年底，建成统一的数据目录。

二、重点任务

完善数据分类分级制度，明确各部门职责。
"""


def test_chinese_report_numbered_sections_become_the_path() -> None:
    assert detect_document_type(REPORT_ZH) == "paper"
    chunks = chunk_text(REPORT_ZH)
    assert [c.breadcrumb for c in chunks] == [
        "关于推进数据治理的工作方案 > 一、总体要求 > （一）指导思想",
        "关于推进数据治理的工作方案 > 一、总体要求 > （二）工作目标",
        "关于推进数据治理的工作方案 > 二、重点任务",
    ]


# --- semantic boundaries ---------------------------------------------------------------------
class TopicEmbedder:
    """Scripted embedder: a sentence's vector is its topic's axis, so topic shifts are known."""

    model_id = "topic-test"
    topics = ("tea", "train", "frog")

    def __init__(self) -> None:
        self.calls = 0

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        rows = []
        for text in texts:
            row = np.full(len(self.topics), 0.05, dtype=np.float32)
            for i, topic in enumerate(self.topics):
                if topic in text:
                    row[i] = 1.0
            rows.append(row / np.linalg.norm(row))
        return np.stack(rows)

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_documents([text])[0]


def topic_text(counts: Sequence[tuple[str, int]]) -> str:
    return " ".join(
        f"Sentence {i} is about {topic} and nothing else." for topic, n in counts for i in range(n)
    )


def test_semantic_chunks_end_where_the_topic_changes() -> None:
    embedder = TopicEmbedder()
    assert isinstance(embedder, Embedder)
    text = topic_text([("tea", 6), ("train", 5), ("frog", 7)])
    chunks = chunk_text(text, "semantic", embedder=embedder, max_tokens=100, overlap_tokens=20)
    topics = [{t for t in TopicEmbedder.topics if t in c.text} for c in chunks]
    assert topics == [{"tea"}, {"train"}, {"frog"}]
    assert all(chunk.overlap == 0 for chunk in chunks)  # real boundaries repeat nothing
    assert embedder.calls == 1


def test_semantic_chunks_respect_min_and_max_size() -> None:
    text = topic_text([("tea", 1), ("train", 12), ("frog", 1), ("tea", 12)])
    chunks = chunk_text(
        text, "semantic", embedder=TopicEmbedder(), max_tokens=60, min_tokens=20, overlap_tokens=0
    )
    assert sum(chunk.text.count("Sentence") for chunk in chunks) == 26  # every sentence, once
    assert all(chunk.tokens <= 60 for chunk in chunks)
    assert all(chunk.tokens >= 20 for chunk in chunks)
    # A one-sentence topic is too small to stand alone: it rides with a neighbour.
    assert not any(chunk.text.count("Sentence") == 1 for chunk in chunks)


def test_semantic_text_that_fits_is_one_chunk_without_embedding() -> None:
    embedder = TopicEmbedder()
    chunks = SemanticChunker(embedder, max_tokens=100).chunk("Short text about tea. And trains.")
    assert len(chunks) == 1 and embedder.calls == 0


def test_an_embedder_that_loses_texts_is_reported() -> None:
    class Lossy(TopicEmbedder):
        def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
            return super().embed_documents(texts)[:-1]

    with pytest.raises(InvalidInputError, match="returned 5 vectors for 6 texts"):
        chunk_text(topic_text([("tea", 3), ("frog", 3)]), "semantic", embedder=Lossy(), max_tokens=30)


def test_semantic_without_an_embedder_falls_back_to_word_overlap() -> None:
    chunks = chunk_text(NEWS, "semantic", max_tokens=120)
    assert all(chunk.tokens <= 120 for chunk in chunks)
    assert "".join(c.text for c in chunks).replace(" ", "").replace("\n", "") == NEWS.replace(
        " ", ""
    ).replace("\n", "")


def test_news_with_minilm_cuts_at_the_story_changes(embedder: Embedder) -> None:
    chunks = chunk_text(NEWS, "news", embedder=embedder, max_tokens=120)
    assert all(chunk.heading_path == ("City council approves tram budget",) for chunk in chunks)
    starts = [chunk.new_text for chunk in chunks]
    assert starts[0].startswith("City council approves tram budget")
    assert [s.split(".")[0] for s in starts[1:]] == [
        "In sports, the local football club won its third match in a row",
        "Meanwhile, scientists reported a new species of frog in the rainforest",
    ]


# --- auto ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (LEGAL_ZH, "legal"),
        (LEGAL_EN, "legal"),
        (NOVEL_ZH, "novel"),
        (NOVEL_EN, "novel"),
        (PAPER, "paper"),
        (PAPER_ZH, "paper"),
        (README, "technical"),
        (REPORT_ZH, "paper"),
        ("# Chapter 1\n\nSet up.\n\n```bash\nmake\n```\n\n# Chapter 2\n\nRun it.", "technical"),
        ("1. Open the app\n2. Click Save\n3. Close the window", "semantic"),
        ("# Notes\n\nSome notes.\n\n## More\n\nMore notes.", "markdown"),
        ("| name | drink |\n|---|---|\n| Alice | tea |\n| Bob | coffee |", "markdown"),
        ('{\n  "name": "alice",\n  "drinks": [\n    "tea"\n  ]\n}', "technical"),
        (NEWS, "semantic"),
        ("小明今天去了北京。他在天安门广场拍了很多照片。", "semantic"),
    ],
)
def test_auto_picks_the_chunker_by_content(text: str, expected: str) -> None:
    assert detect_document_type(text) == expected
    assert resolve_chunker(text) == expected
    assert {chunk.chunker for chunk in chunk_text(text)} == {expected}
