"""Images and audio as perceptual memories: captions or a pluggable encoder embed them, recall hits
carry the file reference, bad input is refused before anything is stored, users are apart."""

from __future__ import annotations

from pathlib import Path

import pytest
from media_encoders import (
    COLOURS,
    DominantColourImageEncoder,
    PitchAudioEncoder,
    WrongSizeEncoder,
    write_ppm,
    write_tone,
)

from ripplemem import InvalidInputError, InvalidTypeError, RippleMem
from ripplemem.embeddings import Embedder
from ripplemem.media import SentenceTransformerImageEncoder


def test_a_captioned_image_is_recalled_with_its_file(mem: RippleMem, tmp_path: Path) -> None:
    beach = write_ppm(tmp_path / "IMG_0001.ppm", COLOURS["yellow"])
    menu = write_ppm(tmp_path / "IMG_0002.ppm", COLOURS["white"])
    mem.add_image(beach, "Our dog Rex running on the beach at sunset", event_time="2024-06-01T19:00:00")
    mem.add_image(menu, "The dinner menu of the trattoria in Florence")
    mem.add("I booked the train to Florence for Friday.")

    hit = mem.recall("the photo of Rex on the beach", 3).hits[0].memory
    assert hit.type == "perceptual" and hit.modality == "image"
    assert hit.metadata["file"] == str(beach.resolve()) and hit.metadata["embedded"] == "caption"
    assert hit.metadata["media_type"] == "image/x-portable-pixmap"
    assert hit.content == "Our dog Rex running on the beach at sunset"


def test_an_encoder_embeds_the_image_itself(mem: RippleMem, tmp_path: Path, embedder: Embedder) -> None:
    encoder = DominantColourImageEncoder(embedder)
    files = {name: write_ppm(tmp_path / f"IMG_{i:04}.ppm", COLOURS[name]) for i, name in enumerate(COLOURS)}
    for file in files.values():
        memory = mem.add_image(file, encoder=encoder)
        assert memory.content == f"image {file.name}" and memory.metadata["encoder"] == "test-dominant-colour"
    for colour in ("red", "blue", "green"):
        top = mem.recall(f"a {colour} picture", 3, mode="dense").hits[0].memory
        assert top.metadata["file"] == str(files[colour].resolve()), colour


def test_with_caption_and_encoder_the_file_vector_is_used(mem: RippleMem, tmp_path: Path,
                                                          embedder: Embedder) -> None:
    red = write_ppm(tmp_path / "IMG_0100.ppm", COLOURS["red"])
    blue = write_ppm(tmp_path / "IMG_0101.ppm", COLOURS["blue"])
    encoder = DominantColourImageEncoder(embedder)
    mem.add_image(red, "holiday snapshot", encoder=encoder)
    mem.add_image(blue, "holiday snapshot two", encoder=encoder)
    top = mem.recall("a blue picture", 2, mode="dense").hits[0].memory
    assert top.metadata["file"] == str(blue.resolve()) and top.metadata["embedded"] == "image"
    assert top.metadata["caption"] == "holiday snapshot two"


def test_audio_by_transcript_and_by_encoder(mem: RippleMem, tmp_path: Path, embedder: Embedder) -> None:
    memo = write_tone(tmp_path / "memo.wav", 440)
    mem.add_audio(memo, "Voice memo: remember to buy oat milk and call the plumber")
    hit = mem.recall("what did my voice memo say about the plumber?", 2).hits[0].memory
    assert hit.modality == "audio" and hit.metadata["file"] == str(memo.resolve())
    assert hit.metadata["transcript"].startswith("Voice memo")

    encoder = PitchAudioEncoder(embedder)
    low, high = write_tone(tmp_path / "rec1.wav", 90), write_tone(tmp_path / "rec2.wav", 3000)
    mem.add_audio(low, encoder=encoder)
    mem.add_audio(high, encoder=encoder)
    top = mem.recall("the high-pitched whistle recording", 3, mode="dense").hits[0].memory
    assert top.metadata["file"] == str(high.resolve())


def test_bad_media_input_is_refused_and_nothing_is_stored(mem: RippleMem, tmp_path: Path) -> None:
    image = write_ppm(tmp_path / "IMG_0200.ppm", COLOURS["green"])
    with pytest.raises(InvalidInputError, match="needs a caption .* or an encoder"):
        mem.add_image(image)
    with pytest.raises(InvalidInputError, match="needs a transcript"):
        mem.add_audio(write_tone(tmp_path / "a.wav", 300))
    with pytest.raises(InvalidInputError, match="no image file at"):
        mem.add_image(tmp_path / "missing.jpg", "a caption")
    with pytest.raises(InvalidInputError, match=r"512-dimensional vector, but this store .*\(384 dimensions"):
        mem.add_image(image, "a caption", encoder=WrongSizeEncoder())
    with pytest.raises(InvalidTypeError, match="embed_image"):
        mem.add_image(image, "a caption", encoder=PitchAudioEncoder)
    with pytest.raises(InvalidInputError, match="could not read"):
        mem.add_image(write_tone(tmp_path / "not_an_image.ppm", 200), encoder=DominantColourImageEncoder(
            mem._engine.embedder))
    with pytest.raises(InvalidInputError, match="caption must be a non-empty string"):
        mem.add_image(image, "   ")
    assert mem.list() == []


def test_images_are_isolated_per_user(mem: RippleMem, tmp_path: Path) -> None:
    mem.add_image(write_ppm(tmp_path / "IMG_0300.ppm", COLOURS["black"]), "Alice's passport scan")
    bob = mem.scope("bob")
    assert bob.recall("passport scan", 5).hits == [] and bob.list() == []


def test_the_clip_encoder_names_a_model_it_cannot_load(mem: RippleMem, tmp_path: Path) -> None:
    image = write_ppm(tmp_path / "IMG_0400.ppm", COLOURS["red"])
    with pytest.raises(InvalidInputError, match="cannot load the image model '/nonexistent/clip'"):
        mem.add_image(image, encoder=SentenceTransformerImageEncoder("/nonexistent/clip"))
    assert mem.list() == []
