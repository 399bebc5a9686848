"""The ONNX graph written from the weights against the torch export it replaces: same vectors, bit for bit."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from evidenceqa.embeddings import EmbeddingError, OnnxEmbedder, minilm_path
from evidenceqa.embeddings.bert_graph import WEIGHTS_FILE, write_bert_graph
from evidenceqa.embeddings.onnx import FP32_FILE, INT8_FILE, MANIFEST_FILE, quantise, write_manifest


@pytest.fixture(scope="module")
def torch_export(onnx_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The default export's folder with its two graphs made by torch.onnx, as before the graph writer."""
    from transformers import AutoModel

    from evidenceqa.retrieval.rerank import export_bert

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


def test_a_model_it_cannot_write_is_refused_in_one_line(tmp_path: Path) -> None:
    config = json.loads((minilm_path() / "config.json").read_text())
    (tmp_path / "config.json").write_text(json.dumps(config | {"hidden_act": "relu"}))
    with pytest.raises(EmbeddingError, match="hidden_act 'relu' cannot be exported"):
        write_bert_graph(tmp_path, tmp_path / "out.onnx")
    (tmp_path / "config.json").write_text(json.dumps(config))
    with pytest.raises(EmbeddingError, match=re.escape(f"no {WEIGHTS_FILE}")):
        write_bert_graph(tmp_path, tmp_path / "out.onnx")


def test_weights_of_another_architecture_are_named(tmp_path: Path) -> None:
    from safetensors.numpy import save_file

    shutil.copy2(minilm_path() / "config.json", tmp_path / "config.json")
    save_file({"encoder.block.0.weight": np.zeros((2, 2), dtype=np.float32)}, str(tmp_path / WEIGHTS_FILE))
    with pytest.raises(
        EmbeddingError, match=re.escape("no tensor 'embeddings.word_embeddings.weight': not a BERT encoder")
    ):
        write_bert_graph(tmp_path, tmp_path / "out.onnx")
