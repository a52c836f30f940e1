"""``LifecycleSettings`` at the path docs/lifecycle.md and docs/conflicts.md import it from.

A public path kept after the rules moved to ``ripplemem.lifecycle.rules.settings`` (issue 20).
"""

from ripplemem.lifecycle.rules.settings import LifecycleSettings

__all__ = ["LifecycleSettings"]
