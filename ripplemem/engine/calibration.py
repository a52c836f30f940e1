"""Each embedder's cosine scale, measured, so graph thresholds mean the same for every model.

Cosines are not comparable across models: all-MiniLM-L6-v2 puts unrelated sentences near 0.1 and
paraphrases near 0.75, multilingual-e5 puts unrelated ones near 0.8, and the hashing embedder
gives paraphrases in other words almost 0. A fixed probe (paraphrase pairs in other words; every
other pair's texts as unrelated ones) measures where a model puts both, once per store; the scale
is recorded with the store. Thresholds in settings are written on MiniLM's scale (the numbers
people know) and mapped onto the model in use: a SIMILAR threshold of 0.75 becomes the cosine that
is as far from unrelated, towards paraphrase, on that model's scale.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from ripplemem.config import Settings
from ripplemem.embedding.base import Embedder

logger = logging.getLogger(__name__)

META_KEY = "cosine_scale"

# Paraphrase pairs in other words; every other pair's texts are the unrelated ones.
_PAIRS = (
    ("I drink green tea every morning.", "My day starts with a cup of matcha."),
    ("My sister lives in Berlin and works as an architect.", "She designs buildings in Germany's capital."),
    ("The physiotherapy appointment is next Tuesday at 8:30.", "I see the physio early on Tuesday."),
    ("We are hiking in the mountains this weekend.", "On Saturday the family goes up a peak."),
    ("He is allergic to peanuts.", "Nuts give him a rash."),
    ("The quarterly report is due on Friday.", "Finance wants the numbers by the end of the week."),
    ("I finished reading a novel about an AI narrator.", "The book told by a robot is done."),
    ("Our flight to Tokyo was cancelled.", "The plane to Japan did not leave."),
)


@dataclass(frozen=True)
class CosineScale:
    """Where a model puts unrelated texts and paraphrases on the cosine axis."""

    unrelated: float
    paraphrase: float

    def level(self, cosine: float) -> float:
        """A cosine as a level: 0 at this model's unrelated mean, 1 at its paraphrase mean."""
        return (cosine - self.unrelated) / (self.paraphrase - self.unrelated)

    def cosine(self, level: float) -> float:
        """The cosine of this model at a level (the inverse of ``level``)."""
        return self.unrelated + level * (self.paraphrase - self.unrelated)


# all-MiniLM-L6-v2 measured on the probe: the scale the thresholds in settings are written on.
MINILM_SCALE = CosineScale(unrelated=0.0547, paraphrase=0.5221)


def pair_similarities(embedder: Embedder, pairs: Sequence[tuple[str, str]]) -> tuple[np.ndarray, np.ndarray]:
    """Cosines among a probe's texts (each pair side by side: 0<->1, 2<->3, ...) and each text's
    partner position."""
    texts = [text for pair in pairs for text in pair]
    vectors = np.asarray(embedder.embed_documents(texts), dtype=np.float64)
    return vectors @ vectors.T, np.arange(len(texts)) ^ 1


def partners_found(similarity: np.ndarray, partner: np.ndarray) -> float:
    """The share of texts whose nearest other text is their partner."""
    others = similarity.copy()
    np.fill_diagonal(others, -np.inf)
    return float((others.argmax(axis=1) == partner).mean())


def measure_scale(embedder: Embedder) -> CosineScale:
    """Measure a model's scale on the probe (16 short texts, embedded once)."""
    similarity, partner = pair_similarities(embedder, _PAIRS)
    rows = np.arange(len(partner))
    paraphrase = float(similarity[rows, partner].mean())
    unrelated_mask = ~np.eye(len(partner), dtype=bool)
    unrelated_mask[rows, partner] = False
    unrelated = float(similarity[unrelated_mask].mean())
    found = partners_found(similarity, partner)
    if found < 0.5:
        # A model that matches words, not meaning (the hashing embedder): its cosines already
        # mean overlap, so thresholds keep their MiniLM values.
        logger.info(
            "embedder %s finds %.0f%% of the probe's paraphrases; graph thresholds stay as written",
            embedder.model_id,
            100 * found,
        )
        return MINILM_SCALE
    return CosineScale(unrelated=round(unrelated, 4), paraphrase=round(paraphrase, 4))


def on_model_scale(minilm_cosine: float, scale: CosineScale) -> float:
    """A threshold written on MiniLM's scale, as a cosine of the model with this scale (kept in
    [0, 1], where every cosine threshold in settings lives)."""
    return min(1.0, max(0.0, round(scale.cosine(MINILM_SCALE.level(minilm_cosine)), 4)))


def on_model_scales(settings: Settings, scale: CosineScale) -> Settings:
    """The settings with every cosine threshold (SIMILAR and ALIAS edges; duplicates, conflicts,
    the conflict judge, clusters; recall's latest-first grouping) on the model's scale."""
    graph, lifecycle = settings.graph, settings.lifecycle
    return replace(
        settings,
        latest_same_topic=on_model_scale(settings.latest_same_topic, scale),
        graph=replace(
            graph,
            similar_threshold=on_model_scale(graph.similar_threshold, scale),
            alias_similarity=on_model_scale(graph.alias_similarity, scale),
        ),
        lifecycle=replace(
            lifecycle,
            duplicate_similarity=on_model_scale(lifecycle.duplicate_similarity, scale),
            conflict_similarity=on_model_scale(lifecycle.conflict_similarity, scale),
            judge_similarity=on_model_scale(lifecycle.judge_similarity, scale),
            cluster_similarity=on_model_scale(lifecycle.cluster_similarity, scale),
        ),
    )


def encode(scale: CosineScale, model_id: str) -> str:
    """The store metadata value recording a model's scale."""
    return json.dumps({"model": model_id, "unrelated": scale.unrelated, "paraphrase": scale.paraphrase})


def decode(value: str | None, model_id: str) -> CosineScale | None:
    """The recorded scale, if one was recorded for this model and reads back whole."""
    if not value:
        return None
    try:
        found = json.loads(value)
        if found.get("model") != model_id:
            return None
        return CosineScale(unrelated=float(found["unrelated"]), paraphrase=float(found["paraphrase"]))
    except (ValueError, TypeError, KeyError, AttributeError):
        return None
