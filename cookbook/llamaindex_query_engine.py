"""A LlamaIndex query engine over a user's memories plus documents: answers that need both.

    python cookbook/llamaindex_query_engine.py              # a real model when OPENAI_API_KEY is set
    python cookbook/llamaindex_query_engine.py --offline    # the offline stand-in, no network needed

The company handbook is stored as type="document" memories, one per section (document ingestion
with chunkers is coming to RippleMem itself); what Alice said is stored as episodic memories.
One RippleMemRetriever feeds both to a RetrieverQueryEngine, so "how much of my learning budget
is left?" gets the budget from the handbook and the spending from Alice's memories.

Needs ``pip install 'ripplemem[llamaindex]'`` (llama-index-core). Without it the recipe stops with
that pip command.
"""

from __future__ import annotations

import argparse
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

from extras import missing_extra  # noqa: E402

try:
    from llama_index.core.query_engine import RetrieverQueryEngine
    from llamaindex_llm import choose_llm

    from llamaindex_ripplemem import RippleMemRetriever
except ImportError as error:
    missing_extra("llamaindex", error)

from ripplemem import RippleMem  # noqa: E402

HANDBOOK = """\
## Learning budget
Every employee has a learning budget of 1000 EUR per calendar year for courses, books and conferences.

## Parental leave
Parents get 16 weeks of paid parental leave. Request it in the HR portal at least 8 weeks before the due date.

## Remote work
You may work from home on Tuesdays and Thursdays. Tell your team lead if you change your days.

## Expenses
Submit receipts within 30 days. Meals on business trips are covered up to 40 EUR per day.
"""
ALICE_SAID = [
    {"content": "I spent 650 EUR of my learning budget on a Kubernetes course.", "event_time": "2025-02-10"},
    {"content": "Our baby is due on 12 May 2025.", "event_time": "2025-01-20"},
    {"content": "I work from home on Tuesdays.", "event_time": "2024-11-04"},
]
QUESTIONS = [
    "How much of my learning budget is left this year?",
    "By when must I request parental leave for our baby?",
]


def handbook_sections(text: str, source: str) -> list[dict[str, object]]:
    """One document memory per '## ' section, with its title and source in the metadata."""
    items: list[dict[str, object]] = []
    for block in text.split("## ")[1:]:
        title, _, body = block.partition("\n")
        items.append(
            {
                "content": f"{title.strip()}: {body.strip()}",
                "type": "document",
                "metadata": {"source": source, "section": title.strip()},
            }
        )
    return items


def main() -> None:
    """Store the handbook and Alice's memories, then ask questions that need both."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--offline", action="store_true", help="use the offline stand-in even when a model is configured"
    )
    args = parser.parse_args()
    llm, label = choose_llm(function_calling=False, offline=args.offline)
    print(f"LLM: {label}")
    with RippleMem(path=None, user_id="alice") as mem:
        mem.add_many(handbook_sections(HANDBOOK, "handbook.md"))
        mem.add_many(ALICE_SAID)
        engine = RetrieverQueryEngine.from_args(RippleMemRetriever(memory=mem, similarity_top_k=4), llm=llm)
        for question in QUESTIONS:
            response = engine.query(question)
            print(f"\nQ: {question}\nA: {response}")
            for source in response.source_nodes:
                meta = source.node.metadata
                where = "memory" if meta["source"] == "ripplemem" else meta["source"]
                print(
                    f"   {source.score:.2f} [{meta['type']}, {where}, {meta['time'][:10]}] "
                    f"{source.node.get_content()}"
                )


if __name__ == "__main__":
    main()
