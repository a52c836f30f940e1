"""The image and audio encoders, at the path docs/perceptual.md imports them from.

A public path kept after the move to ``ripplemem.embedding.media_encoders`` (issue 20); the same
classes are exported from ``ripplemem`` itself.
"""

from ripplemem.embedding.media_encoders import (
    AudioEncoder,
    ClapAudioEncoder,
    ImageEncoder,
    SentenceTransformerImageEncoder,
)

__all__ = ["AudioEncoder", "ClapAudioEncoder", "ImageEncoder", "SentenceTransformerImageEncoder"]
