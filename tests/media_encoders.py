"""Small real encoders for the add_image / add_audio plug point, and writers of the files they read.

They are honest stand-ins for CLIP / CLAP: each has its own tiny space, far from the text
embedder's 384 dimensions, with a file side and a text side that meet in it. The colour encoder
puts an image at its closeness to six named colours and a query at the colours it names; the pitch
encoder puts a sound at its energy in three pitch bands and a query at the bands its words describe.
"""

from __future__ import annotations

import re
import wave
from pathlib import Path

import numpy as np

COLOURS = {
    "red": (220, 30, 30),
    "green": (30, 180, 60),
    "blue": (30, 60, 220),
    "yellow": (240, 220, 40),
    "black": (10, 10, 10),
    "white": (245, 245, 245),
}
# Pitch bands (Hz) and the words a query uses for each.
BANDS = {"low": (0, 200), "mid": (200, 1000), "high": (1000, 20_000)}
BAND_WORDS = {
    "low": ("hum", "low", "bass", "rumble", "deep"),
    "mid": ("voice", "spoken", "speech", "talk"),
    "high": ("whistle", "high-pitched", "shrill", "beep"),
}


def write_ppm(path: Path, rgb: tuple[int, int, int], size: int = 16) -> Path:
    """A binary PPM (P6) image of one colour with a few off-colour pixels."""
    pixels = np.tile(np.asarray(rgb, dtype=np.uint8), (size, size, 1))
    pixels[0, :3] = (128, 128, 128)
    path.write_bytes(f"P6 {size} {size} 255\n".encode() + pixels.tobytes())
    return path


def write_tone(path: Path, hertz: float, seconds: float = 0.5, rate: int = 16_000) -> Path:
    """A mono 16-bit WAV of a sine tone."""
    t = np.arange(int(seconds * rate)) / rate
    samples = (np.sin(2 * np.pi * hertz * t) * 12_000).astype("<i2")
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(samples.tobytes())
    return path


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z-]+", text.lower()))


class ColourSpaceImageEncoder:
    """A 6-dimensional colour space: an image is its closeness to each named colour (PPM P6 only),
    a query the colours it names."""

    min_similarity = 0.5

    def __init__(self, model_id: str = "test-colour-space") -> None:
        self.model_id = model_id

    def embed_image(self, path: Path) -> np.ndarray:
        """Closeness of the mean pixel to each named colour."""
        data = path.read_bytes()
        magic, width, height, _, body = data.split(maxsplit=4)
        if magic != b"P6":
            raise ValueError("not a binary PPM image")
        pixels = np.frombuffer(body, dtype=np.uint8).reshape(int(height), int(width), 3)
        mean = pixels.reshape(-1, 3).mean(axis=0)
        distance = np.array([np.linalg.norm(np.asarray(rgb) - mean) for rgb in COLOURS.values()])
        return np.exp(-((distance / 60.0) ** 2)).astype(np.float32)

    def embed_text(self, text: str) -> np.ndarray:
        """The colours a query names (all zeros when it names none)."""
        words = _words(text)
        return np.array([name in words for name in COLOURS], dtype=np.float32)


class PitchSpaceAudioEncoder:
    """A 3-dimensional pitch space: a sound is its energy share in low / mid / high bands (WAV), a
    query the bands its words describe."""

    model_id = "test-pitch-space"
    min_similarity = 0.5

    def embed_audio(self, path: Path) -> np.ndarray:
        """The share of spectral energy in each band."""
        with wave.open(str(path), "rb") as sound:
            rate = sound.getframerate()
            samples = np.frombuffer(sound.readframes(sound.getnframes()), dtype="<i2").astype(np.float64)
        power = np.abs(np.fft.rfft(samples)) ** 2
        freqs = np.fft.rfftfreq(len(samples), 1 / rate)
        shares = np.array([power[(freqs >= lo) & (freqs < hi)].sum() for lo, hi in BANDS.values()])
        return (shares / shares.sum()).astype(np.float32)

    def embed_text(self, text: str) -> np.ndarray:
        """The bands a query's words describe (all zeros when none)."""
        words = _words(text)
        return np.array([any(w in words for w in BAND_WORDS[band]) for band in BANDS], dtype=np.float32)


class ClipSizedEncoder:
    """An image encoder of another space: 512-dimensional vectors, like CLIP ViT-B/32's."""

    model_id = "test-512"

    def embed_image(self, path: Path) -> np.ndarray:
        """A 512-dimensional vector drawn from the file's bytes."""
        seed = int.from_bytes(path.read_bytes()[-8:], "little")
        return np.random.default_rng(seed).normal(size=512).astype(np.float32)
