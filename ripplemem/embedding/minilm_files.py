"""all-MiniLM-L6-v2's upstream files, the ONNX graph built from them, what a wheel ships, and sha256s.

Standard library only: the wheel build hook (hatch_build.py) loads this file by path to check the
upstream files (revision 1110a243), build model.onnx from them and check it, and the first-use ONNX
build of a source checkout checks the upstream files again before it uses them.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

# Where a ripplemem wheel holds them, inside the ripplemem package.
BUNDLED_FOLDER = "data/all-MiniLM-L6-v2"

MINILM_SHA256 = {
    "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    "config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
    "vocab.txt": "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3",
}

# The graph ripplemem.embedding.minilm_graph builds from model.safetensors (opset 18): the build is
# deterministic, so a wheel's model.onnx must have this sha256 (hatch_build.py checks it).
ONNX_FILE = "model.onnx"
ONNX_SHA256 = "0e64c760f3d620bf95b884a98c8d08ccb30c50368532697b47d251e3e2f71874"

# What of the sentence-transformers folder a wheel ships beside the built model.onnx (not the
# safetensors it was built from): the tokenizer, the small configs sentence-transformers and the
# tokenizer read, and upstream's Apache-2.0 licence and notice.
COPIED_FILES = (
    "tokenizer.json",
    "config.json",
    "vocab.txt",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "sentence_bert_config.json",
    "config_sentence_transformers.json",
    "modules.json",
    "1_Pooling/config.json",
    "LICENSE",
    "NOTICE",
)
SHIPPED_FILES = (ONNX_FILE, *COPIED_FILES)


def sha256_of(path: Path) -> str:
    """The file's sha256, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def mismatched_file(folder: Path) -> tuple[str, str] | None:
    """The first checked file in folder that is not upstream's, with its sha256; None if all are."""
    for name, expected in MINILM_SHA256.items():
        actual = sha256_of(folder / name)
        if actual != expected:
            return name, actual
    return None
