"""Which RippleMem scope a LangChain call runs in: the handle's, or the user and session of the run."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ripplemem import RippleMem
from ripplemem.errors import InvalidTypeError


def check_memory(value: Any, name: str = "memory") -> RippleMem:
    """The RippleMem handle an adapter was given, or an InvalidTypeError naming the argument."""
    if not isinstance(value, RippleMem):
        raise InvalidTypeError(
            f"{name} must be a RippleMem handle, e.g. {name}=RippleMem(path='./memdb', user_id='alice'); "
            f"got {type(value).__name__}")
    return value


def run_scope(memory: RippleMem, config: Mapping[str, Any] | None = None,
              context: Any = None) -> RippleMem:
    """The handle for one run: ``user_id`` and ``session_id`` from the run's context or
    ``config["configurable"]`` (a LangGraph ``thread_id`` is the session), else the handle's own.

    One agent can so serve many users on one store: each run reads and writes only its user's memory.
    """
    configurable = (config or {}).get("configurable") or {}
    user_id = _pick("user_id", context, configurable)
    session_id = _pick("session_id", context, configurable) or configurable.get("thread_id")
    if user_id is None and session_id is None:
        return memory
    own = memory.scope_info
    if user_id == own.user_id and session_id in (None, own.session_id):
        return memory
    return memory.scope(user_id or own.user_id, agent_id=own.agent_id,
                        session_id=_as_text(session_id) or own.session_id)


def _pick(name: str, context: Any, configurable: Mapping[str, Any]) -> Any:
    if isinstance(context, Mapping) and context.get(name) is not None:
        return context[name]
    if context is not None and getattr(context, name, None) is not None:
        return getattr(context, name)
    return configurable.get(name)


def _as_text(value: Any) -> str | None:
    # LangGraph thread ids may be UUID objects or ints; RippleMem session ids are strings.
    return None if value is None else str(value)
