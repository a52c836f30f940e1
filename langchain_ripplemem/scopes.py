"""Which RippleMem scope a LangChain call runs in: the handle's, or the user and session of the run."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ripplemem import InvalidInputError, InvalidTypeError, RippleMem
from ripplemem.integration import check_identifier

# Where a run may name its user: ours, then LangGraph's auth and langmem's conventions.
USER_KEYS = ("user_id", "langgraph_auth_user_id", "langgraph_user_id")


def check_memory(value: Any, name: str = "memory") -> RippleMem:
    """The RippleMem handle an adapter was given, or an InvalidTypeError naming the argument."""
    if not isinstance(value, RippleMem):
        raise InvalidTypeError(
            f"{name} must be a RippleMem handle, e.g. {name}=RippleMem(path='./memdb', user_id='alice'); "
            f"got {type(value).__name__}"
        )
    return value


def run_scope(memory: RippleMem, config: Mapping[str, Any] | None = None, context: Any = None) -> RippleMem:
    """The handle for one run: the user from the run's context or ``config["configurable"]``
    (``user_id``, ``langgraph_auth_user_id`` or ``langgraph_user_id``) and ``session_id`` likewise
    (a LangGraph ``thread_id`` is the session), else the handle's own.

    One agent can so serve many users on one store: each run reads and writes only its user's memory.
    A user key that is present but not a valid id (``""``, ``0``, ``None``), or keys naming two
    different users, raise InvalidInputError: the run never falls back to the handle's own user.
    """
    configurable = (config or {}).get("configurable") or {}
    user_id = _run_user(context, configurable)
    session_id = _pick("session_id", context, configurable) or configurable.get("thread_id")
    if user_id is None and session_id is None:
        return memory
    own = memory.scope_info
    if user_id == own.user_id and session_id in (None, own.session_id):
        return memory
    return memory.scope(
        user_id or own.user_id, agent_id=own.agent_id, session_id=_as_text(session_id) or own.session_id
    )


def _run_user(context: Any, configurable: Mapping[str, Any]) -> str | None:
    """The one user a run names (checked), or None when it names none."""
    named: dict[str, str] = {}
    for where, key, value in _user_values(context, configurable):
        try:
            named[f"{where}[{key!r}]"] = check_identifier(key, value, required=True)
        except (InvalidInputError, InvalidTypeError) as exc:
            raise InvalidInputError(
                f"the run's {where}[{key!r}] is not a valid user ({exc}); pass the "
                "user's id, or leave the key out to use the handle's user"
            ) from None
    if len(set(named.values())) > 1:
        users = ", ".join(f"{where}={user!r}" for where, user in named.items())
        raise InvalidInputError(f"the run names two users ({users}); name one")
    return next(iter(named.values()), None)


def _user_values(context: Any, configurable: Mapping[str, Any]) -> list[tuple[str, str, Any]]:
    """(where, key, value) of every user key the run carries; a key present with None counts
    (an object context's attribute left at None does not: it is the schema's default)."""
    found = [("configurable", key, configurable[key]) for key in USER_KEYS if key in configurable]
    if isinstance(context, Mapping):
        found += [("context", key, context[key]) for key in USER_KEYS if key in context]
    elif context is not None:
        found += [
            ("context", key, getattr(context, key))
            for key in USER_KEYS
            if getattr(context, key, None) is not None
        ]
    return found


def _pick(name: str, context: Any, configurable: Mapping[str, Any]) -> Any:
    if isinstance(context, Mapping) and context.get(name) is not None:
        return context[name]
    if context is not None and getattr(context, name, None) is not None:
        return getattr(context, name)
    return configurable.get(name)


def _as_text(value: Any) -> str | None:
    # LangGraph thread ids may be UUID objects or ints; RippleMem session ids are strings.
    return None if value is None else str(value)
