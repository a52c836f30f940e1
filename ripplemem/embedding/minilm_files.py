"""all-MiniLM-L6-v2's upstream files: which ones RippleMem ships and their sha256 (revision 1110a243).

Standard library only: the wheel build hook (hatch_build.py) loads this file by path to check and
copy the files into the wheel, and the ONNX build checks them again before it uses them.
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

# Everything of the sentence-transformers folder that is shipped: the checked files, the small
# configs sentence-transformers and the tokenizer read, and upstream's Apache-2.0 licence and notice.
SHIPPED_FILES = (
    *MINILM_SHA256,
    "tokenizer_config.json",
    "special_tokens_map.json",
    "sentence_bert_config.json",
    "config_sentence_transformers.json",
    "modules.json",
    "1_Pooling/config.json",
    "LICENSE",
    "NOTICE",
)


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
