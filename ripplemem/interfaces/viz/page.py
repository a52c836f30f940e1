"""`ripplemem viz`: a user's memory graph, or one recall's activated subgraph, as one
self-contained HTML page (inline SVG drawing code, no network) to open in any browser."""

from __future__ import annotations

import json
import os
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from ripplemem.errors import InvalidInputError
from ripplemem.interfaces.viz.data import DEFAULT_MAX_NODES, GraphView, graph_view

if TYPE_CHECKING:
    from ripplemem.memory import RippleMem

_TEMPLATE = "viz_template.html"
_PLACEHOLDER = "__GRAPH_DATA__"


def _script_safe_json(view: GraphView) -> str:
    """The view as JSON that cannot end its <script> element early (memory text is user input)."""
    text = json.dumps(view.as_dict(), ensure_ascii=False, separators=(",", ":"))
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


def render_html(view: GraphView) -> str:
    """The page for a graph view: data, drawing code and styles inline."""
    template = resources.files("ripplemem").joinpath("data", _TEMPLATE).read_text(encoding="utf-8")
    return template.replace(_PLACEHOLDER, _script_safe_json(view), 1)


def write_graph_html(
    memory: RippleMem,
    out: str | os.PathLike[str],
    query: str | None = None,
    *,
    k: int = 10,
    max_nodes: int = DEFAULT_MAX_NODES,
) -> GraphView:
    """Draw the handle's user graph (or, with a query, one read-only recall's subgraph) into the
    HTML file `out`; returns what was drawn."""
    target = Path(out)
    if target.is_dir():
        raise InvalidInputError(f"out {str(target)!r} is a directory; pass a file name such as graph.html")
    if not target.parent.is_dir():
        raise InvalidInputError(f"cannot write {str(target)!r}: folder {str(target.parent)!r} does not exist")
    view = graph_view(memory, query, k=k, max_nodes=max_nodes)
    target.write_text(render_html(view), encoding="utf-8")
    return view
