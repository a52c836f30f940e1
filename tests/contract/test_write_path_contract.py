"""The write-path contract (docs/architecture.md "One write path"): SQL lives in
`ripplemem/store/` only, and every write goes through `engine.unit_of_work`, so no module outside
`ripplemem/engine/` and `ripplemem/store/` takes the write lock or calls the Engine's cache hooks.

Read from the source with `ast`; nothing of ripplemem is imported. A call counts wherever it sits
(module level, inside a function or a lambda), on any receiver (`conn.execute(...)`,
`store._conn.executemany(...)`), and through `getattr(obj, "execute")` too.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("ripplemem", "langchain_ripplemem", "llamaindex_ripplemem")

SQL_METHODS = frozenset({"execute", "executemany", "executescript"})
# Where SQL may be run: the store layer, and the old-path re-export package `ripplemem.stores`.
SQL_HOMES = ("ripplemem/store/", "ripplemem/stores/")

# The engine's write lock and its private cache hooks: only a unit of work (engine/unit_of_work.py)
# touches them; everyone else says what changed through `work.added`, `work.removed`, ...
WRITE_PATH_INTERNALS = frozenset(
    {
        "write_lock",
        "_memories_added",
        "_memories_removed",
        "_drop_user_caches",
        "_edges_reinforced",
        "_entities_embedded",
    }
)
WRITE_PATH_HOMES = ("ripplemem/engine/", "ripplemem/store/")

_ATTRIBUTE_BUILTINS = frozenset({"getattr", "setattr", "delattr", "hasattr"})


def attribute_named(node: ast.AST) -> str | None:
    """The attribute a node names: `x.name`, or `getattr(x, "name")` (and setattr, delattr, hasattr)."""
    if isinstance(node, ast.Attribute):
        return node.attr
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in _ATTRIBUTE_BUILTINS
        and len(node.args) >= 2
        and isinstance(node.args[1], ast.Constant)
        and isinstance(node.args[1].value, str)
    ):
        return node.args[1].value
    return None


def sql_calls(source: str) -> Iterator[tuple[int, str]]:
    """(line, method) of every `.execute(`, `.executemany(` or `.executescript(` call, on anything."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and (method := attribute_named(node.func)) in SQL_METHODS:
            yield node.lineno, f".{method}("


def write_path_reaches(source: str) -> Iterator[tuple[int, str]]:
    """(line, name) of every mention of the write lock or a private cache hook as an attribute."""
    for node in ast.walk(ast.parse(source)):
        if (name := attribute_named(node)) in WRITE_PATH_INTERNALS:
            yield node.lineno, str(name)


def sources() -> dict[str, str]:
    """The source of every module of the three packages, by path relative to the repository."""
    return {
        path.relative_to(ROOT).as_posix(): path.read_text(encoding="utf-8")
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
    }


def offenders(
    modules: dict[str, str], homes: tuple[str, ...], find: Callable[[str], Iterator[tuple[int, str]]]
) -> list[str]:
    """`path:line what` for each hit of `find` in a module outside the `homes` folders."""
    return [
        f"{path}:{line} {what}"
        for path, source in sorted(modules.items())
        if not path.startswith(homes)
        for line, what in sorted(find(source))
    ]


def test_sql_lives_in_store_only() -> None:
    found = offenders(sources(), SQL_HOMES, sql_calls)
    assert not found, (
        "SQL outside ripplemem/store/ (docs/architecture.md: SQL | store/ only); move each "
        "statement into a function of the store module of its table:\n  " + "\n  ".join(found)
    )


def test_writes_go_through_the_unit_of_work() -> None:
    found = offenders(sources(), WRITE_PATH_HOMES, write_path_reaches)
    assert not found, (
        "the write lock or an Engine cache hook named outside ripplemem/engine/ and "
        "ripplemem/store/; write inside `with engine.unit_of_work(user_id) as work:` and tell "
        "it what changed (work.added, work.removed, ...):\n  " + "\n  ".join(found)
    )


def test_the_checks_see_the_real_tree() -> None:
    modules = sources()
    assert "ripplemem/privacy/scrub.py" in modules and "ripplemem/store/sqlite/rows.py" in modules
    # The homes are exempt, not unseen: both checks find plenty there.
    assert len(list(sql_calls(modules["ripplemem/store/sqlite/rows.py"]))) > 10
    assert list(write_path_reaches(modules["ripplemem/engine/unit_of_work.py"]))


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("rows = conn.execute('SELECT 1')", ["ripplemem/privacy/bad.py:1 .execute("]),
        (
            "def wipe(store):\n    store._conn.executemany('DELETE FROM t WHERE id = ?', [(1,)])",
            ["ripplemem/privacy/bad.py:2 .executemany("],
        ),
        ("run = lambda c: c.executescript('DROP TABLE t')", ["ripplemem/privacy/bad.py:1 .executescript("]),
        ("getattr(conn, 'execute')('SELECT 1')", ["ripplemem/privacy/bad.py:1 .execute("]),
        ("execute = plan.execute_later\nexecute()", []),
    ],
    ids=[
        "execute",
        "executemany-in-a-function",
        "executescript-in-a-lambda",
        "through-getattr",
        "no-such-call",
    ],
)
def test_the_sql_check_catches_a_statement_outside_store(source: str, expected: list[str]) -> None:
    tree = {
        "ripplemem/privacy/bad.py": source,
        "ripplemem/store/fine.py": source,
        "ripplemem/stores/fine.py": source,
    }
    assert offenders(tree, SQL_HOMES, sql_calls) == expected


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("with engine.write_lock:\n    pass", ["ripplemem/lifecycle/bad.py:1 write_lock"]),
        (
            "def add(engine, uid, m):\n    engine._memories_added(uid, m, [])",
            ["ripplemem/lifecycle/bad.py:2 _memories_added"],
        ),
        ("hook = getattr(engine, '_drop_user_caches')", ["ripplemem/lifecycle/bad.py:1 _drop_user_caches"]),
        (
            "engine._memories_removed(uid, ids)\nengine._edges_reinforced(uid, pairs, 0.1)",
            [
                "ripplemem/lifecycle/bad.py:1 _memories_removed",
                "ripplemem/lifecycle/bad.py:2 _edges_reinforced",
            ],
        ),
        (
            "with engine.unit_of_work(uid) as work:\n"
            "    work.added(memories)\n"
            "    work.entities_embedded(uid)",
            [],
        ),
        ('"""Takes the write_lock through engine.unit_of_work."""', []),
    ],
    ids=[
        "write-lock",
        "hook-in-a-function",
        "hook-through-getattr",
        "two-hooks",
        "unit-of-work",
        "docstring",
    ],
)
def test_the_write_path_check_catches_the_lock_or_a_cache_hook_outside_engine(
    source: str, expected: list[str]
) -> None:
    tree = {
        "ripplemem/lifecycle/bad.py": source,
        "ripplemem/engine/fine.py": source,
        "ripplemem/store/fine.py": source,
    }
    assert offenders(tree, WRITE_PATH_HOMES, write_path_reaches) == expected
