"""Keyword tokens and token estimates, which decide what BM25 can match and what fits a prompt."""

from __future__ import annotations

from ripplemem.core.text import estimate_tokens, keyword_tokens


def test_chinese_runs_become_bigrams_so_two_character_words_match() -> None:
    assert keyword_tokens("用户喜欢喝绿茶") == ["用户", "户喜", "喜欢", "欢喝", "喝绿", "绿茶"]
    assert "绿茶" in keyword_tokens("绿茶")
    assert keyword_tokens("茶") == ["茶"]


def test_mixed_text_keeps_words_and_lowercases() -> None:
    assert keyword_tokens("I booked 去柏林 flights, didn't I?") == [
        "i",
        "booked",
        "去柏",
        "柏林",
        "flights",
        "didn't",
        "i",
    ]
    assert keyword_tokens("the cat and THE dog", drop_stopwords=True) == ["cat", "dog"]


def test_token_estimates_count_cjk_per_character() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("我喜欢绿茶") == 5
    assert estimate_tokens("ten words " * 5) == 13
    assert estimate_tokens("早上 green tea") == 2 + 3
