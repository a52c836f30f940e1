"""The CLAP audio encoder: WAV files read at the model's rate, and transformers' ClapModel run from
disk. No CLAP checkpoint is on the test machine, so the model is a tiny randomly initialised one
built here (real transformers code, its own 16-dimensional space): it proves the plumbing from file
to audio index to cross-modal recall, not CLAP's quality."""

from __future__ import annotations

import wave
from pathlib import Path

import numpy as np
import pytest
from internals import engine_of
from media_encoders import write_tone

from ripplemem import RippleMem
from ripplemem.embedding.media_encoders import ClapAudioEncoder, read_audio


def peak_hertz(samples: np.ndarray, rate: int) -> float:
    """The loudest frequency of a signal."""
    return float(np.fft.rfftfreq(len(samples), 1 / rate)[int(np.argmax(np.abs(np.fft.rfft(samples))))])


def test_a_wav_is_read_as_mono_at_the_models_rate(tmp_path: Path) -> None:
    tone = read_audio(write_tone(tmp_path / "a.wav", 440, seconds=0.5, rate=16_000), 48_000)
    assert len(tone) == 24_000 and abs(peak_hertz(tone, 48_000) - 440) < 5
    assert 0.3 < float(np.max(np.abs(tone))) <= 1.0

    stereo = tmp_path / "stereo8.wav"
    left = (np.sin(2 * np.pi * 1000 * np.arange(8000) / 8000 * 0.25) * 100 + 128).astype(np.uint8)
    with wave.open(str(stereo), "wb") as out:
        out.setnchannels(2)
        out.setsampwidth(1)
        out.setframerate(8000)
        out.writeframes(np.stack([left, left], axis=1).tobytes())
    mono = read_audio(stereo, 8000)
    assert len(mono) == 8000 and abs(peak_hertz(mono, 8000) - 250) < 5


@pytest.fixture(scope="module")
def tiny_clap(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny random CLAP model (text and audio towers, 16-dimensional projection) saved to disk."""
    from tokenizers import ByteLevelBPETokenizer
    from transformers import ClapConfig, ClapFeatureExtractor, ClapModel, ClapProcessor, RobertaTokenizerFast

    folder = tmp_path_factory.mktemp("tiny-clap")
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(
        ["a low hum", "a dog barking", "a high whistle", "rain on the roof"],
        vocab_size=300,
        special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"],
    )
    bpe.save_model(str(folder))
    tokenizer = RobertaTokenizerFast(
        vocab_file=str(folder / "vocab.json"), merges_file=str(folder / "merges.txt")
    )
    config = ClapConfig(
        text_config={
            "vocab_size": tokenizer.vocab_size + 5,
            "hidden_size": 32,
            "num_hidden_layers": 1,
            "num_attention_heads": 2,
            "intermediate_size": 37,
            "max_position_embeddings": 64,
            "projection_dim": 16,
        },
        audio_config={
            "hidden_size": 32,
            "patch_embeds_hidden_size": 16,
            "depths": [1, 1],
            "num_attention_heads": [2, 2],
            "window_size": 8,
            "spec_size": 256,
            "num_mel_bins": 64,
            "projection_dim": 16,
            "enable_fusion": False,
        },
        projection_dim=16,
    )
    ClapModel(config).save_pretrained(folder)
    extractor = ClapFeatureExtractor(
        feature_size=64, sampling_rate=48_000, max_length_s=1, truncation="rand_trunc"
    )
    ClapProcessor(feature_extractor=extractor, tokenizer=tokenizer).save_pretrained(folder)
    return folder


def test_the_clap_encoder_fills_the_audio_index_in_its_own_space(
    mem: RippleMem, tmp_path: Path, tiny_clap: Path
) -> None:
    # Random weights put no meaning in cosines: every match is let through (min_similarity=-1).
    encoder = ClapAudioEncoder(str(tiny_clap), min_similarity=-1.0)
    memo = write_tone(tmp_path / "memo.wav", 300)
    stored = mem.media.add_audio(memo, encoder=encoder)
    assert engine_of(mem).media.counts("alice") == {"audio": 1}
    with engine_of(mem).store.read() as conn:
        [(size,)] = conn.execute("SELECT length(embedding) FROM modality_vectors").fetchall()
    assert size == 16 * 4  # float32, CLAP's projection, not MiniLM's 384
    hit = next(h for h in mem.recall("a low hum", 3).hits if h.memory.id == stored.id)
    expected = float(encoder.embed_text("a low hum") @ encoder.embed_audio(memo))
    assert hit.memory.metadata["file"] == str(memo.resolve())
    assert hit.components["cross_modal"] == pytest.approx(expected, abs=1e-4)
