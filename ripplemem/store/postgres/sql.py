"""The row store's SQL, written for SQLite (``?`` placeholders and a few SQLite functions), as
PostgreSQL runs it. Every rewrite is listed here; a statement needing any other is a bug the
backend-parametrised tests show."""

from __future__ import annotations

import functools
import re

# One pass over the statement: string literals are copied as they are, the rest rewritten.
_TOKENS = re.compile(r"'(?:[^']|'')*'|\?|%|\+(?=(?:\w+\.)?user_id\b)|\b(?:MAX|MIN)\(|\binstr\(")
# json_extract(column, '$."key"') / '$.key': a top-level metadata value, as text.
_JSON_KEY = re.compile(r"json_extract\(([\w.]+), '\$\.(?:\"(\w+)\"|(\w+))'\)")
# json_extract(column, ?) = json_extract(?, '$'): a metadata value against a JSON-encoded value.
_JSON_PATH = re.compile(r"json_extract\(([\w.]+), \?\)")
_JSON_VALUE = "json_extract(?, '$')"
_INDEXED_BY = re.compile(r" INDEXED BY \w+")
_NON_ASCII_GLOB = "GLOB '*[^ -~]*'"
_JSON_SET = re.compile(r"json_set\((\w+), '\$\.(\w+)', \?\)")


def postgres_sql(sql: str) -> str:
    """The statement in PostgreSQL's dialect, with psycopg's ``%s`` placeholders."""
    return _translate(sql)


@functools.lru_cache(maxsize=2048)
def _translate(sql: str) -> str:
    sql = _JSON_KEY.sub(lambda m: f"(({m.group(1)})::jsonb ->> '{m.group(2) or m.group(3)}')", sql)
    sql = _JSON_PATH.sub(r"(jsonb_path_query_first((\1)::jsonb, (?)::jsonpath) #>> '{}')", sql)
    sql = sql.replace(_JSON_VALUE, "((?)::jsonb #>> '{}')")
    sql = _INDEXED_BY.sub("", sql)  # SQLite's index choice; PostgreSQL plans without it
    # The one GLOB pattern used: a character outside printable ASCII.
    sql = sql.replace(_NON_ASCII_GLOB, "~ '[^ -~]'")
    if "GLOB" in sql:
        raise ValueError(f"no PostgreSQL form of this GLOB: {sql}")
    sql = _JSON_SET.sub(r"(jsonb_set((\1)::jsonb, '{\2}', to_jsonb((?)::text)))::text", sql)
    out: list[str] = []
    position = 0
    for match in _TOKENS.finditer(sql):
        out.append(sql[position : match.start()])
        token = match.group(0)
        if token.startswith("'"):
            out.append(token.replace("%", "%%"))
        elif token == "?":
            out.append("%s")
        elif token == "%":
            out.append("%%")
        elif token == "+":
            pass  # SQLite's "not through this index" hint; PostgreSQL plans without it
        elif token in ("MAX(", "MIN("):
            two = _has_top_level_comma(sql, match.end())
            out.append(("GREATEST(" if token == "MAX(" else "LEAST(") if two else token)
        else:
            out.append("strpos(")
        position = match.end()
    out.append(sql[position:])
    return "".join(out)


def _has_top_level_comma(sql: str, start: int) -> bool:
    """Whether the call whose arguments start at ``start`` has two or more arguments."""
    depth = 0
    for char in sql[start:]:
        if char == "(":
            depth += 1
        elif char == ")":
            if depth == 0:
                return False
            depth -= 1
        elif char == "," and depth == 0:
            return True
    return False
