"""Markdown to chunks: by structure, by sentence packing, or by meaning (semantic). No store."""
