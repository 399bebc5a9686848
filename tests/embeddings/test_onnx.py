from __future__ import annotations

import logging
import shutil
import time
from pathlib import Path

import numpy as np
import pytest

from evidenceqa.embeddings import (
    EmbeddingError,
    OnnxEmbedder,
    SentenceTransformerEmbedder,
    export_onnx,
    minilm_path,
)
from evidenceqa.embeddings.onnx import FP32_FILE, INT8_FILE, MANIFEST_FILE, quantise
from tests.embeddings.protocol import assert_embedder


@pytest.fixture(scope="module")
def onnx_embedder(onnx_dir: Path) -> OnnxEmbedder:
    return OnnxEmbedder(onnx_dir, batch_size=8)


def test_export_writes_models_and_tokenizer(onnx_dir: Path) -> None:
    for name in (FP32_FILE, INT8_FILE, MANIFEST_FILE, "tokenizer.json", "sentence_bert_config.json"):
        assert (onnx_dir / name).is_file(), name
    # int8 weights: markedly smaller than fp32.
    assert (onnx_dir / INT8_FILE).stat().st_size < 0.7 * (onnx_dir / FP32_FILE).stat().st_size
    assert not list(onnx_dir.parent.glob(".minilm-onnx.*")), "the staging folder was left behind"


def test_quantising_logs_nothing(onnx_dir: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    # ONNX Runtime's advice to pre-process shapes would greet every new user's first ingest.
    with caplog.at_level(logging.INFO):
        quantise(onnx_dir / FP32_FILE, tmp_path / INT8_FILE)
    assert (tmp_path / INT8_FILE).stat().st_size > 0
    assert not [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


def test_second_export_is_skipped(onnx_dir: Path) -> None:
    before = (onnx_dir / INT8_FILE).stat().st_mtime_ns
    start = time.perf_counter()
    assert export_onnx(minilm_path(), onnx_dir) == onnx_dir
    assert time.perf_counter() - start < 2
    assert (onnx_dir / INT8_FILE).stat().st_mtime_ns == before


def test_int8_matches_sentence_transformers(
    onnx_embedder: OnnxEmbedder, st_embedder: SentenceTransformerEmbedder, paragraphs: list[str]
) -> None:
    # The paragraphs run from 5 words to past the 256-token window, so truncation is compared too.
    cosines = (onnx_embedder.embed(paragraphs) * st_embedder.embed(paragraphs)).sum(axis=1)
    assert cosines.min() >= 0.98
    assert cosines.mean() >= 0.99


def test_shape_norm_and_protocol(onnx_embedder: OnnxEmbedder, paragraphs: list[str]) -> None:
    assert_embedder(onnx_embedder)
    assert onnx_embedder.dim == 384
    assert onnx_embedder.model_id.startswith("onnx-int8:st:model@")
    vectors = onnx_embedder.embed(paragraphs)
    assert vectors.shape == (len(paragraphs), 384)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert onnx_embedder.embed([]).shape == (0, 384)


def test_query_is_in_the_same_space(onnx_embedder: OnnxEmbedder) -> None:
    texts = ["surgical site infection after hip replacement", "wound infection following arthroplasty"]
    # Dynamic quantisation scales activations per batch, so a text alone differs slightly from in a batch.
    assert onnx_embedder.embed_query(texts[0]) @ onnx_embedder.embed(texts)[0] > 0.99


def test_incomplete_export_is_refused(onnx_dir: Path, tmp_path: Path) -> None:
    shutil.copy(onnx_dir / MANIFEST_FILE, tmp_path / MANIFEST_FILE)
    with pytest.raises(EmbeddingError, match="no complete ONNX export"):
        OnnxEmbedder(tmp_path)


def test_interrupted_export_is_redone(tmp_path: Path, onnx_embedder: OnnxEmbedder) -> None:
    out = tmp_path / "minilm-onnx"
    out.mkdir()
    (out / INT8_FILE).write_bytes(b"half-written")  # no manifest: an export that never finished
    export_onnx(minilm_path(), out)
    redone = OnnxEmbedder(out)
    text = ["perioperative beta blockers"]
    assert redone.embed(text)[0] @ onnx_embedder.embed(text)[0] > 0.999


def test_a_shorter_token_limit_cuts_only_long_texts_and_names_itself(
    onnx_dir: Path, onnx_embedder: OnnxEmbedder, paragraphs: list[str]
) -> None:
    short, long = "chlorhexidine on mucous membranes", max(paragraphs, key=len)  # past 256 tokens
    cut = OnnxEmbedder(onnx_dir, batch_size=8, max_tokens=128)
    assert cut.model_id == f"{onnx_embedder.model_id}:128-tokens"  # its vectors never share a cache key
    assert cut.embed_query(short) @ onnx_embedder.embed_query(short) > 0.9999
    assert cut.embed_query(long) @ onnx_embedder.embed_query(long) < 0.99
    beyond = OnnxEmbedder(onnx_dir, max_tokens=10_000)  # the model's own limit is the most it takes
    assert beyond.max_tokens == onnx_embedder.max_tokens == 256 and beyond.model_id == onnx_embedder.model_id
