"""Rule-based entities in English and Chinese, and the normalisation that lets mentions meet."""

from __future__ import annotations

from ripplemem.language.entities import canonical_name, extract_entities, query_entity_keys


def _names(text: str) -> dict[str, str]:
    return {e.canonical: e.type for e in extract_entities(text)}


def test_english_names_titles_speakers_dates_and_quantities() -> None:
    found = _names(
        'Calvin: I started "The Three-Body Problem" by Liu Cixin on 8 May, 2023 '
        "and ran 5 km around Central Park with Frank Ocean."
    )
    assert found["calvin"] == "person"
    assert found["three-body problem"] == "title"
    assert "liu cixin" in found and "central park" in found and "frank ocean" in found
    assert found["8 may, 2023"] == "date"
    assert found["5 km"] == "quantity"


def test_sentence_openers_and_fillers_are_not_entities() -> None:
    found = _names("Hey Mel! The weather was great. I think We should go. Thanks! Wow, May was busy.")
    assert set(found) == {"mel"}


def test_chinese_titles_and_proper_nouns() -> None:
    found = _names("我在北京读完了《三体》，作者是刘慈欣。")
    assert found["三体"] == "title"
    assert "北京" in found and "刘慈欣" in found


def test_normalisation_makes_mentions_meet() -> None:
    assert canonical_name("Frank Ocean") == canonical_name("frank ocean") == canonical_name(" FRANK  OCEAN ")
    assert canonical_name("《三体》") == canonical_name("三体")
    assert canonical_name("The Beatles") == "beatles"
    assert canonical_name("Caroline's") == "caroline"


def test_query_keys_include_parts_of_multiword_names() -> None:
    assert query_entity_keys("Did Frank Ocean play in New York?") == [
        "frank ocean",
        "frank",
        "ocean",
        "new york",
        "new",
        "york",
    ]
    assert query_entity_keys("what is the weather like") == []
