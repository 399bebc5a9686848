"""A real (tiny) fine-tuning run: the model changes, is saved whole, and loads as an embedder."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from evidenceqa.adapt import MANIFEST, TrainConfig, Triplet, train
from evidenceqa.embeddings import SentenceTransformerEmbedder, load_embedder, minilm_path
from evidenceqa.settings import Settings

TRIPLETS = [
    Triplet("question", "What are the treatments for gout ?", "Gout is treated with colchicine and NSAIDs.",
            "Gout affects the big toe.", "d1"),
    Triplet("question", "How to prevent pressure ulcers ?", "Reposition patients every two hours to prevent ulcers.",
            "Pressure ulcers are graded in four stages.", "d2"),
    Triplet("heading", "Hip fracture — anaesthesia", "Spinal anaesthesia was compared with general anaesthesia.",
            "Hip fracture incidence rises with age.", "d3"),
    Triplet("abstract", "We studied tranexamic acid in knee replacement.", "Tranexamic acid lowered blood loss by 300 ml.",
            "Knee replacement numbers doubled.", "d4"),
]  # fmt: skip
PROBE = ["What are the treatments for gout ?"]
# Trains the real MiniLM with torch: minutes of CPU, outside the fast tier.
pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def base_vector() -> np.ndarray:
    return SentenceTransformerEmbedder(minilm_path()).embed(PROBE)


def test_training_changes_the_model_and_writes_a_loadable_folder(
    tmp_path: Path, base_vector: np.ndarray
) -> None:
    out = tmp_path / "adapted"
    report = train(
        minilm_path(), TRIPLETS, out, TrainConfig(batch_size=2, learning_rate=1e-4), {"documents": 4}
    )
    assert (report.steps, report.planned_steps, report.stopped_by_budget) == (2, 2, False)
    manifest = json.loads((out / MANIFEST).read_text())
    assert manifest["documents"] == 4 and manifest["training"]["steps"] == 2
    assert manifest["config"]["batch_size"] == 2
    adapted = SentenceTransformerEmbedder(out)
    assert adapted.model.max_seq_length == 256  # the base model's window, not the training one
    vector = adapted.embed(PROBE)
    assert vector.shape == base_vector.shape
    assert 0.9 < float(vector[0] @ base_vector[0]) < 0.99999


def test_the_time_budget_stops_training_and_keeps_what_was_learned(tmp_path: Path) -> None:
    out = tmp_path / "adapted"
    report = train(minilm_path(), TRIPLETS, out, TrainConfig(batch_size=1, max_minutes=1e-6), {})
    assert report.steps == 1 and report.planned_steps == 4 and report.stopped_by_budget
    assert (out / "model.safetensors").is_file()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no staging folder left


def test_an_adapted_model_runs_as_int8_onnx_like_it_runs_in_torch(tmp_path: Path, models_dir: Path) -> None:
    out = tmp_path / "adapted"
    train(minilm_path(), TRIPLETS, out, TrainConfig(batch_size=2, learning_rate=1e-4), {})
    onnx = load_embedder(Settings(home=tmp_path / "home", models_dir=models_dir, embedder=f"onnx:{out}"))
    torch_vector = SentenceTransformerEmbedder(out).embed(PROBE)[0]
    assert float(onnx.embed(PROBE)[0] @ torch_vector) > 0.98  # int8 quantisation keeps the direction
