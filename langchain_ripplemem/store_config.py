"""RippleMemStore's ``index=`` and ``ttl=``, read as LangGraph's own stores read them.

``index`` is LangGraph's ``IndexConfig`` (``{"dims": 384, "embed": ..., "fields": ["profile.food"]}``)
or, RippleMem's older spelling, just the list of fields. RippleMemStore embeds with its RippleMem
handle's embedder, so ``dims`` must be that embedder's dimension and ``embed``, when given, must be
that embedder: the same object, its model name, or an embeddings object that gives the same vectors
(checked on one probe text). Anything else is refused: vectors of two models cannot share one index.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, cast

import numpy as np
from langgraph.store.base import TTLConfig, ensure_embeddings, tokenize_path

from ripplemem import InvalidInputError, InvalidTypeError, RippleMem
from ripplemem.integration import handle_embedder

IndexPaths = list[tuple[str, "str | list[str]"]]
INDEX_KEYS = ("dims", "embed", "fields")
TTL_KEYS = ("default_ttl", "refresh_on_read", "sweep_interval_minutes", "omit_expired")
_PROBE = "RippleMemStore checks that this index embeds like its memory."
_SAME_VECTOR = 0.999  # cosine of one text's vectors from one model (float noise aside)


def index_paths(fields: Any, name: str = "index fields") -> IndexPaths:
    """LangGraph field paths ("a.b", "items[*].text", "$" for the whole value), tokenised once."""
    if (
        isinstance(fields, str)
        or not isinstance(fields, Sequence)
        or not all(isinstance(path, str) and path for path in fields)
    ):
        raise InvalidTypeError(
            f"{name} must be a list of paths such as ['content', 'sections[*].text'], got {fields!r}"
        )
    try:
        return [(path, path if path == "$" else tokenize_path(path)) for path in fields]
    except (ValueError, IndexError) as error:
        raise InvalidInputError(
            f"{name} {list(fields)!r} hold a path LangGraph cannot read: {error}"
        ) from None


def parse_index(index: Any, memory: RippleMem) -> IndexPaths | None:
    """The paths whose text a value is recalled by (None: RippleMem's default text fields)."""
    if index is None:
        return None
    if not isinstance(index, Mapping):
        return index_paths(index, "index")
    unknown = sorted(set(index) - set(INDEX_KEYS))
    if unknown:
        raise InvalidInputError(
            f"index has keys {unknown} RippleMemStore does not read; LangGraph's "
            f"IndexConfig keys are {', '.join(INDEX_KEYS)}"
        )
    if index.get("dims") is not None:
        check_dims(index["dims"], memory)
    if index.get("embed") is not None:
        check_embed(index["embed"], memory)
    fields = index.get("fields")
    return None if fields is None else index_paths(fields, "index['fields']")


def embedder_dimension(memory: RippleMem) -> int:
    """The vector length of the handle's embedder."""
    embedder = handle_embedder(memory)
    return getattr(embedder, "dimension", None) or len(embedder.embed_query(_PROBE))


def check_dims(dims: Any, memory: RippleMem) -> None:
    """index['dims'] must be the dimension of the handle's embedder."""
    if isinstance(dims, bool) or not isinstance(dims, int):
        raise InvalidTypeError(f"index['dims'] must be an integer, got {dims!r}")
    own = embedder_dimension(memory)
    if dims != own:
        model = handle_embedder(memory).model_id
        raise InvalidInputError(
            f"index['dims'] is {dims} but this RippleMem store embeds with {model!r}, {own} dimensions; "
            f"RippleMemStore embeds with its RippleMem handle's embedder: pass dims={own} or leave it out"
        )


def check_embed(embed: Any, memory: RippleMem) -> None:
    """index['embed'] must be the handle's embedder: the object it wraps, its model name, or an
    embeddings object giving the same vectors on a probe text."""
    embedder = handle_embedder(memory)
    inner = getattr(embedder, "inner", embedder)
    if embed is embedder or embed is inner or embed is getattr(inner, "embeddings", None):
        return
    model = embedder.model_id
    refusal = (
        f"this RippleMem store embeds with {model!r} and RippleMemStore embeds with its handle's "
        "embedder; to embed with another model, open the store with it, "
        "RippleMem(path, user_id=..., embedder=<your Embeddings>), and pass that object here "
        "(or leave 'embed' out)"
    )
    if isinstance(embed, str):
        if _model_name(embed) != _model_name(model):
            raise InvalidInputError(f"index['embed'] is {embed!r}, but {refusal}")
        return
    try:
        theirs = np.asarray(ensure_embeddings(embed).embed_query(_PROBE), dtype=np.float64)
    except Exception as error:  # any failure of a foreign embedder is the same refusal
        raise InvalidInputError(
            f"index['embed'] could not be checked ({type(error).__name__}: {error}); {refusal}"
        ) from None
    ours = np.asarray(embedder.embed_query(_PROBE), dtype=np.float64)
    if theirs.shape != ours.shape or _cosine(theirs, ours) < _SAME_VECTOR:
        raise InvalidInputError(f"index['embed'] gives other vectors than this store's embedder: {refusal}")


def _model_name(name: str) -> str:
    """'huggingface:sentence-transformers/all-MiniLM-L6-v2' -> 'all-minilm-l6-v2'."""
    return name.rsplit(":", 1)[-1].rsplit("/", 1)[-1].strip().lower()


def _cosine(a: np.ndarray, b: np.ndarray) -> float:
    norms = float(np.linalg.norm(a) * np.linalg.norm(b))
    return float(a @ b) / norms if norms else 0.0


def parse_ttl(ttl: Any) -> TTLConfig | None:
    """LangGraph's TTLConfig, checked: minutes are positive numbers; expired items are never shown."""
    if ttl is None:
        return None
    if not isinstance(ttl, Mapping):
        raise InvalidTypeError(f"ttl must be a TTLConfig dict such as {{'default_ttl': 60}}, got {ttl!r}")
    unknown = sorted(set(ttl) - set(TTL_KEYS))
    if unknown:
        raise InvalidInputError(
            f"ttl has keys {unknown} RippleMemStore does not read; TTLConfig keys are {', '.join(TTL_KEYS)}"
        )
    for key in ("default_ttl", "sweep_interval_minutes"):
        check_minutes(ttl.get(key), f"ttl[{key!r}]")
    for key in ("refresh_on_read", "omit_expired"):
        if key in ttl and not isinstance(ttl[key], bool):
            raise InvalidTypeError(f"ttl[{key!r}] must be True or False, got {ttl[key]!r}")
    if ttl.get("omit_expired") is False:
        raise InvalidInputError(
            "ttl['omit_expired'] cannot be False: RippleMemStore never returns an "
            "expired item (get, search and list_namespaces skip it until the sweep "
            "deletes it)"
        )
    return cast(TTLConfig, dict(ttl))  # its keys and values are checked above


def check_minutes(value: Any, name: str) -> float | None:
    """A TTL or interval in minutes: None, or a positive finite number."""
    if value is None:
        return None
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or value <= 0
    ):
        raise InvalidInputError(f"{name} must be a positive number of minutes (or None), got {value!r}")
    return float(value)
