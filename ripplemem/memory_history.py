"""``superseded_history`` and ``with_superseded`` at the path docs/conflicts.md imports them from.

A public path kept after the move to ``ripplemem.api.history`` (issue 20), where the code lives.
"""

from ripplemem.api.history import Predecessor, superseded_history, with_superseded

__all__ = ["Predecessor", "superseded_history", "with_superseded"]
