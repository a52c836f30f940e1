"""Small real encoders for the add_image / add_audio plug point, and writers of the files they read.

They are honest stand-ins for CLIP / CLAP: each turns one measurable property of the file into a
sentence and embeds it with the store's own text embedder, so text queries meet them in one space.
"""

from __future__ import annotations

import wave
from pathlib import Path

import numpy as np

from ripplemem.embeddings import Embedder

COLOURS = {"red": (220, 30, 30), "green": (30, 180, 60), "blue": (30, 60, 220), "yellow": (240, 220, 40),
           "black": (10, 10, 10), "white": (245, 245, 245)}


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


class DominantColourImageEncoder:
    """Embeds 'a mostly <colour> picture' for the colour nearest the image's mean pixel (PPM P6 only)."""

    model_id = "test-dominant-colour"

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder

    def colour_of(self, path: Path) -> str:
        """The named colour nearest the mean pixel."""
        data = path.read_bytes()
        magic, width, height, _, body = data.split(maxsplit=4)
        if magic != b"P6":
            raise ValueError("not a binary PPM image")
        pixels = np.frombuffer(body, dtype=np.uint8).reshape(int(height), int(width), 3)
        mean = pixels.reshape(-1, 3).mean(axis=0)
        return min(COLOURS, key=lambda name: float(np.sum((np.asarray(COLOURS[name]) - mean) ** 2)))

    def embed_image(self, path: Path) -> np.ndarray:
        """The text vector of the image's colour sentence."""
        return self.embedder.embed_query(f"a mostly {self.colour_of(path)} picture")


class PitchAudioEncoder:
    """Embeds 'a low hum', 'a spoken-range tone' or 'a high-pitched whistle' by the loudest frequency."""

    model_id = "test-pitch"

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder

    def embed_audio(self, path: Path) -> np.ndarray:
        """The text vector of the sound's pitch sentence."""
        with wave.open(str(path), "rb") as sound:
            rate = sound.getframerate()
            samples = np.frombuffer(sound.readframes(sound.getnframes()), dtype="<i2").astype(np.float64)
        spectrum = np.abs(np.fft.rfft(samples))
        peak = float(np.fft.rfftfreq(len(samples), 1 / rate)[int(np.argmax(spectrum))])
        words = "a low hum" if peak < 200 else "a spoken-range tone" if peak < 1000 else \
            "a high-pitched whistle"
        return self.embedder.embed_query(words)


class WrongSizeEncoder:
    """An image encoder of another embedding space (CLIP-sized vectors for a MiniLM store)."""

    model_id = "test-512"

    def embed_image(self, path: Path) -> np.ndarray:
        """A 512-dimensional vector."""
        return np.ones(512, dtype=np.float32)
