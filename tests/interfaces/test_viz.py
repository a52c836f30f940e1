"""`ripplemem viz`: the HTML page is rendered in real headless Chromium (Debian's `chromium`), and
the picture and the DOM it builds are checked against the store."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from internals import engine_of
from PIL import Image

from ripplemem import RippleMem
from ripplemem.embedding.embedders import Embedder
from ripplemem.interfaces.cli.main import main
from ripplemem.interfaces.viz.page import write_graph_html

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="headless Chromium is not installed (Debian: apt-get install -y chromium)"
)

ALICE = [
    "Calvin bought a Ferrari 488 in Rome.",
    "Calvin drove to Milan for the Ferrari meetup.",
    "Alice's sister Lin lives in Berlin.",
    "Lin works at Siemens in Berlin.",
    "Alice adopted the cat Miso in Lyon.",
    "Miso's birthday is on May 3rd.",
    "Hostile text </script><script>document.title = 'pwned'</script> from Hangzhou.",
]
ENTITY_ORANGE, EPISODIC_BLUE = (0xE0, 0x7B, 0x39), (0x3B, 0x7D, 0xD8)


@pytest.fixture
def alice(tmp_path: Path, embedder: Embedder) -> Iterator[RippleMem]:
    """Alice's store with a few linked memories (people, places, a cat)."""
    with RippleMem(tmp_path / "store", user_id="alice", embedder=embedder) as handle:
        handle.add_many(ALICE)
        yield handle


def chromium(tmp_path: Path, page: Path, *extra: str) -> str:
    """Run headless Chromium on a local page with a fresh profile; returns its stdout."""
    profile = tmp_path / f"profile-{len(list(tmp_path.glob('profile-*')))}"
    profile.mkdir()
    command = [
        CHROMIUM or "chromium",
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
        "--window-size=1200,900",
        *extra,
        page.resolve().as_uri(),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def rendered(tmp_path: Path, page: Path) -> tuple[int, int, str]:
    """The node and edge counts the page wrote into the DOM after drawing, and the DOM."""
    dom = chromium(tmp_path, page, "--dump-dom")
    body = re.search(r'<body data-rendered-nodes="(\d+)" data-rendered-edges="(\d+)"', dom)
    assert body, dom[:2000]
    return int(body.group(1)), int(body.group(2)), dom


def pixels_near(image: Image.Image, colour: tuple[int, int, int], tolerance: int = 24) -> int:
    """How many pixels of a screenshot are (about) a palette colour."""
    distance = np.abs(np.asarray(image, dtype=np.int16) - np.array(colour, dtype=np.int16))
    return int((distance <= tolerance).all(axis=-1).sum())


def entity_count(memory: RippleMem) -> int:
    """How many entities the user's graph holds, counted in SQLite."""
    with engine_of(memory).store.read() as conn:
        row = conn.execute("SELECT COUNT(*) FROM entities WHERE user_id = ?", (memory.user_id,)).fetchone()
    return int(row[0])


@needs_chromium
def test_whole_graph_renders_every_node_in_chromium(alice: RippleMem, tmp_path: Path) -> None:
    page = tmp_path / "graph.html"
    view = write_graph_html(alice, page)
    expected = len(ALICE) + entity_count(alice)
    assert len(view.nodes) == expected and not view.capped
    assert "<script>document.title" not in page.read_text(encoding="utf-8")

    nodes, edges, dom = rendered(tmp_path, page)
    assert (nodes, edges) == (expected, len(view.edges))
    assert f"<title>RippleMem graph: alice ({expected} nodes)</title>" in dom
    assert "Hostile text &lt;/script&gt;" in dom

    shot = tmp_path / "graph.png"
    chromium(tmp_path, page, f"--screenshot={shot}")
    image = Image.open(shot).convert("RGB")
    assert image.size == (1200, 900)
    drawing = image.crop((0, 70, 960, 900))
    assert len(set(drawing.getcolors(maxcolors=1 << 24) or [])) > 50, "the drawing area is blank"
    assert pixels_near(drawing, ENTITY_ORANGE) > 200
    assert pixels_near(drawing, EPISODIC_BLUE) > 200


@needs_chromium
def test_recall_view_draws_the_hits_sized_by_score(alice: RippleMem, tmp_path: Path) -> None:
    page = tmp_path / "recall.html"
    before = {m.id: m.access_count for m in alice.list()}
    view = write_graph_html(alice, page, "Where does Lin live?", k=3)
    hits = [node for node in view.nodes if node.get("hit")]
    assert len(hits) == 3
    assert max(hits, key=lambda node: node["size"])["label"].startswith(("Alice's sister Lin", "Lin works"))
    assert {m.id: m.access_count for m in alice.list()} == before, "a picture must not count as an access"

    nodes, _, dom = rendered(tmp_path, page)
    assert nodes == len(view.nodes)
    assert "Recall for “Where does Lin live?” (user alice)" in dom


@needs_chromium
def test_empty_and_capped_graphs_say_so(alice: RippleMem, tmp_path: Path) -> None:
    empty = tmp_path / "bob.html"
    assert write_graph_html(alice.scope("bob"), empty).nodes == []
    nodes, _, dom = rendered(tmp_path, empty)
    assert nodes == 0 and "User bob has no memories yet." in dom

    capped = tmp_path / "capped.html"
    view = write_graph_html(alice, capped, max_nodes=5)
    shown = {node["id"] for node in view.nodes}
    assert len(shown) == 5 and view.capped and view.edges
    assert all(edge["src"] in shown and edge["dst"] in shown for edge in view.edges)
    nodes, edges, dom = rendered(tmp_path, capped)
    assert (nodes, edges) == (5, len(view.edges))
    assert f"Showing the 5 best-connected of {view.total_nodes} nodes" in dom


def test_a_users_page_holds_nothing_of_another_user(alice: RippleMem, tmp_path: Path) -> None:
    bob = alice.scope("bob")
    bob.add("Bob repairs bicycles in Turin.")
    page = tmp_path / "bob.html"
    view = write_graph_html(bob, page)
    html = page.read_text(encoding="utf-8")
    assert "Turin" in html and not any(word in html for word in ("Calvin", "Ferrari", "Miso", "Berlin"))
    assert {node["label"] for node in view.nodes if node["kind"] == "memory"} == {
        "Bob repairs bicycles in Turin."
    }


def test_viz_command_writes_the_page_and_reports_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store, out = str(tmp_path / "db"), tmp_path / "graph.html"
    for text in ALICE[:4]:
        assert main(["add", text, "--path", store, "--user", "alice", "--embedder", "hashing"]) == 0
    capsys.readouterr()

    assert main(["viz", "--path", store, "--user", "alice", "--out", str(out)]) == 0
    assert re.fullmatch(
        rf"wrote {re.escape(str(out))}: \d+ nodes and \d+ edges; open it in a browser\n",
        capsys.readouterr().out,
    )
    assert out.read_text(encoding="utf-8").startswith("<!doctype html>")

    assert (
        main(
            [
                "viz",
                "--path",
                store,
                "--user",
                "alice",
                "--out",
                str(out),
                "--query",
                "Lin",
                "-k",
                "2",
                "--json",
            ]
        )
        == 0
    )
    reported = json.loads(capsys.readouterr().out)
    assert reported["out"] == str(out) and reported["query"] == "Lin"
    assert sum(1 for node in reported["nodes"] if node["hit"]) == 2


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--out", "{tmp}/missing/graph.html"], "folder"),
        (["--out", "{tmp}"], "is a directory"),
        (["--out", "{tmp}/g.html", "--max-nodes", "0"], "max-nodes must be a positive integer"),
        (["--out", "{tmp}/g.html", "--query", "  "], "query must be a non-empty text"),
    ],
)
def test_viz_command_errors_say_what_to_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    store = str(tmp_path / "db")
    assert (
        main(["add", "Lin lives in Berlin.", "--path", store, "--user", "alice", "--embedder", "hashing"])
        == 0
    )
    capsys.readouterr()
    status = main(["viz", "--path", store, "--user", "alice", *[a.format(tmp=tmp_path) for a in extra]])
    assert status == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "g.html").exists()


def test_viz_needs_an_existing_store(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["viz", "--path", str(tmp_path / "nowhere"), "--out", str(tmp_path / "g.html")])
    assert status == 2
    assert "no RippleMem store at" in capsys.readouterr().err
    assert not (tmp_path / "nowhere").exists()
