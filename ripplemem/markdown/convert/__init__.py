"""Files to Markdown with page numbers: discovery, limits, MarkItDown, page boundaries. No store."""
