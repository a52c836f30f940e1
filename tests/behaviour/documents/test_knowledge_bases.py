"""Knowledge bases are shared by grant only: readers recall their chunks beside their own memories,
everyone else gets nothing (not even by guessing a chunk id), personal memories never travel
through a shared base, revoking works, routing picks documents or memories, and recall walks
from a conversation's entity to a document chunk."""

from __future__ import annotations

from pathlib import Path

import pytest
from doc_fixtures import write_docx, write_md

from ripplemem import InvalidInputError, MemoryNotFoundError, RippleMem
from ripplemem.embedding.embedders import Embedder
from ripplemem.errors import KnowledgeBaseAccessError

LEAVE = "Employees may take sixteen weeks of paid parental leave after the birth or adoption of a child."
EXPENSES = "The learning budget is one thousand euros per calendar year, approved by the team lead."
LAPTOPS = "Every laptop must use full-disk encryption and lock after five idle minutes."
ALICE_SECRET = "My salary is 95k and I plan to take parental leave in May without telling the team."

PROJECT_DOCS = {
    "halcyon.md": (
        "Halcyon launch review",
        "The Halcyon review found that the battery supplier missed two delivery deadlines, "
        "so the launch moves to October.",
    ),
    "meridian.md": (
        "Meridian status",
        "The Meridian team finished the data migration and the billing service is live.",
    ),
    "borealis.md": (
        "Borealis plan",
        "Borealis will replace the warehouse scanners with handheld devices next spring.",
    ),
    "travel.md": (
        "Travel policy",
        "Employees book flights through the travel portal and keep receipts for every project trip.",
    ),
}


def handbook(folder: Path) -> Path:
    """A folder with the company handbook as a DOCX and a Markdown page."""
    folder.mkdir(parents=True, exist_ok=True)
    write_docx(
        folder / "handbook.docx",
        title="Employee Handbook",
        headings=("Parental Leave", "Learning Budget"),
        paragraphs=(LEAVE, EXPENSES),
    )
    write_md(folder / "security.md", heading="Security", sentence=LAPTOPS)
    return folder


def kb_hits(result, name: str = "handbook") -> list:
    return [hit for hit in result.hits if hit.memory.metadata.get("knowledge_base") == name]


def test_a_granted_base_is_read_by_its_readers_and_nobody_else(mem: RippleMem, tmp_path: Path) -> None:
    report = mem.ingest(handbook(tmp_path / "docs"), "handbook")
    assert report.ok and report.chunks >= 2
    assert mem.kb.grant("handbook", "bob") is True and mem.kb.grant("handbook", "bob") is False
    bob, carol = mem.scope("bob"), mem.scope("carol")
    carol.add("Carol's parental leave starts in June.")
    for reader in (mem, bob):
        top = reader.recall("how many weeks of parental leave", k=3).hits[0]
        assert LEAVE in top.memory.content
        assert top.memory.user_id == "kb:handbook" and top.memory.metadata["knowledge_base"] == "handbook"
    chunk = kb_hits(bob.recall("parental leave weeks", k=3))[0].memory
    for mode in ("ripple", "hybrid", "dense", "keyword"):
        assert kb_hits(carol.recall("parental leave weeks encryption budget", k=10, mode=mode)) == []
    assert [h.memory.content for h in carol.recall("parental leave", k=10).hits] == [
        "Carol's parental leave starts in June."
    ]
    assert carol.kb.list() == [] and {kb.name for kb in bob.kb.list()} == {"handbook"}
    # Guessing a chunk's id reaches nothing, and nothing is changed by trying.
    assert carol.get(chunk.id) is None and carol.delete(chunk.id) is False
    with pytest.raises(MemoryNotFoundError):
        carol.update(chunk.id, content="rewritten by carol")
    for attempt in (
        lambda: carol.kb.chunks("handbook"),
        lambda: carol.recall("leave", knowledge_bases="handbook"),
        lambda: carol.kb.grant("handbook", "carol"),
        lambda: carol.kb.revoke("handbook", "bob"),
        lambda: carol.kb.forget_source(tmp_path / "docs" / "security.md", "handbook"),
        lambda: carol.kb.delete("handbook"),
        lambda: carol.ingest(tmp_path / "docs", "handbook"),
    ):
        with pytest.raises(KnowledgeBaseAccessError, match="handbook"):
            attempt()
    assert LEAVE in "\n".join(c.content for c in bob.kb.chunks("handbook"))
    assert mem.kb.list()[0].chunks == report.chunks


def test_personal_memories_never_travel_through_a_shared_base(mem: RippleMem, tmp_path: Path) -> None:
    mem.ingest(handbook(tmp_path / "docs"), "handbook")
    mem.add(ALICE_SECRET)
    mem.kb.grant("handbook", "bob")
    bob = mem.scope("bob")
    bob.add("I asked HR about parental leave for my partner.")
    for mode in ("ripple", "hybrid", "dense", "keyword"):
        for route in (None, "auto", "both", "documents"):
            found = [
                h.memory.content
                for h in bob.recall(
                    "my salary and my parental leave in May", k=10, mode=mode, route=route
                ).hits
            ]
            assert ALICE_SECRET not in found
    owners = {h.memory.user_id for h in bob.recall("salary parental leave May", k=10).hits}
    assert owners <= {"bob", "kb:handbook"}
    assert bob.stats()["total"] == 1


def test_revoke_and_delete(mem: RippleMem, tmp_path: Path) -> None:
    mem.ingest(handbook(tmp_path / "docs"), "handbook")
    mem.kb.grant("handbook", "bob")
    bob = mem.scope("bob")
    assert kb_hits(bob.recall("laptop encryption", k=3))
    assert mem.kb.revoke("handbook", "bob") is True and mem.kb.revoke("handbook", "bob") is False
    assert kb_hits(bob.recall("laptop encryption", k=3)) == [] and bob.kb.list() == []
    with pytest.raises(InvalidInputError, match="last reader"):
        mem.kb.revoke("handbook", "alice")
    removed = mem.kb.forget_source(tmp_path / "docs" / "security.md", "handbook")
    assert removed >= 1 and all(LAPTOPS not in c.content for c in mem.kb.chunks("handbook"))
    assert mem.kb.list()[0].sources == 1
    assert mem.kb.delete("handbook") >= 1
    assert mem.kb.list() == [] and kb_hits(mem.recall("parental leave", k=5)) == []
    # The name is free again: whoever ingests next creates (and owns) it.
    assert bob.ingest(tmp_path / "docs" / "security.md", "handbook").created


def test_knowledge_bases_narrow_and_route(mem: RippleMem, tmp_path: Path) -> None:
    mem.ingest(handbook(tmp_path / "docs"), "handbook")
    projects = tmp_path / "projects"
    projects.mkdir()
    for name, (heading, sentence) in PROJECT_DOCS.items():
        write_md(projects / name, heading=heading, sentence=sentence)
    mem.ingest(projects, "projects")
    mem.add("I told my manager I will take my parental leave in May.")
    mem.add_many([f"Note {n}: I watered the balcony plants today." for n in range(20)])
    narrowed = mem.recall("parental leave and the travel portal", k=10, knowledge_bases=["projects"])
    assert {h.memory.metadata.get("knowledge_base") for h in narrowed.hits} <= {None, "projects"}
    assert kb_hits(narrowed, "projects")

    personal = mem.recall("What did I tell my manager about my leave?", k=5, route="auto")
    assert personal.route is not None and personal.route["target"] == "memory"
    assert all("knowledge_base" not in h.memory.metadata for h in personal.hits)
    assert personal.hits[0].memory.content == "I told my manager I will take my parental leave in May."
    factual = mem.recall(
        "How many weeks of parental leave does the Employee Handbook allow?", k=5, route="auto"
    )
    assert factual.route is not None and factual.route["target"] == "documents"
    assert LEAVE in factual.hits[0].memory.content
    merged = mem.recall("What is the parental leave policy?", k=5, route="auto")
    assert merged.route is not None and merged.route["target"] == "both"
    assert {LEAVE in h.memory.content or h.memory.user_id == "alice" for h in merged.hits[:2]} == {True}
    chinese_personal = mem.recall("我上周跟经理说了什么？", k=5, route="auto")
    assert chinese_personal.route is not None and chinese_personal.route["target"] == "memory"
    assert kb_hits(chinese_personal) == kb_hits(chinese_personal, "projects") == []
    chinese_factual = mem.recall("《Employee Handbook》里的育儿假政策是什么？", k=5, route="auto")
    assert chinese_factual.route is not None and chinese_factual.route["target"] == "documents"
    assert all(h.memory.type == "document" for h in chinese_factual.hits)
    only_docs = mem.recall("parental leave", k=10, route="documents")
    assert only_docs.hits and all(h.memory.type == "document" for h in only_docs.hits)
    # A sparse memory (a new user) is topped up from the documents, its own hits first.
    bob = mem.scope("bob")
    mem.kb.grant("handbook", "bob")
    bob.add("I asked HR whether the travel portal covers trains.")
    topped_up = bob.recall("What did I ask about parental leave?", k=4, route="auto")
    assert topped_up.route is not None and topped_up.route["order"] == ["memory", "documents"]
    assert topped_up.hits[0].memory.user_id == "bob" and kb_hits(topped_up)


def test_recall_walks_from_a_conversation_to_a_document(tmp_path: Path, embedder: Embedder) -> None:
    projects = tmp_path / "projects"
    projects.mkdir()
    for name, (heading, sentence) in PROJECT_DOCS.items():
        write_md(projects / name, heading=heading, sentence=sentence)
    with RippleMem(tmp_path / "store", user_id="alice", embedder=embedder) as alice:
        alice.ingest(projects, "projects")
        alice.kb.grant("projects", "dave")
        alice.add("I'm leading Halcyon at work this quarter, it's my first big project.")
        alice.add("My sister visits in June.")
        dave = alice.scope("dave")
        dave.add("I'm leading Borealis at work this quarter, it's my first big project.")
        question = "What did the document say about the project I told you about?"
        for user, project in ((alice, "Halcyon"), (dave, "Borealis")):
            first = kb_hits(user.recall(question, k=5, record_access=False), "projects")[0]
            assert first.memory.content.startswith(f"# {project}")
            assert f"[{project}]" in first.why  # reached through the project's entity in the base's graph
        # Without a conversation about a project, the same question has nothing to walk from.
        erin = alice.scope("erin")
        alice.kb.grant("projects", "erin")
        erin.add("My sister visits in June.")
        first = kb_hits(erin.recall(question, k=5, record_access=False), "projects")[0]
        assert "[" not in first.why


def test_no_handle_can_open_a_base_scope(embedder: Embedder) -> None:
    with pytest.raises(InvalidInputError, match="control characters"):
        RippleMem(None, user_id="\x1fkb\x1fhandbook", embedder=embedder)
