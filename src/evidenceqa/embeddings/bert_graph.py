"""A BERT encoder written as an ONNX graph straight from its safetensors weights: no torch needed.

The graph computes what transformers' BertModel computes (eager attention, erf GELU) and is laid out
so that ONNX Runtime fuses it as it fuses the torch export of the same model: the int8 model
quantised from it gives the very same vectors (tests/embeddings/test_bert_graph.py compares both).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from evidenceqa.embeddings.base import EmbeddingError, one_line

INPUTS = ("input_ids", "attention_mask", "token_type_ids")
OUTPUT = "last_hidden_state"
# LayerNormalization is a single ONNX op from opset 17, which ONNX Runtime supports.
OPSET = 17
WEIGHTS_FILE = "model.safetensors"
_FIRST_WEIGHT = "embeddings.word_embeddings.weight"


def unwritable(model_dir: Path) -> str | None:
    """Why `write_bert_graph` cannot write this model folder, or None when it can."""
    try:
        config = json.loads((model_dir / "config.json").read_text())
    except (OSError, ValueError) as e:
        return f"no readable config.json: {e}"
    # What the graph below implements; anything else would export silently different vectors.
    expected = {"model_type": "bert", "hidden_act": "gelu", "position_embedding_type": "absolute"}
    for key, value in expected.items():
        if config.get(key, value) != value:
            return f"its {key} is {config[key]!r}, not {value!r}"
    if not (model_dir / WEIGHTS_FILE).is_file():
        return f"no {WEIGHTS_FILE}"
    from safetensors import safe_open

    # A task model's encoder sits under a prefix ("bert."), which torch's loader strips and this does not.
    try:
        with safe_open(str(model_dir / WEIGHTS_FILE), framework="np") as weights:
            names = set(weights.keys())
    except Exception as e:  # a truncated or foreign file: say which one
        raise EmbeddingError(f"cannot read {model_dir / WEIGHTS_FILE}: {one_line(e)}") from e
    return None if _FIRST_WEIGHT in names else f"its weights hold no {_FIRST_WEIGHT!r}"


def write_bert_graph(model_dir: Path, out_file: Path) -> None:
    """The fp32 encoder of a BERT folder (config.json, model.safetensors) as `out_file`."""
    if reason := unwritable(model_dir):
        raise EmbeddingError(f"{model_dir} cannot be written as a BERT graph: {reason}")
    import onnx
    from safetensors.numpy import load_file

    config = json.loads((model_dir / "config.json").read_text())
    onnx.save(_Graph(load_file(model_dir / WEIGHTS_FILE), config, model_dir).model(), str(out_file))


class _Graph:
    """Nodes and initialisers, added in the order the encoder computes them."""

    def __init__(self, weights: dict[str, np.ndarray], config: dict[str, Any], source: Path) -> None:
        from onnx import helper, numpy_helper

        self.helper, self.numpy_helper = helper, numpy_helper
        self.weights, self.config, self.source = weights, config, source
        self.nodes: list[Any] = []
        self.initialisers: list[Any] = []

    def constant(self, name: str, value: Any, dtype: Any = np.float32) -> str:
        array = np.ascontiguousarray(np.asarray(value, dtype=dtype))
        self.initialisers.append(self.numpy_helper.from_array(array, name))
        return name

    def weight(self, name: str, transpose: bool = False) -> str:
        if name not in self.weights:
            raise EmbeddingError(f"{self.source / WEIGHTS_FILE} has no tensor {name!r}: not a BERT encoder")
        array = self.weights[name]
        return self.constant(name, array.T if transpose else array)

    def node(self, op: str, inputs: list[str], name: str, **attributes: Any) -> str:
        self.nodes.append(self.helper.make_node(op, inputs, [name], name=name, **attributes))
        return name

    def linear(self, x: str, prefix: str) -> str:
        product = self.node(
            "MatMul", [x, self.weight(f"{prefix}.weight", transpose=True)], f"{prefix}/matmul"
        )
        return self.node("Add", [product, self.weight(f"{prefix}.bias")], f"{prefix}/out")

    def layer_norm(self, x: str, prefix: str, name: str | None = None) -> str:
        inputs = [x, self.weight(f"{prefix}.weight"), self.weight(f"{prefix}.bias")]
        epsilon = float(self.config.get("layer_norm_eps", 1e-12))
        return self.node("LayerNormalization", inputs, name or f"{prefix}/out", axis=-1, epsilon=epsilon)

    def model(self) -> Any:
        from onnx import TensorProto, checker

        hidden, layers = int(self.config["hidden_size"]), int(self.config["num_hidden_layers"])
        heads = int(self.config["num_attention_heads"])
        x = self.embeddings()
        bias = self.padding_bias()
        # Heads are split with a fixed shape and merged with one computed at run time, as in the torch
        # export: ONNX Runtime then fuses the residual additions the same way, and int8 agrees bitwise.
        split = self.constant("split_heads", [0, 0, heads, hidden // heads], np.int64)
        batch_and_length = self.node(
            "Slice",
            [self.node("Shape", ["input_ids"], "merge/shape"), self.constant("merge/start", [0], np.int64),
             self.constant("merge/end", [2], np.int64)],
            "merge/batch_and_length",
        )  # fmt: skip
        merge = self.node("Concat", [batch_and_length, self.constant("merge/width", [hidden], np.int64)],
                          "merge_heads", axis=0)  # fmt: skip
        scale = self.constant("attention/scale", (hidden // heads) ** -0.5)
        for i in range(layers):
            last = i == layers - 1
            x = self.layer(f"encoder.layer.{i}", x, bias, split, merge, scale, OUTPUT if last else None)
        ids = [
            self.helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "sequence"]) for n in INPUTS
        ]
        output = self.helper.make_tensor_value_info(OUTPUT, TensorProto.FLOAT, ["batch", "sequence", hidden])
        graph = self.helper.make_graph(self.nodes, "bert", ids, [output], self.initialisers)
        model = self.helper.make_model(graph, opset_imports=[self.helper.make_opsetid("", OPSET)])
        checker.check_model(model)
        return model

    def embeddings(self) -> str:
        e = "embeddings"
        word = self.node("Gather", [self.weight(f"{e}.word_embeddings.weight"), "input_ids"], f"{e}/word")
        kind = self.node(
            "Gather", [self.weight(f"{e}.token_type_embeddings.weight"), "token_type_ids"], f"{e}/type"
        )
        length = self.node(
            "Slice",
            [self.node("Shape", ["input_ids"], f"{e}/shape"), self.constant(f"{e}/one", [1], np.int64),
             self.constant(f"{e}/two", [2], np.int64)],
            f"{e}/length",
        )  # fmt: skip
        # Positions 0..length-1 are the first rows of the table (a Slice, which ONNX Runtime folds).
        zero = self.constant(f"{e}/zero", [0], np.int64)
        position = self.node("Slice", [self.weight(f"{e}.position_embeddings.weight"), zero, length, zero], f"{e}/position")  # fmt: skip
        summed = self.node("Add", [self.node("Add", [word, kind], f"{e}/word_type"), position], f"{e}/sum")
        return self.layer_norm(summed, f"{e}.LayerNorm")

    def padding_bias(self) -> str:
        """The lowest float where the mask is 0, added to the attention scores (transformers' eager attention)."""
        mask = self.node("Cast", ["attention_mask"], "mask/float", to=1)  # 1: FLOAT
        padding = self.node("Sub", [self.constant("mask/one", 1.0), mask], "mask/padding")
        lowest = self.constant("mask/lowest", np.finfo(np.float32).min)
        bias = self.node("Mul", [padding, lowest], "mask/bias")
        return self.node("Unsqueeze", [bias, self.constant("mask/axes", [1, 2], np.int64)], "mask/bias4d")

    def layer(self, p: str, x: str, bias: str, split: str, merge: str, scale: str, name: str | None) -> str:
        def heads(which: str, perm: list[int]) -> str:
            y = self.node(
                "Reshape", [self.linear(x, f"{p}.attention.self.{which}"), split], f"{p}/{which}/split"
            )
            return self.node("Transpose", [y], f"{p}/{which}/heads", perm=perm)

        query, key, value = (
            heads("query", [0, 2, 1, 3]),
            heads("key", [0, 2, 3, 1]),
            heads("value", [0, 2, 1, 3]),
        )
        scores = self.node("Mul", [self.node("MatMul", [query, key], f"{p}/qk"), scale], f"{p}/scaled")
        probs = self.node("Softmax", [self.node("Add", [scores, bias], f"{p}/scores")], f"{p}/probs", axis=-1)
        context = self.node("Transpose", [self.node("MatMul", [probs, value], f"{p}/context")], f"{p}/context/t",
                            perm=[0, 2, 1, 3])  # fmt: skip
        context = self.node("Reshape", [context, merge], f"{p}/context/merged")
        attended = self.linear(context, f"{p}.attention.output.dense")
        x = self.layer_norm(
            self.node("Add", [attended, x], f"{p}/residual1"), f"{p}.attention.output.LayerNorm"
        )
        h = self.linear(x, f"{p}.intermediate.dense")
        # GELU as erf, exactly: 0.5·h·(1 + erf(h/√2)).
        erf = self.node(
            "Erf",
            [self.node("Div", [h, self.constant(f"{p}/sqrt2", np.sqrt(2.0))], f"{p}/h_sqrt2")],
            f"{p}/erf",
        )
        gelu = self.node(
            "Mul",
            [self.node("Mul", [h, self.constant(f"{p}/half", 0.5)], f"{p}/half_h"),
             self.node("Add", [erf, self.constant(f"{p}/one", 1.0)], f"{p}/erf_1")],
            f"{p}/gelu",
        )  # fmt: skip
        out = self.linear(gelu, f"{p}.output.dense")
        return self.layer_norm(self.node("Add", [out, x], f"{p}/residual2"), f"{p}.output.LayerNorm", name)
