"""Encoders for images and audio (CLIP for images, CLAP for audio). Each embeds a file
into its own space (any dimension, apart from the text embedder's); one with a text side
(``embed_text``) also embeds a query into that space, which is what cross-modal recall searches
with. The models load lazily from disk: RippleMem never downloads one itself."""

from __future__ import annotations

import wave
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from ripplemem.embedding.base import LazyModel
from ripplemem.embedding.embedders import TORCH_EXTRA_HINT
from ripplemem.errors import InvalidInputError, MissingDependencyError

# CLIP ViT-B/32 and CLAP put a matching caption at a cosine of about 0.25-0.35 from its image or
# sound, unrelated text lower (published CLIPScore practice; not measured here, no model on disk):
# below this floor a cross-modal match is not offered to recall.
DEFAULT_MIN_SIMILARITY = 0.2


class ImageEncoder(Protocol):
    """Embeds an image file into the encoder's own space. Optional: ``embed_text(query)`` (the
    same space's text side, for cross-modal recall) and ``min_similarity`` (its floor)."""

    model_id: str

    def embed_image(self, path: Path) -> np.ndarray:
        """One vector of shape (dimension,) for the image at `path`."""
        ...


class AudioEncoder(Protocol):
    """Embeds an audio file into the encoder's own space; optional ``embed_text`` and
    ``min_similarity`` as for ImageEncoder."""

    model_id: str

    def embed_audio(self, path: Path) -> np.ndarray:
        """One vector of shape (dimension,) for the audio at `path`."""
        ...


def _unit(vector: Any) -> np.ndarray:
    array = np.asarray(vector, dtype=np.float32).reshape(-1)
    norm = float(np.linalg.norm(array))
    return array / norm if norm > 0 else array


class SentenceTransformerImageEncoder:
    """CLIP through sentence-transformers (e.g. "clip-ViT-B-32"): images with the vision tower,
    queries with the text tower, both in CLIP's 512-dimensional space. Needs Pillow and the model
    on disk (a path, or a name already in the Hugging Face cache)."""

    def __init__(
        self, model_name_or_path: str = "clip-ViT-B-32", *, min_similarity: float = DEFAULT_MIN_SIMILARITY
    ) -> None:
        self.model_id = model_name_or_path
        self.min_similarity = min_similarity
        self._model = LazyModel(self._load)

    def _load(self) -> Any:
        from sentence_transformers import SentenceTransformer

        try:
            return SentenceTransformer(self.model_id, local_files_only=True)
        except (OSError, ValueError) as exc:
            raise InvalidInputError(
                f"cannot load the image model {self.model_id!r} from disk: {exc}; pass the path of a "
                "local CLIP model, or fetch it once (e.g. `huggingface-cli download "
                "sentence-transformers/clip-ViT-B-32`)"
            ) from exc

    def embed_image(self, path: Path) -> np.ndarray:
        """The normalised CLIP vector of one image."""
        try:
            from PIL import Image
        except ImportError as exc:
            raise MissingDependencyError("image encoding with CLIP needs Pillow: pip install pillow") from exc
        with Image.open(path) as image:
            return _unit(self._model.get().encode(image.convert("RGB"), normalize_embeddings=True))

    def embed_text(self, text: str) -> np.ndarray:
        """The normalised CLIP text vector of a query (same space as the images)."""
        return _unit(self._model.get().encode(text, normalize_embeddings=True))


class ClapAudioEncoder:
    """CLAP through transformers' ClapModel (e.g. "laion/clap-htsat-unfused"): sounds with the
    audio tower, queries with the text tower, in CLAP's shared space. Reads WAV with the standard
    library (other formats with soundfile, if installed), mono, resampled linearly to the model's
    rate. Needs torch, transformers and the model on disk."""

    def __init__(
        self,
        model_name_or_path: str = "laion/clap-htsat-unfused",
        *,
        min_similarity: float = DEFAULT_MIN_SIMILARITY,
    ) -> None:
        self.model_id = model_name_or_path
        self.min_similarity = min_similarity
        self._parts = LazyModel(self._load)

    def _load(self) -> tuple[Any, Any]:
        try:
            from transformers import ClapModel, ClapProcessor
        except ImportError as exc:
            raise MissingDependencyError(
                f"audio encoding with CLAP needs transformers (with ClapModel) and torch: {TORCH_EXTRA_HINT}"
            ) from exc
        try:
            model = ClapModel.from_pretrained(self.model_id, local_files_only=True)
            processor = ClapProcessor.from_pretrained(self.model_id, local_files_only=True)
        except (OSError, ValueError) as exc:
            raise InvalidInputError(
                f"cannot load the audio model {self.model_id!r} from disk: {exc}; pass the path of a "
                "local CLAP model, or fetch it once (e.g. `huggingface-cli download "
                "laion/clap-htsat-unfused`)"
            ) from exc
        return model.eval(), processor  # type: ignore[no-untyped-call]  # unannotated in transformers

    def embed_audio(self, path: Path) -> np.ndarray:
        """The normalised CLAP vector of one sound."""
        import torch

        model, processor = self._parts.get()
        rate = int(processor.feature_extractor.sampling_rate)
        inputs = processor(audio=[read_audio(path, rate)], sampling_rate=rate, return_tensors="pt")
        with torch.no_grad():
            features = model.get_audio_features(**inputs)
        return _unit(_pooled(features)[0].numpy())

    def embed_text(self, text: str) -> np.ndarray:
        """The normalised CLAP text vector of a query (same space as the sounds)."""
        import torch

        model, processor = self._parts.get()
        inputs = processor(text=[text], return_tensors="pt", padding=True)
        with torch.no_grad():
            features = model.get_text_features(**inputs)
        return _unit(_pooled(features)[0].numpy())


def _pooled(features: Any) -> Any:
    """transformers 4 returns the projected features, 5 an output whose pooler_output holds them."""
    return getattr(features, "pooler_output", features)


_WAV_SAMPLES: dict[int, np.dtype[Any]] = {1: np.dtype(np.uint8), 2: np.dtype("<i2"), 4: np.dtype("<i4")}


def read_audio(path: Path, rate: int) -> np.ndarray:
    """A sound file as mono float32 samples in [-1, 1] at `rate` Hz (linear resampling)."""
    try:
        with wave.open(str(path), "rb") as sound:
            source_rate, channels, width = sound.getframerate(), sound.getnchannels(), sound.getsampwidth()
            frames = sound.readframes(sound.getnframes())
        if width not in (1, 2, 4):
            raise ValueError(f"{8 * width}-bit WAV samples are not supported")
        raw = np.frombuffer(frames, dtype=_WAV_SAMPLES[width]).astype(np.float64)
        samples = (raw - 128) / 128 if width == 1 else raw / float(2 ** (8 * width - 1))
        samples = samples.reshape(-1, channels).mean(axis=1)
    except wave.Error:
        try:
            import soundfile
        except ImportError as exc:
            raise MissingDependencyError(
                f"{path.name} is not a WAV file; reading other audio formats "
                "needs soundfile: pip install soundfile"
            ) from exc
        data, source_rate = soundfile.read(str(path), dtype="float64", always_2d=True)
        samples = data.mean(axis=1)
    if not len(samples):
        raise ValueError("the audio file holds no samples")
    if source_rate != rate:
        count = max(1, round(len(samples) * rate / source_rate))
        samples = np.interp(np.linspace(0, len(samples) - 1, count), np.arange(len(samples)), samples)
    mono: np.ndarray = samples.astype(np.float32)
    return mono
