"""MiniLM as int8 ONNX Runtime: the same vectors as sentence-transformers (cosine ≈ 0.99), no torch at all.

`export_onnx` turns a sentence-transformers folder into model.onnx (fp32: written from the weights by
`bert_graph` for BERT models such as MiniLM, else traced through torch) and model.int8.onnx once;
`OnnxEmbedder` runs the int8 model with the model's own tokenizer, mean pooling and L2 normalisation.
"""

from __future__ import annotations

import json
import logging
import shutil
import tempfile
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from evidenceqa.embeddings.base import (
    EmbeddingError,
    batched_by_length,
    force_offline,
    l2_normalise,
    no_texts,
    one_line,
    token_window,
)
from evidenceqa.embeddings.bert_graph import INPUTS, OPSET, OUTPUT, unwritable, write_bert_graph
from evidenceqa.embeddings.sentence_transformers import require_st_folder, st_model_id
from evidenceqa.registry import MissingExtra

MINILM_ONNX_ID = "minilm-onnx-int8:all-MiniLM-L6-v2"
FP32_FILE = "model.onnx"
INT8_FILE = "model.int8.onnx"
# Written last: its presence (with matching sizes) is what makes an export complete.
MANIFEST_FILE = "export.json"
# Everything the embedder needs besides the graph: tokenizer, and the ST max_seq_length.
_COPIED_FILES = (
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "vocab.txt",
    "config.json",
    "sentence_bert_config.json",
)
# sentence-transformers' default when sentence_bert_config.json does not say.
_DEFAULT_MAX_LENGTH = 256
# The execution provider every evidenceqa ONNX session asks for (the embedder and the reranker).
PROVIDER = "CPUExecutionProvider"


def export_onnx(model_dir: Path, out_dir: Path) -> Path:
    """Exports and int8-quantises a sentence-transformers model into `out_dir`, unless already there."""
    model_dir = Path(model_dir).expanduser().resolve()
    out_dir = Path(out_dir)
    require_st_folder(model_dir)
    source = st_model_id(model_dir)
    if _export_is_valid(out_dir, source):
        return out_dir
    _require_mean_pooling(model_dir)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    # Built beside the target and renamed into place, so an interrupted export never looks complete.
    staging = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.", dir=out_dir.parent))
    try:
        _export_fp32(model_dir, staging / FP32_FILE)
        quantise(staging / FP32_FILE, staging / INT8_FILE)
        for name in _COPIED_FILES:
            if (model_dir / name).is_file():
                shutil.copy2(model_dir / name, staging / name)
        write_manifest(staging, source)
        shutil.rmtree(out_dir, ignore_errors=True)
        staging.rename(out_dir)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return out_dir


class OnnxEmbedder:
    # Texts per ONNX Runtime run when the settings do not say. Small batches were the fastest on every
    # CPU measured, with VNNI and with AVX2 alone (the working set stays in cache; batch rows of
    # docs/performance.md's embedding table), as close to fp32 as large ones. (int8 activations are
    # scaled per batch, so a text's vector moves a little with its batch mates at any size.)
    BATCH_SIZE = 8

    def __init__(
        self,
        folder: Path,
        batch_size: int | None = None,
        threads: int | None = None,
        model_id: str | None = None,
        max_tokens: int | None = None,
        graph: str = INT8_FILE,
    ) -> None:
        """`max_tokens` truncates texts shorter than the model's own limit (faster, other vectors: the
        model id says so, so the embedding cache never mixes the two). `graph` FP32_FILE runs the
        unquantised export (benchmarks measure it)."""
        folder = Path(folder)
        manifest = read_manifest(folder)
        if manifest is None:
            raise EmbeddingError(f"{folder} holds no complete ONNX export (run export_onnx first)")
        own = _max_length(folder)
        model_id = model_id or f"onnx-{'int8' if graph == INT8_FILE else 'fp32'}:{manifest['source']}"
        self.max_tokens, self.model_id = token_window(model_id, max_tokens, own)
        self.batch_size = batch_size or self.BATCH_SIZE
        self.tokenizer = _load_tokenizer(folder, self.max_tokens)
        self.session = load_session(folder / graph, threads)
        self.dim = int(self.session.get_outputs()[0].shape[-1])

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return no_texts(self.dim)
        return batched_by_length(texts, self.batch_size, self._embed_batch)

    def embed_query(self, text: str) -> np.ndarray:
        # MiniLM has no query prefix: a query is embedded like any other text.
        return self._embed_batch([text])[0]

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        encodings = self.tokenizer.encode_batch(texts)
        feed = {
            "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
            "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
            "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64),
        }
        (hidden,) = self.session.run([OUTPUT], feed)
        return l2_normalise(_mean_pool(hidden, feed["attention_mask"]))


def _mean_pool(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Average of the real tokens' vectors (padding excluded), as sentence-transformers' Pooling does."""
    weights = mask[:, :, None].astype(np.float32)
    return (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)


def _load_tokenizer(folder: Path, max_tokens: int) -> Any:
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    # tokenizer.json ships with fixed 128-token padding/truncation; sentence-transformers overrides both.
    tokenizer.enable_truncation(max_length=max_tokens)
    padding = tokenizer.padding or {}
    tokenizer.enable_padding(pad_id=padding.get("pad_id", 0), pad_token=padding.get("pad_token", "[PAD]"))
    return tokenizer


def _max_length(folder: Path) -> int:
    config = folder / "sentence_bert_config.json"
    if not config.is_file():
        return _DEFAULT_MAX_LENGTH
    return int(json.loads(config.read_text()).get("max_seq_length", _DEFAULT_MAX_LENGTH))


def load_session(model_file: Path, threads: int | None) -> Any:
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads or 0  # 0: ONNX Runtime picks one thread per physical core
    try:
        return onnxruntime.InferenceSession(str(model_file), options, providers=[PROVIDER])
    except Exception as e:  # a corrupt or foreign file: say which one
        raise EmbeddingError(f"cannot load the ONNX model {model_file}: {one_line(e)}") from e


def _require_mean_pooling(model_dir: Path) -> None:
    """OnnxEmbedder pools by mean; a model that pools otherwise would silently give other vectors."""
    pooling = model_dir / "1_Pooling" / "config.json"
    # sentence-transformers < 6 writes pooling_mode_mean_tokens: true; 6 writes pooling_mode: "mean".
    config = json.loads(pooling.read_text()) if pooling.is_file() else {}
    if config and not (config.get("pooling_mode_mean_tokens") or config.get("pooling_mode") == "mean"):
        raise EmbeddingError(
            f"{model_dir} does not use mean pooling; only mean-pooling models can be exported"
        )


def _export_fp32(model_dir: Path, out_file: Path) -> None:
    """Written from the weights when `bert_graph` covers the model (MiniLM: no torch); any other
    architecture is traced through torch, as before the writer existed."""
    reason = unwritable(model_dir)
    if reason is None:
        write_bert_graph(model_dir, out_file)
        return
    force_offline()
    try:
        from transformers import AutoModel
    except ModuleNotFoundError as e:
        raise MissingExtra(f"exporting {model_dir} ({reason})", "torch", e.name) from None
    # Eager attention traces to plain MatMul/Softmax, which the classic exporter and the quantiser handle.
    model = AutoModel.from_pretrained(model_dir, local_files_only=True, attn_implementation="eager").eval()
    export_bert(model, "last_hidden_state", OUTPUT, {0: "batch", 1: "sequence"}, out_file)


def export_bert(model: Any, attribute: str, output: str, output_axes: dict[int, str], out_file: Path) -> None:
    """A transformers encoder as an fp32 ONNX graph through torch.onnx (the `torch` extra): inputs
    exactly INPUTS (dynamic batch and length), one output `output`, the model output's `attribute`
    (last_hidden_state, logits). For the reranker, which torch has just trained, and for embedders
    that `bert_graph` does not write."""
    import torch

    class Graph(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            outputs = self.model(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            )
            return getattr(outputs, attribute)

    # A text pair, the second row padded, so the traced graph cannot specialise to an all-ones
    # attention mask or to one segment.
    ids = torch.tensor([[101, 7592, 102, 2088, 102], [101, 7592, 102, 2088, 0]])
    dummy = (ids, (ids != 0).long(), torch.tensor([[0, 0, 0, 1, 1], [0, 0, 0, 1, 0]]))
    axes = {name: {0: "batch", 1: "sequence"} for name in INPUTS} | {output: output_axes}
    # The classic (TorchScript) exporter: the dynamo one needs onnxscript, which is not installed.
    # Its deprecation and tracer warnings are expected; each export is checked against torch in tests.
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(Graph(), dummy, str(out_file), input_names=list(INPUTS), output_names=[output],
                          dynamic_axes=axes, opset_version=OPSET, dynamo=False)  # fmt: skip


def quantise(fp32_file: Path, int8_file: Path, per_channel: bool = True, reduce_range: bool = False) -> None:
    """Dynamic int8 quantisation of the MatMuls. Per-channel weight scales: per-tensor ones agree far
    less with fp32 (MiniLM has outlier columns; benchmarks/embedding_speed.py measures both).
    `reduce_range` (7-bit weights) avoids the saturation of AVX2's int8 kernels without VNNI."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    with _without_preprocessing_advice():
        quantize_dynamic(
            fp32_file,
            int8_file,
            weight_type=QuantType.QInt8,
            op_types_to_quantize=["MatMul"],
            per_channel=per_channel,
            reduce_range=reduce_range,
        )


class _PreprocessingAdvice(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return "pre-processing before quantization" not in record.getMessage()


@contextmanager
def _without_preprocessing_advice() -> Iterator[None]:
    """quantize_dynamic advises shape pre-processing on the root logger, configuring it on the way
    (logging.warning). The export's vectors are measured without that step, so a user's first
    ingest shows neither the advice nor, afterwards, a root handler it did not ask for."""
    root, advice, holder = logging.getLogger(), _PreprocessingAdvice(), logging.NullHandler()
    root.addFilter(advice)
    root.addHandler(holder)
    try:
        yield
    finally:
        root.removeFilter(advice)
        root.removeHandler(holder)


def write_manifest(folder: Path, source: str) -> None:
    sizes = {p.name: p.stat().st_size for p in sorted(folder.iterdir()) if p.is_file()}
    (folder / MANIFEST_FILE).write_text(json.dumps({"source": source, "files": sizes}, indent=2))


def read_manifest(folder: Path) -> dict[str, Any] | None:
    """The manifest of a complete export in `folder`, or None if any listed file is missing or truncated."""
    try:
        manifest = json.loads((folder / MANIFEST_FILE).read_text())
    except (OSError, ValueError):
        return None
    complete = all(
        (folder / name).is_file() and (folder / name).stat().st_size == size
        for name, size in manifest.get("files", {}).items()
    )
    return manifest if complete and INT8_FILE in manifest.get("files", {}) else None


def _export_is_valid(folder: Path, source: str) -> bool:
    manifest = read_manifest(folder)
    return manifest is not None and manifest.get("source") == source
