"""Every Cypher statement of the Neo4j backend, checked without a server: parsed by Neo4j's own
parser (npm @neo4j-cypher/language-support, run through node), scoped to a store and user, and
called with exactly the parameters it names."""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from ripplemem.store.neo4j import cypher

ROOT = Path(__file__).resolve().parents[3]
CHECKER = ROOT / "tests" / "cypher" / "check_cypher.mjs"
PARSER = ROOT / "tests" / "cypher" / "node_modules" / "@neo4j-cypher" / "language-support"
# The modules that send Cypher to the driver.
SENDERS = [ROOT / "ripplemem" / "store" / "neo4j" / name for name in ("index.py", "graph.py", "backend.py")]
SCOPE_LABELS = (":Memory", ":Entity", ":RippleNode")


def _statements() -> dict[str, str]:
    """Every statement neo4j_cypher defines, by the name the code uses for it."""
    found: dict[str, str] = {}
    for name in dir(cypher):
        value = getattr(cypher, name)
        if not name.isupper() or name.startswith("_"):
            continue
        if isinstance(value, str) and name not in ("VECTOR_INDEX", "FULLTEXT_INDEX"):  # index names
            found[name] = value
        elif isinstance(value, dict):
            found.update({f"{name}[{key}]": text for key, text in value.items()})
        elif name == "SCHEMA":
            found.update({f"{name}[{i}]": text for i, text in enumerate(value)})
    found["vector_index_statement(384)"] = cypher.vector_index_statement(384)
    return found


STATEMENTS = _statements()


def _parse(statements: dict[str, str]) -> dict[str, dict]:
    node = shutil.which("node")
    if node is None:
        pytest.skip("Cypher syntax check: no `node` on PATH (install Node.js 20+)")
    if not PARSER.is_dir():
        pytest.skip(
            "Cypher syntax check: Neo4j's parser is not installed; run `make install` "
            "(npm ci in tests/cypher)"
        )
    done = subprocess.run(
        [node, str(CHECKER)],
        input=json.dumps(statements),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def parsed() -> dict[str, dict]:
    """Neo4j's parser's verdict on every statement (errors per Cypher version, parameters)."""
    return _parse(STATEMENTS)


def test_the_backend_has_a_statement_for_every_job() -> None:
    """The collection below is not empty by accident: vectors, full text, mirror, pull, spread."""
    for name in (
        "SET_VECTORS",
        "QUERY_VECTORS",
        "QUERY_KEYWORDS",
        "MERGE_MEMORIES",
        "MERGE_EDGES[RELATES]",
        "DELETE_NODES",
        "SCOPE_EDGES",
        "SPREAD",
        "SCHEMA[0]",
        "vector_index_statement(384)",
    ):
        assert name in STATEMENTS


@pytest.mark.parametrize("name", sorted(STATEMENTS))
def test_statement_parses_in_cypher_5_and_25(parsed: dict[str, dict], name: str) -> None:
    """Neo4j's parser finds no syntax or semantic error (procedures checked against Neo4j's list)."""
    assert parsed[name]["errors"] == {"CYPHER 5": [], "CYPHER 25": []}


BROKEN = {
    "unclosed map": "MATCH (m:Memory {user_id: $user_id) RETURN m",
    "misspelt keyword": "MATCH (m:Memory) WHERE m.user_id = $user_id RETRUN m.id",
    "no such procedure": "CALL db.index.vector.queryNode('ripplemem_memory_embedding', $k, $v) YIELD node "
    "RETURN node",
    "argument missing": "CALL db.index.vector.queryNodes('ripplemem_memory_embedding', $k) YIELD node "
    "RETURN node",
    "ends in MATCH": "MATCH (m:Memory) WHERE m.user_id = $user_id",
    "no such function": "MATCH (m:Memory) RETURN vector.similarity.cosin(m.embedding, $v) AS score",
}


@pytest.fixture(scope="module")
def parsed_broken() -> dict[str, dict]:
    """Neo4j's parser's verdict on deliberately broken statements."""
    return _parse(BROKEN)


@pytest.mark.parametrize("mistake", sorted(BROKEN))
def test_the_checker_rejects_a_broken_statement(parsed_broken: dict[str, dict], mistake: str) -> None:
    """The check can fail: each of these mistakes is reported in both Cypher versions."""
    verdict = parsed_broken[mistake]
    assert verdict["errors"]["CYPHER 5"] and verdict["errors"]["CYPHER 25"]


@pytest.mark.parametrize("name", sorted(STATEMENTS))
def test_statement_touching_user_data_is_scoped(parsed: dict[str, dict], name: str) -> None:
    """A statement on memories or entities names the store and the user(s) it may touch."""
    text = STATEMENTS[name]
    if name.startswith(("SCHEMA", "vector_index_statement")):
        assert "$" not in text  # schema statements carry no data at all
        return
    assert any(label in text for label in SCOPE_LABELS) or "queryNodes" in text
    params = set(parsed[name]["params"])
    assert "store" in params and params & {"user_id", "user_ids"}, params


def test_vector_index_dimensions_must_be_a_plain_integer() -> None:
    """The one value formatted into a statement (index options take no parameters) is a checked int."""
    for bad in ("384}}) DETACH DELETE n //", 0, 5000, True, 384.0):
        with pytest.raises(ValueError):
            cypher.vector_index_statement(bad)  # type: ignore[arg-type]


def _cypher_names(node: ast.expr, loops: dict[str, list[str]]) -> list[str]:
    """The statement names an argument can stand for: cypher.X, cypher.X[...], or a loop variable."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "cypher":
        value = getattr(cypher, node.attr)
        if isinstance(value, dict):
            return [f"{node.attr}[{key}]" for key in value]
        if isinstance(value, tuple):
            return [f"{node.attr}[{i}]" for i in range(len(value))]
        return [node.attr]
    if isinstance(node, ast.Subscript | ast.Starred):
        return _cypher_names(node.value, loops)
    if isinstance(node, ast.Tuple):
        return [name for element in node.elts for name in _cypher_names(element, loops)]
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "vector_index_statement"
    ):
        return ["vector_index_statement(384)"]
    if isinstance(node, ast.Name) and node.id in loops:
        return loops[node.id]
    raise AssertionError(f"line {node.lineno}: a statement that is not a constant of neo4j_cypher")


def _statement_calls(path: Path) -> list[tuple[int, list[str], set[str]]]:
    """(line, statement names, keyword names) of every statement(...) call in a module."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    loops: dict[str, list[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.comprehension | ast.For) and isinstance(node.target, ast.Name):
            try:
                loops[node.target.id] = _cypher_names(node.iter, {})
            except (AssertionError, AttributeError):
                continue
    calls = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "statement":
            assert all(k.arg is not None for k in node.keywords), f"{path.name}:{node.lineno}: **params"
            passed = {str(k.arg) for k in node.keywords}
            calls.append((node.lineno, _cypher_names(node.args[0], loops), passed))
    return calls


def test_code_passes_exactly_the_parameters_each_statement_names(parsed: dict[str, dict]) -> None:
    """Every statement(...) call names a neo4j_cypher constant and binds exactly its $parameters."""
    used: set[str] = set()
    for path in SENDERS:
        for line, names, passed in _statement_calls(path):
            for name in names:
                assert passed == set(parsed[name]["params"]), f"{path.name}:{line} {name}"
                used.add(name)
    unused = set(STATEMENTS) - used
    assert not unused, f"statements no code sends: {sorted(unused)}"


def _receiver(node: ast.expr) -> str | None:
    """The name a method is called on: `connection` or `self._conn`."""
    if isinstance(node, ast.Name):
        return node.id
    return node.attr if isinstance(node, ast.Attribute) else None


def _is_statement(node: ast.expr) -> bool:
    """statement(...), or a name bound by a comprehension over statements."""
    if isinstance(node, ast.Starred):
        node = node.value
    return isinstance(node, ast.Name) or (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "statement"
    )


def test_cypher_reaches_the_driver_only_through_statement() -> None:
    """The connection's run methods get statement(...) results only: no literal, f-string or % text."""
    for path in SENDERS:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("read", "write", "write_count", "stream")
                and _receiver(node.func.value) in ("_conn", "connection")
            ):
                continue
            where = f"{path.name}:{node.lineno}"
            (arg,) = node.args
            if isinstance(arg, ast.Starred):
                assert _is_statement(arg), where
            elif isinstance(arg, ast.ListComp | ast.List):
                elements = [arg.elt] if isinstance(arg, ast.ListComp) else arg.elts
                assert all(_is_statement(e) for e in elements), where
            else:  # a list built by a method that returns statement(...) results
                assert (
                    isinstance(arg, ast.Call)
                    and isinstance(arg.func, ast.Attribute)
                    and arg.func.attr == "statements"
                ), where
