"""The MiniLM ONNX graph built without torch gives the vectors of the torch.onnx export it replaces."""

from __future__ import annotations

import itertools
import json
import warnings
from pathlib import Path

import numpy as np
import pytest

from ripplemem.embedding.embedders import minilm_weights_dir
from ripplemem.embedding.minilm_graph import INPUTS, OUTPUT, build_bert_graph, read_bert_shape
from ripplemem.embedding.onnx import (
    MANIFEST_FILE,
    SIDE_FILES,
    OnnxMiniLMEmbedder,
    check_minilm_files,
    export_minilm_onnx,
)
from ripplemem.errors import EmbedderOutputError, InvalidInputError

WEIGHTS = minilm_weights_dir()
pytestmark = pytest.mark.skipif(WEIGHTS is None, reason="no all-MiniLM-L6-v2 weights installed")

SUBJECTS = ["The user", "My sister Lin", "Our team lead", "Bob's daughter", "The new intern", "Grandma"]
ACTIONS = [
    "prefers green tea",
    "booked a flight to Berlin",
    "is allergic to peanuts",
    "started reading The Three-Body Problem",
    "moved to Kreuzberg last autumn",
    "has a physiotherapy appointment",
    "renewed the passport",
    "runs five kilometres",
]
WHEN = [
    "in the morning.",
    "next week.",
    "since 2024-03-15.",
    "every Friday at 5 pm?",
    "— or so she said!",
    "(see the ticket #4521)",
    "",
]
OTHERS = [
    "",
    "hi",
    "   ",
    "OK!!! ??? ... ---",
    "Email: alice@example.com, phone +1 (555) 010-9999",
    "Café, naïve, résumé — accented words.",
    "def spread(graph, seeds): return graph @ seeds",
    "用户喜欢早上喝绿茶。",
    "昨天他在北京预订了去柏林的航班。",
    "I met 李雷 at the 北京 office.",
    "Das Wetter in München ist heute sonnig.",
    "¿Dónde está la estación de tren?",
    " ".join(f"On day {i} the assistant noted chapter {i} of the design." for i in range(40)),
]


def sentences() -> list[str]:
    """336 templated sentences of varied length plus odd inputs: empty, CJK, code, over 256 tokens."""
    made = [" ".join(parts).strip() for parts in itertools.product(SUBJECTS, ACTIONS, WHEN)]
    return made + OTHERS


def torch_export(target: Path, source: Path) -> None:
    """The export this module replaces: Hugging Face's BertModel through torch.onnx.export (opset 18)."""
    torch = pytest.importorskip("torch", reason="the reference export needs torch ('ripplemem[torch]')")
    transformers = pytest.importorskip("transformers")
    from tokenizers import Tokenizer

    model = transformers.AutoModel.from_pretrained(str(source), local_files_only=True).eval()

    class TokenEmbeddings(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.bert = model

        def forward(self, input_ids, attention_mask, token_type_ids):  # noqa: ANN001, ANN201
            return self.bert(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state

    tokenizer = Tokenizer.from_file(str(source / "tokenizer.json"))
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
    sample = tokenizer.encode_batch(["a short one", "a somewhat longer sample sentence for tracing"])
    args = tuple(torch.tensor([getattr(e, a) for e in sample]) for a in ("ids", "attention_mask", "type_ids"))
    target.mkdir(parents=True)
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            TokenEmbeddings(),
            args,
            str(target / "model.onnx"),
            input_names=list(INPUTS),
            output_names=[OUTPUT],
            opset_version=18,
            dynamo=False,
            do_constant_folding=True,
            dynamic_axes={n: {0: "batch", 1: "sequence"} for n in (*INPUTS, OUTPUT)},
        )
    for name in SIDE_FILES:
        if (source / name).is_file():
            (target / name).write_bytes((source / name).read_bytes())


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """model.onnx built from the installed weights, without torch."""
    return export_minilm_onnx(tmp_path_factory.mktemp("built") / "all-MiniLM-L6-v2", quiet=True)


@pytest.mark.slow
def test_built_graph_matches_the_torch_export(built, tmp_path):
    assert WEIGHTS is not None
    torch_export(tmp_path / "torch", WEIGHTS)
    texts = sentences()
    assert len(texts) > 300
    ours = OnnxMiniLMEmbedder(built, export_if_missing=False).embed_documents(texts)
    reference = OnnxMiniLMEmbedder(tmp_path / "torch", export_if_missing=False).embed_documents(texts)
    cosines = np.sum(ours * reference, axis=1)
    assert cosines.min() >= 0.9999, texts[int(cosines.argmin())]
    # The ranking a user sees is the same: each sentence's nearest neighbour agrees.
    np.fill_diagonal(sims_ours := ours @ ours.T, -1)
    np.fill_diagonal(sims_ref := reference @ reference.T, -1)
    assert (sims_ours.argmax(axis=1) == sims_ref.argmax(axis=1)).mean() > 0.99


def test_build_records_its_source_and_needs_no_torch(built):
    manifest = json.loads((built / MANIFEST_FILE).read_text())
    assert manifest["builder"] == "ripplemem.embedding.minilm_graph" and manifest["source"] == str(WEIGHTS)
    assert "torch" not in manifest
    assert {p.name for p in built.iterdir()} >= {"model.onnx", "tokenizer.json", "vocab.txt"}


def test_a_model_that_is_not_bert_is_refused(tmp_path):
    config = json.loads((WEIGHTS / "config.json").read_text())  # type: ignore[operator]
    (tmp_path / "config.json").write_text(json.dumps({**config, "hidden_act": "relu"}))
    with pytest.raises(InvalidInputError, match="hidden_act is 'relu'"):
        read_bert_shape(tmp_path)
    (tmp_path / "config.json").write_text(json.dumps(config))
    with pytest.raises(InvalidInputError, match="no model.safetensors"):
        build_bert_graph(tmp_path)


def test_the_bundled_weights_are_checked_byte_for_byte(tmp_path, monkeypatch):
    # The weights come from a third-party package: a changed file is refused before anything is built.
    bundled = minilm_weights_dir()
    assert bundled is not None
    check_minilm_files(bundled)
    copy = tmp_path / "weights"
    copy.mkdir()
    for item in bundled.iterdir():
        if item.is_file():
            (copy / item.name).write_bytes(item.read_bytes())
    data = bytearray((copy / "model.safetensors").read_bytes())
    data[-1] ^= 0xFF
    (copy / "model.safetensors").write_bytes(bytes(data))
    monkeypatch.setattr("ripplemem.embedding.onnx.minilm_weights_dir", lambda: copy)
    with pytest.raises(EmbedderOutputError, match="model.safetensors is not the all-MiniLM-L6-v2 file"):
        export_minilm_onnx(tmp_path / "out", quiet=True)
    assert not (tmp_path / "out" / "model.onnx").exists()
