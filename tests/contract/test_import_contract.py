"""The import contract: no import circle among the modules of ripplemem and its two
adapters, every import pointing down the layers of docs/architecture.md, and the adapters using only
ripplemem's public surface.

The graph is read from the source with `ast`, nothing is imported. An edge is any import of one of
the three packages' modules: at module level, inside a function (a function-local import still
runs, so it still closes a circle; it only hides it until the call), and under `if TYPE_CHECKING:`
(it never runs, but a type-only loop still ties two modules together, so neither can move below
the other). `from pkg import name` points at the submodule `pkg.name` when there is one, and at
the module a lazy `_EXPORTS` table names when `pkg/__init__.py` has one. Importing `a.b.c` also
runs the `__init__` of `a.b`, so that is an edge too, unless the importer already sits inside `a.b`.
Third-party imports are not in the graph, so `try: import chromadb` (an optional dependency) is
outside it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("ripplemem", "langchain_ripplemem", "llamaindex_ripplemem")
ADAPTERS = ("langchain_ripplemem", "llamaindex_ripplemem")

# What the adapters may import of ripplemem, by module: the names of each module's literal `__all__`
# (`ripplemem` itself and `ripplemem.integration`, the surface for adapter authors), and anything of
# the tool descriptions and replies they share with the MCP server.
ADAPTER_SURFACE = ("ripplemem", "ripplemem.integration")
SHARED_MODULES = {"ripplemem.interfaces.tool_replies"}


@dataclass(frozen=True)
class Import:
    """One import statement's view of a project module: who imports what, where, and how."""

    importer: str
    module: str  # the module named in the statement (after resolving relative imports)
    names: tuple[str, ...]  # for `from module import a, b`; empty for `import module`
    line: int


def module_files() -> dict[str, Path]:
    """Every module of the three packages, by dotted name."""
    modules = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
    return modules


def _imports(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement in a module, wherever it sits."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node


def _absolute(statement: ast.ImportFrom, importer: str, is_package: bool) -> str:
    if not statement.level:
        return statement.module or ""
    base = importer.split(".")
    base = base if is_package else base[:-1]
    base = base[: len(base) - statement.level + 1]
    return ".".join(base + ([statement.module] if statement.module else []))


def read_imports(modules: dict[str, Path]) -> list[Import]:
    """Every import of a project module, in every project module."""
    found = []
    for importer, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        is_package = path.name == "__init__.py"
        for statement in _imports(tree):
            if isinstance(statement, ast.Import):
                targets = [(alias.name, ()) for alias in statement.names]
            else:
                names = tuple(alias.name for alias in statement.names)
                targets = [(_absolute(statement, importer, is_package), names)]
            for module, names in targets:
                if module.split(".")[0] in PACKAGES:
                    found.append(Import(importer, module, names, statement.lineno))
    return found


def lazy_exports(modules: dict[str, Path]) -> dict[str, dict[str, str]]:
    """The `_EXPORTS = {name: module}` table of each package __init__ that loads names lazily."""
    tables = {}
    for name, path in modules.items():
        if path.name != "__init__.py":
            continue
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if (
                isinstance(node, ast.Assign)
                and isinstance(node.value, ast.Dict)
                and any(isinstance(t, ast.Name) and t.id == "_EXPORTS" for t in node.targets)
            ):
                tables[name] = ast.literal_eval(node.value)
    return tables


def _owner(name: str, modules: dict[str, Path]) -> str:
    """The longest prefix of a dotted name that is a project module."""
    while name not in modules and "." in name:
        name = name.rsplit(".", 1)[0]
    return name


def import_graph() -> dict[str, dict[str, int]]:
    """importer -> {imported module: line of the first import}, over the three packages."""
    modules = module_files()
    exports = lazy_exports(modules)
    graph: dict[str, dict[str, int]] = {name: {} for name in modules}
    for imp in read_imports(modules):
        targets = [
            f"{imp.module}.{n}"
            if f"{imp.module}.{n}" in modules
            else exports.get(imp.module, {}).get(n, imp.module)
            for n in imp.names
        ]
        for target in targets or [imp.module]:
            target = _owner(target, modules)
            parts = target.split(".")
            for depth in range(1, len(parts) + 1):  # a.b.c runs a/__init__ and a/b/__init__ first
                step = ".".join(parts[:depth])
                inside = imp.importer == step or imp.importer.startswith(step + ".")
                if step in modules and step != imp.importer and (not inside or step == target):
                    graph[imp.importer].setdefault(step, imp.line)
    return graph


def circles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found, key=lambda c: (-len(c), c))


def shortest_cycle(graph: dict[str, dict[str, int]], component: list[str], start: str) -> list[str]:
    """A shortest cycle through `start`, found breadth-first inside its component."""
    members = set(component)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for nxt in sorted(graph[node]):
                if nxt == start:
                    return paths[node] + [start]
                if nxt in members and nxt not in paths:
                    paths[nxt] = paths[node] + [nxt]
                    following.append(nxt)
        frontier = following
    raise AssertionError(f"{component} is not a cycle")


def describe(graph: dict[str, dict[str, int]], component: list[str]) -> str:
    """One circle as a reader can follow it: the modules in it and one loop, with the import lines."""
    loop = min((shortest_cycle(graph, component, start) for start in component), key=len)
    steps = " -> ".join(f"{a} (line {graph[a][b]})" for a, b in pairwise(loop)) + f" -> {loop[0]}"
    return f"{len(component)} modules: {', '.join(component)}\n    e.g. {steps}"


def test_no_import_circle() -> None:
    graph = import_graph()
    found = circles(graph)
    assert not found, "import circles:\n" + "\n".join(
        f"  {i}. {describe(graph, c)}" for i, c in enumerate(found, 1)
    )


def test_the_graph_sees_function_local_and_lazy_imports() -> None:
    graph = import_graph()
    assert "ripplemem.interfaces.cli.demo" in graph["ripplemem.interfaces.cli.main"]  # inside a function
    assert "ripplemem.memory" in graph["llamaindex_ripplemem.retriever"]  # `from ripplemem import RippleMem`
    assert "ripplemem.rules.lifecycle" in graph["ripplemem.engine.engine"]  # a submodule runs __init__
    assert not circles({"a": {"b": 1}, "b": {"c": 2}, "c": {}})
    cyclic = {"a": {"b": 1}, "b": {"c": 2}, "c": {"a": 3, "d": 4}, "d": {}}
    assert circles(cyclic) == [["a", "b", "c"]]
    assert describe(cyclic, ["a", "b", "c"]).endswith("a (line 1) -> b (line 2) -> c (line 3) -> a")


def exported_names(path: Path) -> set[str]:
    """The names of a module's literal `__all__`."""
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            return set(ast.literal_eval(node.value))
    raise AssertionError(f"{path} has no literal __all__")


def adapter_reaches() -> dict[str, set[str]]:
    """What the adapters import from ripplemem beyond its surface for them, by module."""
    modules = module_files()
    surface = {module: exported_names(modules[module]) for module in ADAPTER_SURFACE}
    reaches: dict[str, set[str]] = {}
    for imp in read_imports(modules):
        if (
            imp.importer.split(".")[0] not in ADAPTERS
            or imp.module.split(".")[0] != "ripplemem"
            or imp.module in SHARED_MODULES
        ):
            continue
        for name in imp.names or ("*",):
            if name not in surface.get(imp.module, set()):
                reaches.setdefault(imp.module, set()).add(name)
    return reaches


def test_adapters_import_only_the_public_surface() -> None:
    reaches = {module: sorted(names) for module, names in adapter_reaches().items()}
    assert not reaches, (
        f"the adapters import ripplemem internals {reaches}: import them from `ripplemem` or, for what "
        "only adapters need, from `ripplemem.integration` (listed in its __all__)"
    )


# The layer order (docs/architecture.md), from the bottom up: a module imports only from its own group
# or from a line above it; the groups of one line do not import each other. A module is placed by
# the longest entry that names it or a package above it; "ripplemem" itself is the package __init__.
# Every module must be placed: a new one fails until it is.
LAYERS: list[list[list[str]]] = [
    [["ripplemem.core", "ripplemem.errors"]],
    [["ripplemem.language"], ["ripplemem.embedding"], ["ripplemem.index"]],
    [["ripplemem.llm"]],
    [
        ["ripplemem.rules.lifecycle"],
        ["ripplemem.rules.perceptual"],
        ["ripplemem.markdown.convert"],
        ["ripplemem.markdown.chunk"],
        # The two folders' __init__ (a docstring each): importing through them adds no edge.
        ["ripplemem.rules", "ripplemem.markdown"],
    ],
    [["ripplemem.config"]],
    [["ripplemem.store"]],
    [["ripplemem.engine"]],
    [["ripplemem.retrieval"]],
    [
        ["ripplemem.lifecycle"],
        ["ripplemem.privacy"],
        ["ripplemem.documents"],
        ["ripplemem.perceptual"],
        ["ripplemem.analysis"],
    ],
    [["ripplemem.api"]],
    [["ripplemem.memory"]],
    [["ripplemem.interfaces", "ripplemem.__main__"]],
    # The package __init__: the public surface, re-exporting from every line below it; beside it, the
    # surface for adapter authors (which it does not re-export).
    [["ripplemem"], ["ripplemem.integration"]],
    [["langchain_ripplemem"], ["llamaindex_ripplemem"]],
]


def place(module: str, layers: list[list[list[str]]] = LAYERS) -> tuple[int, int] | None:
    """(line, group) of a module: the longest entry naming it or a package above it; None if none does."""
    best: tuple[int, tuple[int, int]] | None = None
    for line, groups in enumerate(layers):
        for group, entries in enumerate(groups):
            for entry in entries:
                stem = entry.rstrip("*")
                hit = (
                    module.startswith(stem)
                    if entry.endswith("*")
                    else module == entry or (entry != "ripplemem" and module.startswith(entry + "."))
                )
                if hit and (best is None or len(stem) > best[0]):
                    best = (len(stem), (line, group))
    return best[1] if best else None


def namespaces() -> set[str]:
    """The packages whose __init__ imports nothing of the project: importing through them adds no edge."""
    graph = import_graph()
    return {name for name, path in module_files().items() if path.name == "__init__.py" and not graph[name]}


def layer_breaches(
    graph: dict[str, dict[str, int]],
    layers: list[list[list[str]]] = LAYERS,
    skip: frozenset[str] | set[str] = frozenset(),
) -> list[str]:
    """Each import that points to a higher line or a sibling group, or comes from an unplaced module."""
    found = []
    for importer in sorted(graph):
        where = place(importer, layers)
        if where is None:
            found.append(f"{importer} is in no layer: add it to LAYERS")
            continue
        for imported, line in sorted(graph[importer].items()):
            there = place(imported, layers)
            if imported in skip or there is None or there == where:
                continue
            if there[0] > where[0] or (there[0] == where[0] and there[1] != where[1]):
                kind = "a higher layer" if there[0] > where[0] else "a sibling of its layer"
                found.append(f"{importer} (line {line}) imports {imported}, {kind}")
    return found


def test_every_import_points_down_the_layers() -> None:
    breaches = layer_breaches(import_graph(), skip=namespaces())
    assert not breaches, "imports against the layer order (docs/architecture.md):\n  " + "\n  ".join(breaches)


def test_the_layer_check_catches_an_upward_or_sideways_import() -> None:
    layers = [[["p.core"]], [["p.a"], ["p.b"]], [["p.top"]]]
    downward = {"p.core.x": {}, "p.a.y": {"p.core.x": 3}, "p.top": {"p.a.y": 1, "p.b": 2}}
    assert not layer_breaches(downward, layers)
    assert layer_breaches({"p.core.x": {"p.a.y": 7}, "p.a.y": {}}, layers) == [
        "p.core.x (line 7) imports p.a.y, a higher layer"
    ]
    assert layer_breaches({"p.a.y": {"p.b": 4}, "p.b": {}}, layers) == [
        "p.a.y (line 4) imports p.b, a sibling of its layer"
    ]
    assert layer_breaches({"p.new": {}}, layers) == ["p.new is in no layer: add it to LAYERS"]
    assert place("ripplemem.rules.lifecycle.tiers") == place("ripplemem.rules.lifecycle")
    assert place("ripplemem.api.lifecycle") == place("ripplemem.api")


# The folder graph (docs/architecture.md, "One layer per folder"): one node per top-level folder of
# ripplemem (`core/`) and per top-level module (`config.py`, `__init__.py` for the package itself),
# and an arrow from A to B when any module in A imports one in B. The layer order alone allows a
# folder to hold two layers (a feature's rules low, its runs high) with arrows back up between the
# folders; this graph has none: no two folders import each other, and no chain of them loops.


def folder_of(module: str, folders: set[str]) -> str:
    """The node of a ripplemem module in the folder graph: `name/` for a folder, else `name.py`."""
    parts = module.split(".")
    if len(parts) == 1:
        return "__init__.py"
    return f"{parts[1]}/" if parts[1] in folders else f"{parts[1]}.py"


def folder_graph(graph: dict[str, dict[str, int]], folders: set[str]) -> dict[str, dict[str, str]]:
    """folder -> {folder it imports: the first such import, as `module (line N) imports module`}."""
    found: dict[str, dict[str, str]] = {}
    for importer in sorted(name for name in graph if name.split(".")[0] == "ripplemem"):
        source = folder_of(importer, folders)
        found.setdefault(source, {})
        # By line, and on one line the deepest module first: `a.b.c` rather than the `a.b` it runs.
        for imported, line in sorted(graph[importer].items(), key=lambda item: (item[1], -len(item[0]))):
            target = folder_of(imported, folders)
            if imported.split(".")[0] == "ripplemem" and target != source:
                found[source].setdefault(target, f"{importer} (line {line}) imports {imported}")
    return found


def ripplemem_folders() -> dict[str, dict[str, str]]:
    """The folder graph of ripplemem as it is on disk."""
    folders = {path.parent.name for path in (ROOT / "ripplemem").glob("*/__init__.py")}
    return folder_graph(import_graph(), folders)


def arrows_in_loops(folders: dict[str, dict[str, str]]) -> list[str]:
    """Every arrow that lies on a loop of the folder graph, with one import that draws it."""
    loops = circles({name: dict.fromkeys(targets, 0) for name, targets in folders.items()})
    return [
        f"{a} -> {b}: {folders[a][b]}"
        for loop in loops
        for a in loop
        for b in sorted(folders[a])
        if b in loop
    ]


def test_no_two_folders_import_each_other() -> None:
    folders = ripplemem_folders()
    pairs = [
        f"{a} <-> {b}: {folders[a][b]}; {folders[b][a]}"
        for a in sorted(folders)
        for b in sorted(folders[a])
        if a < b and a in folders.get(b, {})
    ]
    assert not pairs, "folders of ripplemem that import each other:\n  " + "\n  ".join(pairs)


def test_the_folders_import_without_a_loop() -> None:
    arrows = arrows_in_loops(ripplemem_folders())
    assert not arrows, "arrows on a loop among ripplemem's folders:\n  " + "\n  ".join(arrows)


def test_the_folder_graph_joins_a_folders_modules() -> None:
    graph = {
        "ripplemem": {"ripplemem.b.y": 1},
        "ripplemem.a.x": {"ripplemem.b.y": 2, "ripplemem.a.z": 3, "other.m": 4},
        "ripplemem.a.z": {"ripplemem.c": 5},
        "ripplemem.b.y": {"ripplemem.c": 6},
        "ripplemem.c": {"ripplemem.a.z": 7},
    }
    folders = folder_graph(graph, {"a", "b"})
    assert folders == {
        "__init__.py": {"b/": "ripplemem (line 1) imports ripplemem.b.y"},
        "a/": {
            "b/": "ripplemem.a.x (line 2) imports ripplemem.b.y",
            "c.py": "ripplemem.a.z (line 5) imports ripplemem.c",
        },
        "b/": {"c.py": "ripplemem.b.y (line 6) imports ripplemem.c"},
        "c.py": {"a/": "ripplemem.c (line 7) imports ripplemem.a.z"},
    }
    assert arrows_in_loops(folders) == [
        "a/ -> b/: ripplemem.a.x (line 2) imports ripplemem.b.y",
        "a/ -> c.py: ripplemem.a.z (line 5) imports ripplemem.c",
        "b/ -> c.py: ripplemem.b.y (line 6) imports ripplemem.c",
        "c.py -> a/: ripplemem.c (line 7) imports ripplemem.a.z",
    ]
    assert not arrows_in_loops({"a/": {"b/": ""}, "b/": {}})


def test_the_docs_import_only_from_the_public_surface() -> None:
    """A ripplemem module path in a docs page's code (`from ripplemem.x import ...`) would make that
    module public; the docs import from `ripplemem` itself, or from `ripplemem.integration`, the
    public module for adapter authors."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    reaches = [
        f"{page.name}:{number}: {line.strip()}"
        for page in pages
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1)
        if line.lstrip().startswith(("from ripplemem.", "import ripplemem."))
        and not line.lstrip().startswith("from ripplemem.integration import ")
    ]
    assert reaches == []
