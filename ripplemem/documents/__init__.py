"""Documents into knowledge bases: ingestion of what `markdown/` converts and chunks."""
