"""Analyses of one user's memory: knowledge-graph quality and the learning report.

Where their numbers come from: docs/design-notes.md#analyses.
"""
