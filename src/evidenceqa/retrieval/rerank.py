"""The second stage: a cross-encoder reads the question and each top candidate together.

First-stage scores come from the question and the passage apart (BM25 terms, one vector each); a
cross-encoder attends across both, so it can tell a passage that answers from one that only
shares the words. It re-scores the top `rerank_depth` fused candidates; the final score blends
its logit with the fused score (`rerank_weight`, measured by benchmarks/rerank_grid.py), so a weak
reranker cannot throw away what the first stage knew. The model is trained on the library by
`evidenceqa train-reranker` (`evidenceqa.adapt.cross_encoder`), exported here to int8 ONNX and
run with ONNX Runtime: no torch at search time. Weights are never committed.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from evidenceqa.embeddings.base import EmbeddingError, force_offline
from evidenceqa.embeddings.onnx import (
    INT8_FILE,
    export_bert,
    load_session,
    quantise,
    read_manifest,
    write_manifest,
)
from evidenceqa.index.base import Hit

FP32_FILE = "model.onnx"
_TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt")


class RerankerError(ValueError):
    """A reranker folder that cannot be used; the message names it and says what to run. A ValueError,
    as for any other setting that names something unusable, so the CLI reports it on one line."""


def export_cross_encoder(model_dir: Path, out_dir: Path, max_length: int) -> Path:
    """A transformers sequence-classification folder (one logit) as int8 ONNX in `out_dir`."""
    force_offline()
    from transformers import AutoModelForSequenceClassification

    model = AutoModelForSequenceClassification.from_pretrained(
        str(model_dir), local_files_only=True, attn_implementation="eager"
    ).eval()

    out_dir.mkdir(parents=True, exist_ok=True)
    export_bert(model, "logits", "logit", {0: "batch"}, out_dir / FP32_FILE)
    quantise(out_dir / FP32_FILE, out_dir / INT8_FILE)
    (out_dir / FP32_FILE).unlink()
    for name in _TOKENIZER_FILES:
        if (model_dir / name).is_file():
            shutil.copy2(model_dir / name, out_dir / name)
    (out_dir / "reranker.json").write_text(json.dumps({"max_length": max_length}), encoding="utf-8")
    write_manifest(out_dir, f"cross-encoder:{model_dir.name}")
    return out_dir


class CrossEncoder:
    """Scores (question, passage) pairs with an exported reranker folder: higher is more relevant."""

    def __init__(self, folder: Path, threads: int | None = None) -> None:
        folder = Path(folder)
        if read_manifest(folder) is None or not (folder / "reranker.json").is_file():
            raise RerankerError(
                f"{folder} holds no trained reranker: build one with `make reranker` "
                "(evidenceqa train-reranker --out FOLDER), or set rerank = off"
            )
        from tokenizers import Tokenizer

        max_length = int(json.loads((folder / "reranker.json").read_text(encoding="utf-8"))["max_length"])
        self.folder = folder
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        # The longer side is cut first, so a question longer than the window is cut too instead of
        # failing (a passage alone was cut before: a 2,000-character question made search fail).
        self.tokenizer.enable_truncation(max_length=max_length, strategy="longest_first")
        self.tokenizer.enable_padding()
        try:
            self.session = load_session(folder / INT8_FILE, threads)
        except EmbeddingError as exc:
            raise RerankerError(str(exc)) from None

    def score(self, question: str, passages: Sequence[str]) -> np.ndarray:
        if not passages:
            return np.zeros(0, dtype=np.float32)
        encodings = self.tokenizer.encode_batch([(question, p) for p in passages])
        feed = {
            "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
            "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
            "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64),
        }
        (logits,) = self.session.run(["logit"], feed)
        return np.asarray(logits, dtype=np.float32).reshape(-1)


def blend(hits: Sequence[Hit], logits: np.ndarray, weight: float) -> list[Hit]:
    """The re-scored top: (1 − weight) · fused score + weight · logit, both min-max normalised over
    the re-scored candidates; weight 0 keeps the first-stage order exactly."""
    if not hits or weight == 0.0:
        return list(hits)
    fused = _min_max(np.array([h.score for h in hits], dtype=np.float64))
    model = _min_max(np.asarray(logits, dtype=np.float64))
    blended = (1.0 - weight) * fused + weight * model
    order = sorted(range(len(hits)), key=lambda i: (-blended[i], i))  # ties keep the first-stage order
    result = []
    for i in order:
        hit = hits[i]
        result.append(Hit(hit.chunk_id, hit.doc_id, float(blended[i]), dict(hit.ranks)))
    return result


def _min_max(values: np.ndarray) -> np.ndarray:
    low, high = float(values.min()), float(values.max())
    return np.ones_like(values) if high == low else (values - low) / (high - low)
