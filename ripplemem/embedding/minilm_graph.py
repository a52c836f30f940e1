"""A BERT encoder (all-MiniLM-L6-v2) as an ONNX graph, built from its safetensors weights without torch.

The graph is written with ``onnx.helper`` from the weights of a sentence-transformers model folder
(config.json + model.safetensors): embeddings, LayerNorm, self-attention and a GELU feed-forward
per layer, as Hugging Face's ``BertModel`` computes them. It takes ``input_ids``, ``attention_mask``
and ``token_type_ids`` and returns ``last_hidden_state``, like a ``torch.onnx.export`` of that model,
so the embedder pools and normalises it the same way (mean pooling, in numpy).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ripplemem.errors import InvalidInputError, MissingDependencyError

INPUTS = ("input_ids", "attention_mask", "token_type_ids")
OUTPUT = "last_hidden_state"
# IR version 8 is the newest that onnxruntime >= 1.14 reads; opset 18 has LayerNormalization.
IR_VERSION = 8
DEFAULT_OPSET = 18


@dataclass(frozen=True)
class BertShape:
    """The sizes of a BERT encoder, read from its config.json."""

    hidden: int
    heads: int
    layers: int
    intermediate: int
    eps: float

    @property
    def head_size(self) -> int:
        """Width of one attention head."""
        return self.hidden // self.heads


def read_bert_shape(model_dir: Path) -> BertShape:
    """The encoder sizes in model_dir/config.json; refuses models this graph would compute wrongly."""
    config_file = model_dir / "config.json"
    try:
        config = json.loads(config_file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InvalidInputError(f"cannot read the model config {config_file}: {exc}") from exc
    expected = {"model_type": "bert", "hidden_act": "gelu", "position_embedding_type": "absolute"}
    for key, value in expected.items():
        if config.get(key, value) != value:
            raise InvalidInputError(
                f"{config_file}: {key} is {config.get(key)!r}; the ONNX builder handles only {value!r}"
            )
    shape = BertShape(
        hidden=int(config["hidden_size"]),
        heads=int(config["num_attention_heads"]),
        layers=int(config["num_hidden_layers"]),
        intermediate=int(config["intermediate_size"]),
        eps=float(config.get("layer_norm_eps", 1e-12)),
    )
    if shape.hidden % shape.heads:
        raise InvalidInputError(
            f"{config_file}: hidden_size {shape.hidden} is not a multiple of "
            f"num_attention_heads {shape.heads}"
        )
    return shape


def _onnx() -> Any:
    try:
        import onnx
    except ImportError as exc:
        raise MissingDependencyError(
            "Building the MiniLM ONNX model needs the onnx package: pip install 'onnx>=1.17,<2' "
            "(in ripplemem's dev extra; a ripplemem wheel ships the built model and needs none)."
        ) from exc
    return onnx


def _load_weights(model_dir: Path) -> dict[str, np.ndarray]:
    weights_file = model_dir / "model.safetensors"
    try:
        from safetensors.numpy import load_file
    except ImportError as exc:
        raise MissingDependencyError(
            "Reading the MiniLM weights needs safetensors: pip install 'safetensors>=0.4' "
            "(in ripplemem's dev extra; a ripplemem wheel ships the built model and needs none)."
        ) from exc
    if not weights_file.is_file():
        raise InvalidInputError(f"no model.safetensors in {model_dir}")
    weights = load_file(str(weights_file))
    # Some exports prefix every tensor with the model class ("bert.").
    return {name.removeprefix("bert."): array for name, array in weights.items()}


class _GraphWriter:
    """Collects nodes and initializers; every node gets a fresh output name."""

    def __init__(self, onnx: Any, weights: dict[str, np.ndarray]) -> None:
        self.helper = onnx.helper
        self.numpy_helper = onnx.numpy_helper
        self.weights = weights
        self.nodes: list[Any] = []
        self.initializers: list[Any] = []
        self._count = 0

    def const(self, name: str, value: Any, dtype: Any = np.float32) -> str:
        """Add a constant tensor named name; returns the name."""
        self.initializers.append(self.numpy_helper.from_array(np.asarray(value, dtype=dtype), name))
        return name

    def weight(self, name: str, transpose: bool = False) -> str:
        """Add the named model weight (transposed for a MatMul when asked); returns its name."""
        if name not in self.weights:
            raise InvalidInputError(f"model.safetensors has no tensor {name!r}; is it a BERT model?")
        array = self.weights[name].astype(np.float32)
        return self.const(name, np.ascontiguousarray(array.T) if transpose else array)

    def op(self, op_type: str, *inputs: str, output: str | None = None, **attrs: Any) -> str:
        """Append one node; returns its output name."""
        self._count += 1
        name = output or f"{op_type.lower()}_{self._count}"
        node = self.helper.make_node(op_type, list(inputs), [name], name=f"n{self._count}", **attrs)
        self.nodes.append(node)
        return name

    def linear(self, x: str, prefix: str) -> str:
        """x @ W.T + b for the dense layer named prefix."""
        return self.op(
            "Add",
            self.op("MatMul", x, self.weight(f"{prefix}.weight", transpose=True)),
            self.weight(f"{prefix}.bias"),
        )

    def layer_norm(self, x: str, prefix: str, eps: float) -> str:
        """LayerNorm over the last axis with the weights named prefix."""
        scale, shift = self.weight(f"{prefix}.weight"), self.weight(f"{prefix}.bias")
        return self.op("LayerNormalization", x, scale, shift, axis=-1, epsilon=eps)


def _embeddings(g: _GraphWriter, shape: BertShape) -> str:
    """Word + token-type + position embeddings, then LayerNorm."""
    seq_len = g.op("Gather", g.op("Shape", "input_ids"), g.const("one_i64", 1, np.int64), axis=0)
    positions = g.op("Range", g.const("zero_i64", 0, np.int64), seq_len, "one_i64")
    summed = g.op(
        "Add",
        g.op(
            "Add",
            g.op("Gather", g.weight("embeddings.word_embeddings.weight"), "input_ids"),
            g.op("Gather", g.weight("embeddings.token_type_embeddings.weight"), "token_type_ids"),
        ),
        g.op("Gather", g.weight("embeddings.position_embeddings.weight"), positions),
    )
    return g.layer_norm(summed, "embeddings.LayerNorm", shape.eps)


def _mask_bias(g: _GraphWriter) -> str:
    """(1 - mask) * float32 min, shaped (batch, 1, 1, sequence): padding gets no attention."""
    mask = g.op("Unsqueeze", g.op("Cast", "attention_mask", to=1), g.const("mask_axes", [1, 2], np.int64))
    lowest = g.const("f32_lowest", np.finfo(np.float32).min)
    return g.op("Mul", g.op("Sub", g.const("one_f32", 1.0), mask), lowest)


def _heads(g: _GraphWriter, x: str, perm: list[int]) -> str:
    """(batch, seq, hidden) -> per-head layout given by perm over (batch, seq, heads, head_size)."""
    return g.op("Transpose", g.op("Reshape", x, "head_shape"), perm=perm)


def _layer(g: _GraphWriter, x: str, bias: str, i: int, shape: BertShape) -> str:
    """One encoder layer: self-attention and the GELU feed-forward, each with residual + LayerNorm."""
    p = f"encoder.layer.{i}"
    query = _heads(g, g.linear(x, f"{p}.attention.self.query"), [0, 2, 1, 3])
    key_t = _heads(g, g.linear(x, f"{p}.attention.self.key"), [0, 2, 3, 1])
    value = _heads(g, g.linear(x, f"{p}.attention.self.value"), [0, 2, 1, 3])
    scores = g.op("Add", g.op("Mul", g.op("MatMul", query, key_t), "attention_scale"), bias)
    context = g.op("MatMul", g.op("Softmax", scores, axis=-1), value)
    merged = g.op("Reshape", g.op("Transpose", context, perm=[0, 2, 1, 3]), "hidden_shape")
    attended = g.op("Add", g.linear(merged, f"{p}.attention.output.dense"), x)
    x = g.layer_norm(attended, f"{p}.attention.output.LayerNorm", shape.eps)
    hidden = g.linear(x, f"{p}.intermediate.dense")
    erf = g.op("Erf", g.op("Div", hidden, "sqrt_two"))  # exact GELU: x * (1 + erf(x / sqrt 2)) / 2
    gelu = g.op("Mul", g.op("Mul", hidden, g.op("Add", erf, "one_f32")), "half")
    out = g.op("Add", g.linear(gelu, f"{p}.output.dense"), x)
    return g.layer_norm(out, f"{p}.output.LayerNorm", shape.eps)


def build_bert_graph(model_dir: str | Path, opset: int = DEFAULT_OPSET) -> Any:
    """The ONNX ModelProto of the BERT encoder whose config.json and model.safetensors are in model_dir."""
    if opset < 17:
        raise InvalidInputError(f"opset must be >= 17 (LayerNormalization), got {opset}")
    onnx = _onnx()
    source = Path(model_dir)
    shape = read_bert_shape(source)
    g = _GraphWriter(onnx, _load_weights(source))
    g.const("head_shape", [0, 0, shape.heads, shape.head_size], np.int64)
    g.const("hidden_shape", [0, 0, shape.hidden], np.int64)
    g.const("attention_scale", 1.0 / math.sqrt(shape.head_size))
    g.const("sqrt_two", math.sqrt(2.0))
    g.const("half", 0.5)
    bias = _mask_bias(g)
    x = _embeddings(g, shape)
    for i in range(shape.layers):
        x = _layer(g, x, bias, i, shape)
    g.op("Identity", x, output=OUTPUT)

    helper = onnx.helper
    inputs = [
        helper.make_tensor_value_info(name, onnx.TensorProto.INT64, ["batch", "sequence"]) for name in INPUTS
    ]
    output = helper.make_tensor_value_info(
        OUTPUT, onnx.TensorProto.FLOAT, ["batch", "sequence", shape.hidden]
    )
    graph = helper.make_graph(g.nodes, "bert_encoder", inputs, [output], initializer=g.initializers)
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", opset)],
        producer_name="ripplemem.embedding.minilm_graph",
    )
    model.ir_version = IR_VERSION  # onnxruntime checks the graph when it loads it
    return model
