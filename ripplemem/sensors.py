"""The sensor rules at the path docs/perceptual.md imports them from.

A public path kept after the move to ``ripplemem.perceptual.rules`` (issue 20), where the code lives.
"""

from ripplemem.perceptual.rules import DEFAULT_METRICS, MetricRule, MetricStats, Reading, SensorSettings

__all__ = ["DEFAULT_METRICS", "MetricRule", "MetricStats", "Reading", "SensorSettings"]
