"""``graph_view`` at the path docs/viz.md imports it from: the nodes and links the graph page draws.

A public path kept after the move to ``ripplemem.interfaces.viz.data`` (issue 20).
"""

from ripplemem.interfaces.viz.data import graph_view

__all__ = ["graph_view"]
