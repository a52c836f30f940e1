"""``hit_metadata(hit)`` at the path docs/langchain.md, docs/llamaindex.md and docs/mcp.md name.

A public path kept after the move to ``ripplemem.interfaces.hit_metadata`` (issue 20).
"""

from ripplemem.interfaces.hit_metadata import hit_metadata

__all__ = ["hit_metadata"]
