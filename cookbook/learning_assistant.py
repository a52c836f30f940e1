"""Recipe: a learning assistant that writes the learner's report.

    HF_HUB_OFFLINE=1 python cookbook/learning_assistant.py [--offline]

A course guide goes into a knowledge base; a week of questions and notes goes into the learner's
memory; ``mem.analysis.learning_report()`` then says what was studied, what is strong and weak, which
sections were never touched, what to review before it is forgotten, and what to do next. The
numbers come from the data; a chat model (ChatOpenAI when OPENAI_API_KEY / OPENAI_BASE_URL is set,
else a scripted offline one) only phrases the overview and next steps.

Needs ``pip install 'ripplemem[langchain]'`` (langchain-core, for the chat model; the Markdown guide
needs nothing more); add ``[openai]`` to answer with ChatOpenAI. Without it the recipe stops with
that pip command.
"""

from __future__ import annotations

import json
import tempfile
from datetime import datetime, timedelta, timezone
from pathlib import Path

from extras import missing_extra

try:
    from langchain_core.messages import AIMessage
    from langchain_models import choose_model
except ImportError as error:
    missing_extra("langchain", error)

from ripplemem import RippleMem

GUIDE = """# Deep Learning Guide

## Neural Networks

A neural network stacks weighted sums and non-linear activation functions.

### Backpropagation

Backpropagation computes the gradient of the loss for every weight with the chain rule, from the output
layer back to the input.

### Activation Functions

ReLU, sigmoid and tanh add non-linearity to a network.

## Transformer Architecture

The Transformer replaces recurrence with stacked encoder and decoder blocks.

### Encoder

Each encoder block has a feed-forward layer, residual connections and layer normalisation.

### Decoder

The decoder generates tokens one at a time, attending to the encoder output.

## Attention Mechanism

### Self-Attention

Self-attention computes queries, keys and values from one sequence and mixes the values by softmax weights.

### Multi-Head Attention

Multi-head attention runs several attention heads in parallel and concatenates their outputs.
"""
START = datetime(2024, 1, 10, 9, 0, tzinfo=timezone.utc)
# (day, minutes into the session, what the learner asked or noted, activity)
HISTORY = [
    (0, 0, "How does Backpropagation compute the gradient of every weight?", "question"),
    (0, 25, "Note: Backpropagation applies the chain rule from the output layer back to the input.", "note"),
    (0, 50, "Note: Neural Networks stack weighted sums and activation functions.", "note"),
    (0, 70, "Why do Neural Networks need non-linear activation functions?", "question"),
    (3, 0, "What does an Encoder block of the Transformer contain?", "question"),
    (3, 30, "Note: the Transformer Decoder generates one token at a time.", "note"),
    (3, 55, "Does Backpropagation run through the Transformer layers as well?", "question"),
]
REPORT_DAY = 7
PHRASED = {
    "overview": "You asked 4 questions and wrote 3 notes this week. Backpropagation is your strongest topic; "
    "the Attention Mechanism section of the guide is still untouched.",
    "next_steps": [
        "Read the Self-Attention and Multi-Head Attention sections, then write a note on each.",
        "Review Neural Networks and the Encoder before they fade.",
        "Explain in your own words how the Decoder uses the encoder output.",
    ],
}


def main() -> None:
    """Ingest the guide, replay a week of study, print the report."""
    clock = {"now": START}
    with tempfile.TemporaryDirectory() as folder:
        guide = Path(folder) / "deep_learning_guide.md"
        guide.write_text(GUIDE, encoding="utf-8")
        mem = RippleMem(path=Path(folder) / "memdb", user_id="lin", clock=lambda: clock["now"])
        ingested = mem.ingest(guide, "deep-learning")
        print(f"Knowledge base 'deep-learning': {ingested.chunks} chunks from {guide.name}")
        for day, minutes, text, activity in HISTORY:
            mem.add(
                text,
                session_id=f"day-{day}",
                metadata={"activity": activity},
                event_time=START + timedelta(days=day, minutes=minutes),
            )
        print(f"Study history: {len(HISTORY)} questions and notes over two sessions\n")
        clock["now"] = START + timedelta(days=REPORT_DAY)

        model, label = choose_model([AIMessage(json.dumps(PHRASED))])
        report = mem.analysis.learning_report(llm=model)
        mem.close()

    summary, analysis = report["summary"], report["learning_analysis"]
    print(f"Learning report {report['report_id']} (phrased by {label}: {report['phrasing']['by']})")
    print(
        f"  study time {summary['total_study_time']}, {summary['questions_asked']} questions, "
        f"{summary['notes_created']} notes, {summary['documents_studied']} document(s)"
    )
    print(f"  strengths: {', '.join(analysis['strengths'])}; weaknesses: {', '.join(analysis['weaknesses'])}")
    graph = analysis["knowledge_graph"]
    print(
        f"  knowledge graph: {graph['nodes']} concepts, {graph['edges']} links, central: "
        f"{', '.join(graph['central_concepts'])}"
    )
    print("  knowledge gaps:")
    for gap in report["knowledge_gaps"]:
        print(f"  - [{gap['priority']}] {gap['topic']}: {gap['reason']} -> {gap['recommendation']}")
    print("  review before it is forgotten:")
    for review in report["review_suggestions"]:
        print(
            f"  - [{review['urgency']}] {review['topic']}: {review['reason']} "
            f"(retention ~{review['retention']:.0%})"
        )
    print(f"Overview: {report['overview']}\nNext steps:")
    for step in report["next_steps"]:
        print(f"  - {step}")
    print("\nThe report as JSON (first lines):\n" + "\n".join(json.dumps(report, indent=2).splitlines()[:12]))


if __name__ == "__main__":
    main()
