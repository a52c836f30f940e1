"""Small helpers the lifecycle modules share: aware UTC times, text keys, array checks, LLM replies."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import Any

import numpy as np

from ripplemem.errors import InvalidInputError, InvalidTypeError
from ripplemem.llm import chat

_NON_WORD = re.compile(r"[\W_]+", re.UNICODE)
_CJK = "\u3400-\u4dbf\u4e00-\u9fff"
_SPACE_NEAR_CJK = re.compile(f"(?<=[{_CJK}]) | (?=[{_CJK}])")
_FENCE = re.compile(r"```[a-zA-Z]*\s*(.*?)```", re.DOTALL)


def normalize_text(text: str) -> str:
    """The key two phrasings of one statement share: NFKC, lower case, no punctuation or extra space.

    "I run 5 km!" and "i run 5 km" meet; 我住在北京。and 我住在 北京 meet.
    """
    text = unicodedata.normalize("NFKC", text).lower()
    text = _NON_WORD.sub(" ", text).strip()
    return _SPACE_NEAR_CJK.sub("", text)


def as_float_array(values: Any, name: str, n: int | None = None) -> np.ndarray:
    """A 1-D float64 array, checked for length and NaN, from a list or an array."""
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidTypeError(f"{name} must be numbers: {exc}") from None
    if array.ndim == 0 and n is not None:
        array = np.full(n, float(array))
    if array.ndim != 1:
        raise InvalidInputError(f"{name} must be one-dimensional, got shape {array.shape}")
    if n is not None and len(array) != n:
        raise InvalidInputError(f"{name} has {len(array)} values, expected {n} (one per memory)")
    if np.isnan(array).any():
        raise InvalidInputError(f"{name} contains NaN")
    return array


def as_ids(ids: Sequence[Any] | np.ndarray, name: str = "ids") -> list[Any]:
    """Memory ids as a list (strings in RippleMem, but any hashable works)."""
    if isinstance(ids, str | bytes):
        raise InvalidTypeError(f"{name} must be a sequence of ids, not one string")
    return list(ids)


def reply_text(reply: Any) -> str | None:
    """The text of a chat model reply (an AIMessage or a string) without <think> blocks."""
    text = chat.reply_text(reply)
    return None if text is None else chat.strip_thinking(text)


def unfence(text: str) -> str:
    """The inside of the first ``` fence, or the text itself."""
    fenced = _FENCE.search(text)
    return fenced.group(1).strip() if fenced else text


def check_chat_model(llm: Any, who: str) -> None:
    """Raise unless llm is a LangChain chat model (None included: it is not one)."""
    if llm is None:
        raise InvalidTypeError(f"llm must be a LangChain chat model, got NoneType ({who})")
    chat.require_llm(llm, who)
