"""Ingest speed: pages per second through convert, chunk, embed + graph, against a naive baseline.

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/ingest.py --docs 40 --pages 4

Generates a folder of documents (Markdown, DOCX, PDF, HTML and CSV, written with the libraries
MarkItDown reads them with) holding pages of report-like prose with headings and named
projects and people, then measures, in one run and on the same files:

- convert: MarkItDown (offline) to Markdown, page boundaries included (``iter_convert``);
- chunk: ``chunk_text(chunker="auto")`` with the store's embedder (semantic boundaries for prose);
- embed + graph: the chunks written as document memories of a knowledge base (``write_batch``:
  MiniLM embeddings, SQLite rows and FTS, Chroma, entities, MENTIONS/NEXT/SIMILAR/ALIAS edges);
- end to end: ``mem.ingest(folder)`` into a fresh store (all of the above, with dedup bookkeeping);
- baseline: the same converted texts cut every 1000 characters, embedded with the same model and
  added straight into a Chroma collection (no structure, no graph, no keywords).

A "page" is a PDF page, and 3000 characters of text for formats without pages. "other procs" is
the CPU that other processes used during the run (from /proc/stat): on a 2-core machine numbers
taken above ~0.3 cores of contention are slower than the machine can do.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from speed import _contention, _cpu_snapshot  # noqa: E402

from ripplemem import RippleMem  # noqa: E402
from ripplemem.documents.ingest import _chunk_memory, page_count  # noqa: E402
from ripplemem.engine.graph_rows import GraphInput  # noqa: E402
from ripplemem.engine.writes import write_batch  # noqa: E402
from ripplemem.markdown.chunk.chunking import chunk_text  # noqa: E402
from ripplemem.markdown.convert.convert import ConvertedDocument, iter_convert, source_key  # noqa: E402

NAIVE_CHARS = 1000
FORMATS = ("md", "docx", "pdf", "html", "csv")
PROJECTS = ["Halcyon", "Meridian", "Borealis", "Lantern", "Quarry", "Juniper", "Solstice", "Tamarind"]
PEOPLE = [
    "Ingrid Solberg",
    "Tobias Keller",
    "Marguerite Duval",
    "Kenji Watanabe",
    "Amara Okafor",
    "Lucas Ferreira",
    "Priya Raman",
    "Elif Yilmaz",
]
TEAMS = ["platform", "billing", "warehouse", "mobile", "data", "security", "support", "research"]
SUBJECTS = [
    "the migration",
    "the vendor contract",
    "the release schedule",
    "the test plan",
    "the budget",
    "the rollout",
    "the incident review",
    "the hiring plan",
    "the architecture review",
]
VERBS = [
    "delayed",
    "approved",
    "reviewed",
    "rewrote",
    "split into two phases",
    "moved to the next quarter",
    "handed over to the {team} team",
    "documented",
    "measured again",
    "simplified",
]
REASONS = [
    "because the supplier missed a deadline",
    "after the load tests failed twice",
    "so that the audit can start in spring",
    "to cut the cloud bill by a fifth",
    "because two engineers left the team",
    "after customers reported slow exports",
    "to match the new security policy",
    "while the legal review is still open",
]


def sentence(rng: random.Random) -> str:
    """One report-like sentence naming a project, a person or a team."""
    verb = rng.choice(VERBS).format(team=rng.choice(TEAMS))
    return (
        f"{rng.choice(PEOPLE)} said that {rng.choice(SUBJECTS)} of project {rng.choice(PROJECTS)} was "
        f"{verb} {rng.choice(REASONS)}."
    )


def page_sections(rng: random.Random, pages: int) -> list[tuple[str, list[str]]]:
    """(heading, paragraphs) sections adding up to about `pages` pages of 3000 characters."""
    sections, size = [], 0
    while size < pages * 3000:
        paragraphs = [
            " ".join(sentence(rng) for _ in range(rng.randint(3, 6))) for _ in range(rng.randint(2, 4))
        ]
        sections.append(
            (f"{rng.choice(PROJECTS)} {rng.choice(['status', 'risks', 'plan', 'review'])}", paragraphs)
        )
        size += sum(len(p) for p in paragraphs)
    return sections


def write_document(path: Path, fmt: str, sections: list[tuple[str, list[str]]]) -> Path:
    """Write the sections as a real file of the format."""
    target = path.with_suffix("." + fmt)
    if fmt == "md":
        text = "\n\n".join(f"## {h}\n\n" + "\n\n".join(ps) for h, ps in sections)
        target.write_text(text, encoding="utf-8")
    elif fmt == "html":
        body = "".join(f"<h2>{h}</h2>" + "".join(f"<p>{p}</p>" for p in ps) for h, ps in sections)
        target.write_text(
            f"<html><head><title>{target.stem}</title></head><body>{body}</body></html>", encoding="utf-8"
        )
    elif fmt == "csv":
        rows = [f'"{h}","{p}"' for h, ps in sections for p in ps]
        target.write_text("section,text\n" + "\n".join(rows) + "\n", encoding="utf-8")
    elif fmt == "docx":
        import docx

        document = docx.Document()
        for heading, paragraphs in sections:
            document.add_heading(heading, level=2)
            for paragraph in paragraphs:
                document.add_paragraph(paragraph)
        document.save(str(target))
    else:
        from fpdf import FPDF

        pdf = FPDF()
        pdf.set_font("Helvetica", size=11)
        pdf.add_page()
        for heading, paragraphs in sections:
            pdf.multi_cell(0, 6, heading.upper(), new_x="LMARGIN", new_y="NEXT")
            for paragraph in paragraphs:
                pdf.multi_cell(0, 6, paragraph, new_x="LMARGIN", new_y="NEXT")
                pdf.ln(2)
        pdf.output(str(target))
    return target


def generate(folder: Path, docs: int, pages: int, seed: int) -> list[Path]:
    """`docs` documents cycling through the formats, each about `pages` pages long."""
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    return [
        write_document(folder / f"report_{i:03d}", FORMATS[i % len(FORMATS)], page_sections(rng, pages))
        for i in range(docs)
    ]


Timing = tuple[float, int, int]  # seconds, pages, chunks


def warm_up(mem: RippleMem, sample: Path) -> None:
    """Load the model, MarkItDown and the vector index before any clock starts."""
    mem._engine.embedder.embed_documents(["warm up the model"])
    list(iter_convert([sample]))
    assert mem._engine.index is not None


def timed_stages(files: list[Path], store: Path) -> tuple[dict[str, Timing], list[ConvertedDocument]]:
    """convert, chunk and embed + graph timed one after the other, and the converted documents."""
    mem = RippleMem(store, user_id="bench")
    engine = mem._engine
    warm_up(mem, files[0])
    start = time.perf_counter()
    documents = [o.document for o in iter_convert(files) if o.document is not None]
    converted = time.perf_counter() - start
    pages = sum(page_count(d) for d in documents)
    start = time.perf_counter()
    chunked = [
        (d, chunk_text(d.markdown, "auto", embedder=engine.embedder, page_starts=d.page_starts))
        for d in documents
    ]
    cut = time.perf_counter() - start
    chunks = sum(len(c) for _, c in chunked)
    start = time.perf_counter()
    for document, pieces in chunked:
        memories = [
            _chunk_memory(engine, "bench", source_key(document.source), document, piece, len(pieces))
            for piece in pieces
        ]
        write_batch(engine, memories[0].user_id, memories, [GraphInput() for _ in memories])
    written = time.perf_counter() - start
    mem.close()
    stages = {
        "convert": (converted, pages, 0),
        "chunk": (cut, pages, chunks),
        "embed + graph": (written, pages, chunks),
    }
    return stages, documents


def end_to_end(folder: Path, store: Path) -> Timing:
    """mem.ingest(folder) into a fresh store, the model loaded beforehand."""
    mem = RippleMem(store, user_id="bench")
    warm_up(mem, next(folder.iterdir()))
    start = time.perf_counter()
    report = mem.ingest(folder, "bench")
    seconds = time.perf_counter() - start
    assert report.ok, report.failed
    mem.close()
    return seconds, report.pages, report.chunks


def baseline(documents: list[ConvertedDocument], store: Path) -> Timing:
    """The converted texts cut every NAIVE_CHARS characters, embedded, added to a Chroma collection."""
    import chromadb
    from chromadb.config import Settings

    from ripplemem.embedding.embedders import resolve_embedder

    embedder = resolve_embedder(None)
    embedder.embed_documents(["warm up the model"])
    client = chromadb.PersistentClient(path=str(store), settings=Settings(anonymized_telemetry=False))
    collection = client.get_or_create_collection(
        "naive", embedding_function=None, configuration={"hnsw": {"space": "cosine"}}
    )
    start = time.perf_counter()
    total = 0
    for number, document in enumerate(documents):
        text = document.markdown
        pieces = [text[i : i + NAIVE_CHARS] for i in range(0, len(text), NAIVE_CHARS)]
        vectors = embedder.embed_documents(pieces)
        collection.add(
            ids=[f"{number}-{i}" for i in range(len(pieces))], embeddings=vectors, documents=pieces
        )
        total += len(pieces)
    seconds = time.perf_counter() - start
    return seconds, sum(page_count(d) for d in documents), total


def row(name: str, seconds: float, pages: int, chunks: int) -> str:
    """One markdown table row."""
    per_chunk = f"{chunks / seconds:.1f}" if chunks and seconds > 0 else "-"
    return f"| {name} | {seconds:.2f} | {pages / seconds:.1f} | {per_chunk} | {chunks or '-'} |"


def main() -> None:
    """Generate the documents, run every measurement, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=int, default=40, help="documents to generate (default 40)")
    parser.add_argument("--pages", type=int, default=4, help="pages per document (default 4)")
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--keep", action="store_true", help="keep the generated folder and stores")
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="ripplemem-ingest-bench-"))
    try:
        files = generate(workdir / "docs", args.docs, args.pages, args.seed)
        load_before = os.getloadavg()[0]
        started = _cpu_snapshot()
        stages, documents = timed_stages(files, workdir / "stages")
        whole = end_to_end(workdir / "docs", workdir / "ingest")
        naive = baseline(documents, workdir / "naive")
        contention = _contention(started)
        _, pages, chunks = stages["chunk"]
        convert_seconds = stages["convert"][0]
        print(
            f"{len(files)} documents ({', '.join(FORMATS)}), {stages['convert'][1]} pages; "
            f"{os.cpu_count()} cores, load {load_before:.2f} before, other procs {contention:.2f} cores"
        )
        print()
        print("| stage | seconds | pages/s | chunks/s | chunks |")
        print("|---|---:|---:|---:|---:|")
        for name, (seconds, pages, chunks) in stages.items():
            print(row(name, seconds, pages, chunks))
        print(row("sum of stages", sum(s for s, _, _ in stages.values()), pages, chunks))
        print(row("mem.ingest end to end", *whole))
        print(row(f"baseline: {NAIVE_CHARS}-char split + embed + Chroma add", *naive))
        print(row("baseline + convert", naive[0] + convert_seconds, naive[1], naive[2]))
    finally:
        if args.keep:
            print(f"kept {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
