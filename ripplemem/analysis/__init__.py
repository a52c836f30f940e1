"""Analyses of one user's memory: knowledge-graph quality (seed 000 §13) and the learning report (§11)."""
