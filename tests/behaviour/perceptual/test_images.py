"""Images and audio as perceptual memories: captions are embedded as text, an encoder embeds the file
into its own space and index (not the text embedder's 384 dimensions), cross-modal recall finds the
file from a text query, bad input is refused before anything is stored, users are apart."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from internals import engine_of
from media_encoders import (
    COLOURS,
    ClipSizedEncoder,
    ColourSpaceImageEncoder,
    PitchSpaceAudioEncoder,
    write_ppm,
    write_tone,
)

from ripplemem import (
    EmbeddingModelMismatchError,
    InvalidInputError,
    InvalidTypeError,
    RippleMem,
    StoreOptions,
)
from ripplemem.embedding.media_encoders import ClapAudioEncoder, SentenceTransformerImageEncoder


def photo_album(mem: RippleMem, folder: Path) -> dict[str, Path]:
    """One uncaptioned photo of each named colour, embedded by the colour encoder only."""
    encoder = ColourSpaceImageEncoder()
    files = {name: write_ppm(folder / f"IMG_{i:04}.ppm", COLOURS[name]) for i, name in enumerate(COLOURS)}
    for file in files.values():
        mem.media.add_image(file, encoder=encoder)
    return files


def test_a_captioned_image_is_recalled_with_its_file(mem: RippleMem, tmp_path: Path) -> None:
    beach = write_ppm(tmp_path / "IMG_0001.ppm", COLOURS["yellow"])
    menu = write_ppm(tmp_path / "IMG_0002.ppm", COLOURS["white"])
    mem.media.add_image(beach, "Our dog Rex running on the beach at sunset", event_time="2024-06-01T19:00:00")
    mem.media.add_image(menu, "The dinner menu of the trattoria in Florence")
    mem.add("I booked the train to Florence for Friday.")

    hit = mem.recall("the photo of Rex on the beach", 3).hits[0].memory
    assert hit.type == "perceptual" and hit.modality == "image"
    assert hit.metadata["file"] == str(beach.resolve()) and hit.metadata["embedded"] == ["caption"]
    assert hit.metadata["media_type"] == "image/x-portable-pixmap"
    assert hit.content == "Our dog Rex running on the beach at sunset"


def test_an_encoder_of_its_own_space_finds_images_from_text(mem: RippleMem, tmp_path: Path) -> None:
    files = photo_album(mem, tmp_path)
    mem.add("The red team won the football match on Sunday.")
    # The images live in a 6-dimensional index beside the 384-dimensional MiniLM text index.
    assert engine_of(mem).media.counts("alice") == {"image": len(COLOURS)}
    assert engine_of(mem).store.get_meta("embedding_model") == mem.stats()["embedding_model"]
    for colour in ("red", "blue", "green"):
        hits = mem.recall(f"a {colour} picture", 5).hits
        # Only the image the query names clears the encoder's floor; rank fusion puts it at the top
        # or right after the text list's best (the text list wins ties).
        [matched] = [h for h in hits if "cross_modal" in h.components]
        assert matched.memory.metadata["file"] == str(files[colour].resolve()), colour
        assert matched in hits[:2] and matched.memory.metadata["embedded"] == ["image"]
        assert matched.components["cross_modal"] > 0.9 and "test-colour-space" in matched.why


def test_a_query_outside_the_encoders_space_leaves_recall_as_it_was(mem: RippleMem, tmp_path: Path) -> None:
    photo_album(mem, tmp_path)
    mem.add("I booked the train to Florence for Friday.")
    hits = mem.recall("when is the train to Florence?", 3).hits
    assert hits[0].memory.content == "I booked the train to Florence for Friday."
    assert all("rank_fusion" not in h.components and "cross_modal" not in h.components for h in hits)


def test_caption_and_image_are_both_embedded(mem: RippleMem, tmp_path: Path) -> None:
    red = write_ppm(tmp_path / "IMG_0100.ppm", COLOURS["red"])
    blue = write_ppm(tmp_path / "IMG_0101.ppm", COLOURS["blue"])
    encoder = ColourSpaceImageEncoder()
    mem.media.add_image(red, "Grandma's birthday cake on the kitchen table", encoder=encoder)
    mem.media.add_image(blue, "The view from the hotel balcony in Lisbon", encoder=encoder)
    by_caption = mem.recall("grandma's birthday", 2, mode="hybrid").hits[0].memory
    assert by_caption.metadata["file"] == str(red.resolve())
    assert by_caption.metadata["embedded"] == ["caption", "image"]
    by_image = mem.recall("the blue one", 2).hits[0]
    assert by_image.memory.metadata["file"] == str(blue.resolve())
    assert by_image.memory.metadata["caption"] == "The view from the hotel balcony in Lisbon"


def test_audio_by_transcript_and_by_its_own_encoder(mem: RippleMem, tmp_path: Path) -> None:
    memo = write_tone(tmp_path / "memo.wav", 440)
    mem.media.add_audio(memo, "Voice memo: remember to buy oat milk and call the plumber")
    hit = mem.recall("what did my voice memo say about the plumber?", 2).hits[0].memory
    assert hit.modality == "audio" and hit.metadata["file"] == str(memo.resolve())
    assert hit.metadata["transcript"].startswith("Voice memo")

    mem.media.use_encoder("audio", PitchSpaceAudioEncoder())
    low, high = write_tone(tmp_path / "rec1.wav", 90), write_tone(tmp_path / "rec2.wav", 3000)
    mem.media.add_audio(low)
    mem.media.add_audio(high)
    assert engine_of(mem).media.counts("alice") == {"audio": 2}
    top = mem.recall("the high-pitched whistle recording", 3).hits[0].memory
    assert top.metadata["file"] == str(high.resolve()) and top.metadata["encoder"] == "test-pitch-space"
    top = mem.recall("that deep rumble", 3).hits[0].memory
    assert top.metadata["file"] == str(low.resolve())


def test_bad_media_input_is_refused_and_nothing_is_stored(mem: RippleMem, tmp_path: Path) -> None:
    image = write_ppm(tmp_path / "IMG_0200.ppm", COLOURS["green"])
    with pytest.raises(InvalidInputError, match="needs a caption .* or an encoder"):
        mem.media.add_image(image)
    with pytest.raises(InvalidInputError, match="needs a transcript"):
        mem.media.add_audio(write_tone(tmp_path / "a.wav", 300))
    with pytest.raises(InvalidInputError, match="no image file at"):
        mem.media.add_image(tmp_path / "missing.jpg", "a caption")
    with pytest.raises(InvalidTypeError, match="embed_image"):
        mem.media.add_image(image, "a caption", encoder=PitchSpaceAudioEncoder())
    with pytest.raises(InvalidInputError, match="could not read"):
        mem.media.add_image(write_tone(tmp_path / "not_an_image.ppm", 200), encoder=ColourSpaceImageEncoder())
    with pytest.raises(InvalidInputError, match="caption must be a non-empty string"):
        mem.media.add_image(image, "   ")

    class Blank(ColourSpaceImageEncoder):
        def embed_image(self, path: Path) -> np.ndarray:
            return np.zeros(6, dtype=np.float32)

    with pytest.raises(InvalidInputError, match="no usable vector"):
        mem.media.add_image(image, "a caption", encoder=Blank())
    with pytest.raises(InvalidTypeError, match="model_id"):
        mem.media.add_image(image, "a caption", encoder=ColourSpaceImageEncoder(model_id=""))
    with pytest.raises(InvalidInputError, match="modality must be one of image, audio"):
        mem.media.use_encoder("video", ColourSpaceImageEncoder())
    assert mem.list() == [] and engine_of(mem).media.counts("alice") == {}


def test_another_encoder_is_refused_and_nothing_stored_is_lost(mem: RippleMem, tmp_path: Path) -> None:
    files = photo_album(mem, tmp_path)
    extra = write_ppm(tmp_path / "IMG_0900.ppm", COLOURS["red"])
    with pytest.raises(
        EmbeddingModelMismatchError,
        match=r"built with encoder 'test-colour-space' \(6 dimensions\).*'test-512' "
        r"\(512 dimensions\)",
    ):
        mem.media.add_image(extra, "a red car", encoder=ClipSizedEncoder())
    with pytest.raises(EmbeddingModelMismatchError, match="'test-colour-space'.*'another-colour-model'"):
        mem.media.use_encoder("image", ColourSpaceImageEncoder(model_id="another-colour-model"))
    assert len(mem.list()) == len(COLOURS) and engine_of(mem).media.counts("alice") == {"image": len(COLOURS)}
    top = mem.recall("a red picture", 3).hits[0].memory
    assert top.metadata["file"] == str(files["red"].resolve())


def test_images_are_isolated_per_user(mem: RippleMem, tmp_path: Path) -> None:
    files = photo_album(mem, tmp_path)
    mem.media.add_image(write_ppm(tmp_path / "IMG_0300.ppm", COLOURS["black"]), "Alice's passport scan")
    bob = mem.scope("bob")
    assert bob.recall("passport scan", 5).hits == [] and bob.list() == []
    assert bob.recall("a red picture", 5).hits == []
    red = ColourSpaceImageEncoder().embed_image(files["red"])
    assert engine_of(mem).media.query("image", "bob", red / np.linalg.norm(red), 10) == []
    assert engine_of(mem).media.counts("bob") == {"image": 0}


def test_images_are_isolated_in_one_shared_collection_too(tmp_path: Path, embedder: object) -> None:
    with RippleMem(
        tmp_path / "shared",
        user_id="alice",
        embedder=embedder,
        store=StoreOptions(vector_index="chroma", isolation="filter"),
    ) as alice:
        files = photo_album(alice, tmp_path)
        bob = alice.scope("bob")
        bob.media.add_image(
            write_ppm(tmp_path / "BOB_0001.ppm", COLOURS["red"]), encoder=ColourSpaceImageEncoder()
        )
        assert engine_of(alice).media.index("image").isolation == "filter"  # type: ignore[attr-defined]
        alice_hits = alice.recall("a red picture", 5).hits
        bob_hits = bob.recall("a red picture", 5).hits
        assert {h.memory.user_id for h in alice_hits} == {"alice"}
        assert [h.memory.user_id for h in bob_hits] == ["bob"]
        assert [h.memory.metadata["file"] for h in alice_hits if "cross_modal" in h.components] == [
            str(files["red"].resolve())
        ]
        assert bob_hits[0].memory.metadata["file"].endswith("BOB_0001.ppm")
        assert "cross_modal" in bob_hits[0].components
        assert engine_of(alice).media.counts("bob") == {"image": 1}


def test_the_clip_and_clap_encoders_name_a_model_they_cannot_load(mem: RippleMem, tmp_path: Path) -> None:
    image = write_ppm(tmp_path / "IMG_0400.ppm", COLOURS["red"])
    with pytest.raises(InvalidInputError, match="cannot load the image model '/nonexistent/clip' from disk"):
        mem.media.add_image(image, encoder=SentenceTransformerImageEncoder("/nonexistent/clip"))
    with pytest.raises(InvalidInputError, match="cannot load the audio model '/nonexistent/clap' from disk"):
        mem.media.add_audio(
            write_tone(tmp_path / "a.wav", 300), encoder=ClapAudioEncoder("/nonexistent/clap")
        )
    assert mem.list() == []
