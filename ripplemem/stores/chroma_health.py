"""``index_damage(path)`` at the path docs/backends.md names: a Chroma index's damage, unrepaired.

A public path kept after the move to ``ripplemem.store.vectors.chroma_health`` (issue 20).
"""

from ripplemem.store.vectors.chroma_health import index_damage

__all__ = ["index_damage"]
