"""Perceptual memory: sensor readings (pure rules, then recording) and images and audio."""
