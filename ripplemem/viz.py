"""``write_graph_html`` at the path docs/viz.md imports it from: the graph page as one HTML file.

A public path kept after the move to ``ripplemem.interfaces.viz.page`` (issue 20).
"""

from ripplemem.interfaces.viz.page import write_graph_html

__all__ = ["write_graph_html"]
