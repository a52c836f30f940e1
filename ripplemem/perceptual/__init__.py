"""Perceptual memory: recording sensor readings (rules in `rules/perceptual.py`), images and audio."""
