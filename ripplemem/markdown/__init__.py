"""Documents as Markdown, without a store: files to Markdown with page numbers (`convert/`) and
Markdown to chunks (`chunk/`). `documents/` ingests what they make into knowledge bases."""
