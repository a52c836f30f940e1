"""A chat model phrases the learning report's overview and next steps from its data; the numbers
stay the data's. A reply that is not the asked JSON, or that states a number the data does not
hold, is sent back once and then dropped for the data-only text."""

from __future__ import annotations

import json
import re
from typing import Any

from ripplemem.llm.chat import ChatTask, answer_language_rule, run_tasks, strip_thinking

PHRASING_PROMPT = """\
You write the overview and the next steps of a learning report for the learner it is about.
You get the report's data as JSON. Reply with only a JSON object, no prose around it:
{{"overview": "<two to four sentences addressed to the learner>", "next_steps": ["<step>", ...]}}
- three to five next steps, each concrete and about a topic, gap or review named in the data;
- use only numbers that appear in the data, never estimate or invent one;
- {language}\
"""
RETRY_PROMPT = "That reply was not usable: {error}. Reply again with only the JSON object described above."
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)
_NUMBER = re.compile(r"\d+(?:[.,]\d+)?")


def _numbers(text: str) -> set[str]:
    return {
        n.replace(",", ".").rstrip("0").rstrip(".") if "." in n or "," in n else n
        for n in _NUMBER.findall(text)
    }


def parse_phrasing(reply: str, data_text: str) -> dict[str, Any]:
    """The overview and next steps of a reply; ValueError names what is wrong with an unusable one."""
    text = strip_thinking(reply)
    fenced = _FENCE.search(text)
    text = fenced.group(1) if fenced else text
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        raise ValueError("the reply holds no JSON object")
    try:
        parsed = json.loads(text[start : end + 1])
    except json.JSONDecodeError as exc:
        raise ValueError(f"the JSON does not parse ({exc.msg})") from exc
    overview, steps = parsed.get("overview"), parsed.get("next_steps")
    if not isinstance(overview, str) or not overview.strip():
        raise ValueError('"overview" must be a non-empty string')
    if (
        not isinstance(steps, list)
        or not 1 <= len(steps) <= 6
        or not all(isinstance(s, str) and s.strip() for s in steps)
    ):
        raise ValueError('"next_steps" must be a list of one to six non-empty strings')
    invented = sorted(_numbers(" ".join([overview, *steps])) - _numbers(data_text))
    if invented:
        raise ValueError(f"it states numbers the data does not hold: {', '.join(invented)}")
    return {"overview": overview.strip(), "next_steps": [s.strip() for s in steps]}


def phrase_report(
    llm: Any, report: dict[str, Any], language_sample: str
) -> tuple[dict[str, Any] | None, str | None]:
    """(overview and next steps from the model, None) or (None, why they could not be used)."""
    from langchain_core.messages import HumanMessage, SystemMessage

    data = {k: v for k, v in report.items() if k not in ("overview", "next_steps", "phrasing")}
    data_text = json.dumps(data, ensure_ascii=False, indent=1)
    system = PHRASING_PROMPT.format(language=answer_language_rule(language_sample, "the learner's notes"))
    task: ChatTask[dict[str, Any]] = ChatTask(
        messages=[SystemMessage(system), HumanMessage(data_text)],
        parse=lambda reply: parse_phrasing(reply, data_text),
        retry_prompt=RETRY_PROMPT,
        tries_left=1,
    )
    run_tasks(llm, [task])
    return (task.result, None) if task.ok else (None, task.error)
