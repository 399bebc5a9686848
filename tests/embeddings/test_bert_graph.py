"""The ONNX graph written from the weights against the torch export it replaces: same vectors, bit for bit."""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from evidenceqa.embeddings import EmbeddingError, OnnxEmbedder, export_onnx, minilm_path
from evidenceqa.embeddings.bert_graph import WEIGHTS_FILE, unwritable, write_bert_graph
from evidenceqa.embeddings.onnx import (
    FP32_FILE,
    INT8_FILE,
    MANIFEST_FILE,
    export_bert,
    quantise,
    write_manifest,
)
from evidenceqa.registry import MissingExtra


@pytest.fixture(scope="module")
def torch_export(onnx_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The default export's folder with its two graphs made by torch.onnx, as before the graph writer."""
    from transformers import AutoModel

    folder = tmp_path_factory.mktemp("torch") / "minilm-onnx"
    shutil.copytree(onnx_dir, folder)
    model = AutoModel.from_pretrained(
        minilm_path(), local_files_only=True, attn_implementation="eager"
    ).eval()
    export_bert(
        model, "last_hidden_state", "last_hidden_state", {0: "batch", 1: "sequence"}, folder / FP32_FILE
    )
    quantise(folder / FP32_FILE, folder / INT8_FILE)
    manifest = folder / MANIFEST_FILE
    source = json.loads(manifest.read_text())["source"]
    manifest.unlink()
    write_manifest(folder, source)
    return folder


@pytest.mark.parametrize("graph", [INT8_FILE, FP32_FILE])
def test_vectors_equal_the_torch_exports(
    onnx_dir: Path, torch_export: Path, paragraphs: list[str], graph: str
) -> None:
    # Batches of mixed lengths, so padding and the 256-token cut are compared too. Equal, not close:
    # every figure in docs/ was measured with the torch export's vectors.
    written = OnnxEmbedder(onnx_dir, batch_size=8, graph=graph).embed(paragraphs)
    exported = OnnxEmbedder(torch_export, batch_size=8, graph=graph).embed(paragraphs)
    assert np.array_equal(written, exported)


def test_what_it_cannot_write_is_named(tmp_path: Path) -> None:
    config = json.loads((minilm_path() / "config.json").read_text())
    (tmp_path / "config.json").write_text(json.dumps(config | {"hidden_act": "relu"}))
    assert unwritable(tmp_path) == "its hidden_act is 'relu', not 'gelu'"
    with pytest.raises(EmbeddingError, match=re.escape("cannot be written as a BERT graph: its hidden_act")):
        write_bert_graph(tmp_path, tmp_path / "out.onnx")
    (tmp_path / "config.json").write_text(json.dumps(config))
    assert unwritable(tmp_path) == f"no {WEIGHTS_FILE}"


def test_weights_named_otherwise_are_not_written(tmp_path: Path) -> None:
    # A task model's encoder under a "bert." prefix: torch's loader reads it, the writer does not.
    from safetensors.numpy import save_file

    shutil.copy2(minilm_path() / "config.json", tmp_path / "config.json")
    save_file(
        {"bert.embeddings.word_embeddings.weight": np.zeros((2, 2), dtype=np.float32)},
        str(tmp_path / WEIGHTS_FILE),
    )
    assert unwritable(tmp_path) == "its weights hold no 'embeddings.word_embeddings.weight'"


def test_a_broken_weights_file_is_named_in_one_line(tmp_path: Path) -> None:
    shutil.copy2(minilm_path() / "config.json", tmp_path / "config.json")
    (tmp_path / WEIGHTS_FILE).write_bytes(b"not weights")
    with pytest.raises(EmbeddingError, match=re.escape(f"cannot read {tmp_path / WEIGHTS_FILE}")) as error:
        unwritable(tmp_path)
    assert "\n" not in str(error.value)


@pytest.fixture
def other_model(tmp_path: Path) -> Path:
    """MiniLM with tanh-approximated GELU: a model the writer does not cover, as any non-BERT one."""
    folder = tmp_path / "gelu-new"
    shutil.copytree(minilm_path(), folder)
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps(config | {"hidden_act": "gelu_new"}))
    return folder


def test_a_model_it_does_not_cover_is_exported_through_torch(other_model: Path, tmp_path: Path) -> None:
    folder = export_onnx(other_model, tmp_path / "onnx")
    vectors = OnnxEmbedder(folder).embed(["wound infection after hip replacement", "hand hygiene"])
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_without_torch_such_a_model_names_the_extra(
    other_model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "transformers", None)  # None: importing it fails
    with pytest.raises(
        MissingExtra, match=re.escape("(its hidden_act is 'gelu_new', not 'gelu') needs the 'torch' extra")
    ):
        export_onnx(other_model, tmp_path / "onnx")
