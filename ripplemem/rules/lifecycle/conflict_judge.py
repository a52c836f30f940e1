"""The LLM judge for pairs the conflict rules leave open: a chat model's JSON verdict, retried, with
the rules' verdict as the fallback for an unusable reply."""

from __future__ import annotations

import logging
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ripplemem.core.clock import aware
from ripplemem.errors import InvalidInputError
from ripplemem.llm.chat import first_json_object
from ripplemem.rules.lifecycle._common import check_chat_model, normalize_text, reply_text, unfence
from ripplemem.rules.lifecycle.conflicts import VERDICTS, ConflictVerdict, judge_conflict, time_order
from ripplemem.rules.lifecycle.settings import DEFAULT_SETTINGS, LifecycleSettings

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

logger = logging.getLogger("ripplemem.lifecycle.rules")

JUDGE_PROMPT = """\
You compare two statements from one user's long-term memory. Reply with only a JSON object:
{"verdict": "duplicate" | "update" | "contradiction" | "unrelated", "slot": "<the attribute, e.g. \
dose, address, deadline, or null>", "subject": "<whose attribute, e.g. user, or null>", \
"current": "new" | "existing" | null, "reason": "<one short sentence>"}
- duplicate: both say the same thing.
- update: the same attribute of the same subject changed over time; current names the statement \
holding the value that is true now.
- contradiction: they cannot both be true and nothing says one replaced the other.
- unrelated: anything else.\
"""
RETRY_PROMPT = "That reply was not usable: {error}. Reply again with only the JSON object described above."


class LLMConflictJudge:
    """Asks a chat model for the verdict as JSON; an unusable reply after retries gives the rules' verdict."""

    def __init__(
        self, llm: BaseChatModel, *, max_retries: int = 1, settings: LifecycleSettings = DEFAULT_SETTINGS
    ) -> None:
        check_chat_model(llm, "LLMConflictJudge")
        if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
            raise InvalidInputError(f"max_retries must be a non-negative integer, got {max_retries!r}")
        self.llm = llm
        self.max_retries = max_retries
        self.settings = settings

    def judge(
        self,
        new_text: str,
        existing_text: str,
        *,
        new_time: datetime | None = None,
        existing_time: datetime | None = None,
        similarity: float | None = None,
    ) -> ConflictVerdict:
        """The model's verdict, or the rules' when the model gives nothing usable (never raises for that)."""
        rules, messages = self._start(new_text, existing_text, new_time, existing_time, similarity)
        if messages is None:
            return rules
        error = "no reply"
        for attempt in range(self.max_retries + 1):
            try:
                reply = self.llm.invoke(messages)
            except Exception as exc:  # any model or network failure
                return self._fallback(rules, f"the model call failed: {type(exc).__name__}: {exc}")
            verdict, messages, error = self._read(reply, rules, messages, attempt, new_time, existing_time)
            if verdict is not None:
                return verdict
        return self._fallback(
            rules, f"no usable reply after {self.max_retries + 1} tries; last problem: {error}"
        )

    async def ajudge(
        self,
        new_text: str,
        existing_text: str,
        *,
        new_time: datetime | None = None,
        existing_time: datetime | None = None,
        similarity: float | None = None,
    ) -> ConflictVerdict:
        """Async judge: the same verdict without blocking the event loop."""
        rules, messages = self._start(new_text, existing_text, new_time, existing_time, similarity)
        if messages is None:
            return rules
        error = "no reply"
        for attempt in range(self.max_retries + 1):
            try:
                reply = await self.llm.ainvoke(messages)
            except Exception as exc:  # any model or network failure
                return self._fallback(rules, f"the model call failed: {type(exc).__name__}: {exc}")
            verdict, messages, error = self._read(reply, rules, messages, attempt, new_time, existing_time)
            if verdict is not None:
                return verdict
        return self._fallback(
            rules, f"no usable reply after {self.max_retries + 1} tries; last problem: {error}"
        )

    def _start(
        self,
        new_text: str,
        existing_text: str,
        new_time: datetime | None,
        existing_time: datetime | None,
        similarity: float | None,
    ) -> tuple[ConflictVerdict, list[Any] | None]:
        """The rules' verdict, and the first messages for the model (None: identical text needs none)."""
        rules = judge_conflict(
            new_text,
            existing_text,
            new_time=new_time,
            existing_time=existing_time,
            similarity=similarity,
            settings=self.settings,
        )
        if rules.kind == "duplicate" and normalize_text(new_text) == normalize_text(existing_text):
            return rules, None
        return rules, self.messages(new_text, existing_text, new_time, existing_time)

    def _read(
        self,
        reply: Any,
        rules: ConflictVerdict,
        messages: list[Any],
        attempt: int,
        new_time: datetime | None,
        existing_time: datetime | None,
    ) -> tuple[ConflictVerdict | None, list[Any], str]:
        """The parsed verdict, or None, the conversation extended for a retry, and the problem."""
        try:
            return self.parse(reply, rules, new_time, existing_time), messages, ""
        except ValueError as exc:
            if attempt < self.max_retries:
                from langchain_core.messages import AIMessage, HumanMessage

                messages = [
                    *messages,
                    AIMessage(reply_text(reply) or ""),
                    HumanMessage(RETRY_PROMPT.format(error=exc)),
                ]
            return None, messages, str(exc)

    def messages(
        self,
        new_text: str,
        existing_text: str,
        new_time: datetime | None = None,
        existing_time: datetime | None = None,
    ) -> list[Any]:
        """The system and user messages the model is shown."""
        from langchain_core.messages import HumanMessage, SystemMessage

        def dated(label: str, text: str, when: datetime | None) -> str:
            stamp = f" (said {aware(when).strftime('%Y-%m-%d %H:%M')})" if when is not None else ""
            return f"{label}{stamp}: {text}"

        return [
            SystemMessage(JUDGE_PROMPT),
            HumanMessage(
                dated("Existing", existing_text, existing_time) + "\n" + dated("New", new_text, new_time)
            ),
        ]

    def parse(
        self,
        reply: Any,
        rules: ConflictVerdict,
        new_time: datetime | None = None,
        existing_time: datetime | None = None,
    ) -> ConflictVerdict:
        """A verdict from a model reply; raises ValueError when the reply is unusable."""
        text = reply_text(reply)
        if not text:
            raise ValueError("the reply is empty or not text")
        data = first_json_object(unfence(text))
        verdict = str(data.get("verdict", "")).strip().lower()
        if verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}, got {data.get('verdict')!r}")
        slot, subject = _optional_str(data.get("slot")), _optional_str(data.get("subject"))
        current = _optional_str(data.get("current"))
        current = current.lower() if current else None
        if current not in (None, "new", "existing"):
            raise ValueError(f"current must be 'new', 'existing' or null, got {data.get('current')!r}")
        if verdict == "update" and current is None:
            order = time_order(new_time, existing_time)
            current = "existing" if order == "older" else "new"
        reason = _optional_str(data.get("reason")) or f"the model says {verdict}"
        agrees = rules.kind == verdict
        return ConflictVerdict(
            verdict,
            slot or (rules.slot if agrees else None),
            subject or (rules.subject if agrees else None),
            rules.old_value if agrees else None,
            rules.new_value if agrees else None,
            current if verdict == "update" else None,
            reason[:300],
            rules.belief_new,
            rules.belief_existing,
            "llm",
        )

    @staticmethod
    def _fallback(rules: ConflictVerdict, problem: str) -> ConflictVerdict:
        logger.warning("conflict judge fell back to rules: %s", problem)
        return replace(rules, reason=f"{rules.reason} (rules; the model gave nothing usable: {problem})")


def _optional_str(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError(f"expected a string or null, got {type(value).__name__}")
    value = value.strip()
    return None if value.lower() in ("", "null", "none") else value
