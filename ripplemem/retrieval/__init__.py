"""Recall: the pipeline, hybrid and ripple scoring, explanations, expansion, routing, KB and media recall."""
