"""`ripplemem demo`: load a short English/Chinese conversation into a store and recall from it."""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from importlib import resources
from typing import TYPE_CHECKING, Any, TextIO

from ripplemem.core.choices import MemoryTypeName
from ripplemem.errors import InvalidInputError
from ripplemem.interfaces.cli import formatting as fmt
from ripplemem.interfaces.cli.env import quiet_third_party

if TYPE_CHECKING:
    from ripplemem.memory import RippleMem

DEMO_USER = "demo"
DATA_FILE = "demo_conversation.json"


@dataclass(frozen=True)
class DemoQuery:
    """One recall the demo runs; `context_budget` prints Recall.context instead of the hits."""

    text: str
    k: int = 3
    since: str | None = None
    until: str | None = None
    types: tuple[MemoryTypeName, ...] | None = None
    context_budget: int | None = None

    def label(self) -> str:
        """The query with its filters, as the demo prints it."""
        notes = [f"{name} {value}" for name, value in (("since", self.since), ("until", self.until)) if value]
        if self.types:
            notes.append("type " + "|".join(self.types))
        if self.context_budget:
            notes.append(f"context(token_budget={self.context_budget})")
        return self.text + (f"  [{', '.join(notes)}]" if notes else "")


QUERIES = (
    DemoQuery("What book am I reading now?", k=4),
    DemoQuery("Where does my sister live and what does she do?"),
    DemoQuery("我喜欢喝什么茶？"),
    DemoQuery("下个月去哪里出差？"),
    DemoQuery(
        "When is my appointment for the knee?", since="2025-04-01", until="2025-05-01", types=("episodic",)
    ),
    DemoQuery("plans for the Berlin trip in June", k=5, context_budget=120),
)


def load_conversation() -> dict[str, Any]:
    """The sample conversation shipped as package data (ripplemem/data/demo_conversation.json)."""
    source = resources.files("ripplemem").joinpath("data", DATA_FILE)
    conversation: dict[str, Any] = json.loads(source.read_text(encoding="utf-8"))
    return conversation


def conversation_items(conversation: dict[str, Any]) -> list[dict[str, Any]]:
    """One episodic memory per turn, 'Speaker: text', dated by its session (a minute per turn)."""
    items = []
    for session in conversation["sessions"]:
        start = datetime.fromisoformat(session["date"])
        for turn, (speaker, text) in enumerate(session["turns"], 1):
            items.append(
                {
                    "content": f"{speaker}: {text}",
                    "type": "episodic",
                    "session_id": session["id"],
                    "event_time": start + timedelta(minutes=turn - 1),
                    "metadata": {"session": session["id"], "turn": turn},
                }
            )
    return items


def run_demo(
    path: str | None = None, *, keep: bool = False, embedder: str = "minilm", out: TextIO | None = None
) -> dict[str, Any]:
    """Load the conversation, run the sample recalls and print hits, timings and stats; returns
    the same as data (store, embedder, each query with its hits and time, stats)."""
    quiet_third_party()
    from ripplemem.embedding.embedders import resolve_embedder
    from ripplemem.memory import RippleMem

    out = out or sys.stdout

    def say(text: str) -> None:
        print(text, file=out, flush=True)

    conversation = load_conversation()
    items = conversation_items(conversation)
    sessions = conversation["sessions"]
    # The demo's clock stands the day after the last session, so recency means what it would then.
    today = datetime.fromisoformat(sessions[-1]["date"]) + timedelta(days=1)
    store_path = path or tempfile.mkdtemp(prefix="ripplemem-demo-")
    summary: dict[str, Any] = {
        "store": store_path,
        "kept": bool(keep or path),
        "turns": len(items),
        "sessions": len(sessions),
        "today": today.date().isoformat(),
        "queries": [],
    }
    say(
        f"RippleMem demo: {len(items)} turns in {len(sessions)} sessions "
        f"({sessions[0]['date'][:10]} .. {sessions[-1]['date'][:10]}), English and 中文; "
        f"today is {today:%Y-%m-%d}"
    )
    say(f"store    {store_path}{'' if path else ' (temporary)'}")
    try:
        start = time.perf_counter()
        model = resolve_embedder(embedder)
        model.embed_query("warm-up")  # load the model now, so 'load' and 'add' are timed apart
        mem = RippleMem(store_path, user_id=DEMO_USER, embedder=model, clock=lambda: today)
        say(f"load     {time.perf_counter() - start:5.1f} s   embedder {model.model_id}, store opened")
        summary["embedder"] = model.model_id
        with mem:
            if mem.stats()["total"]:
                raise InvalidInputError(
                    f"the store at {store_path!r} already holds the demo for user "
                    f"{DEMO_USER!r}; choose another --path"
                )
            start = time.perf_counter()
            mem.add_many(items)
            say(f"add      {time.perf_counter() - start:5.1f} s   {len(items)} episodic memories")
            summary["queries"] = [_show_query(mem, query, say) for query in QUERIES]
            recall_seconds = sum(shown["ms"] for shown in summary["queries"]) / 1000
            say("")
            say(
                f"recall   {recall_seconds:5.2f} s   {len(QUERIES)} queries "
                f"({recall_seconds / len(QUERIES) * 1000:.0f} ms each)"
            )
            summary["stats"] = mem.stats()
            say(f"stats    {fmt.stats_summary(summary['stats'])}")
    finally:
        if not (keep or path):
            shutil.rmtree(store_path, ignore_errors=True)
    if keep or path:
        # The green-tea turns are in Chinese, which MiniLM does not read: ask in Chinese.
        say(f'kept the store; try: ripplemem recall "绿茶" --path {store_path} --user {DEMO_USER}')
    else:
        say("removed the temporary store (pass --keep to keep it)")
    return summary


def _show_query(mem: RippleMem, query: DemoQuery, say: Callable[[str], None]) -> dict[str, Any]:
    """Run one demo recall, print it, and return it as data: the query, its time and its hits."""
    start = time.perf_counter()
    result = mem.recall(query.text, query.k, types=query.types, since=query.since, until=query.until)
    seconds = time.perf_counter() - start
    say("")
    say(f"> {query.label()}   ({seconds * 1000:.0f} ms)")
    if query.context_budget:
        say("\n".join("  " + line for line in result.context(query.context_budget).splitlines()))
    else:
        say("\n".join(fmt.hit_lines(result.hits, indent="  ")) or "  no memories match")
    hits = [
        {
            "id": hit.memory.id,
            "score": round(hit.score, 4),
            "type": hit.memory.type,
            "date": fmt.date_of(hit.memory),
            "content": hit.memory.content,
        }
        for hit in result.hits
    ]
    return {"query": query.label(), "ms": round(seconds * 1000, 1), "hits": hits}
