"""The second stage: `evidenceqa train-reranker` on the sample library, the int8 ONNX cross-encoder
it writes, and the retriever with it on and off."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

from evidenceqa.adapt import Triplet
from evidenceqa.adapt.cross_encoder import OTHER_POSITIVES, candidate_groups, encode_pairs
from evidenceqa.answer.engine import Engine
from evidenceqa.embeddings.sentence_transformers import minilm_path
from evidenceqa.index.base import Hit
from evidenceqa.retrieval.rerank import CrossEncoder, RerankerError, blend
from evidenceqa.settings import Settings
from tests.cli.test_cli import MODELS, run
from tests.conftest import SAMPLE

# A MedQuAD question the sample library's pages yield as a training query: the guard must refuse it.
HELD_OUT = "What are the symptoms of Abdominal aortic aneurysm ?"


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("home")
    assert run(home, "ingest", str(SAMPLE / "library")).returncode == 0
    return home


@pytest.fixture(scope="module")
def reranker(home: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    folder = tmp_path_factory.mktemp("bench")
    bench = folder / "bench.jsonl"
    bench.write_text(json.dumps({"query_id": "1", "question": HELD_OUT}) + "\n", encoding="utf-8")
    out = folder / "reranker"
    result = run(home, "train-reranker", "--out", str(out), "--holdout", str(bench), "--max-pairs", "24",
                 "--batch-size", "4", "--max-length", "64")  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert f"EVIDENCEQA_RERANK={out}" in result.stdout
    return out, json.loads((out / "export.json").read_text())


@pytest.mark.slow
def test_training_refuses_benchmark_questions_and_writes_an_int8_model(reranker: tuple[Path, dict]) -> None:
    out, manifest = reranker
    trained = manifest["trained"]
    assert trained["holdout"] and trained["refused_by_guard"], "the guard refused nothing"
    assert sum(trained["refused_by_guard"].values()) >= 1
    assert trained["training"]["steps"] >= 2 and trained["triplets"] > 0
    assert (out / "model.int8.onnx").is_file() and not (out / "model.onnx").exists()
    scores = CrossEncoder(out).score(
        "fever in children", ["A fever is a raised body temperature.", "Hip surgery."]
    )
    assert scores.shape == (2,) and np.isfinite(scores).all()
    assert CrossEncoder(out).score("anything", []).shape == (0,)
    # A question longer than the model's window (64 here) is cut, not refused.
    long = CrossEncoder(out).score(
        "fever in children after surgery " * 60, ["A fever is a raised body temperature."]
    )
    assert long.shape == (1,) and np.isfinite(long).all()


@pytest.mark.slow
def test_rerank_off_reproduces_the_first_stage_and_on_reorders_only_its_top(
    home: Path, reranker: tuple[Path, dict]
) -> None:
    question = "Does shaving the incision site increase infection after spinal surgery?"
    settings = Settings(home=home, models_dir=MODELS)
    with Engine.open(settings) as engine:
        plain = engine.retriever().search(question, k=30)
    with Engine.open(settings.model_copy(update={"rerank": "off", "rerank_weight": 0.9})) as engine:
        off = engine.retriever().search(question, k=30)
    assert [(r.chunk.chunk_id, r.score) for r in off.results] == [
        (r.chunk.chunk_id, r.score) for r in plain.results
    ]
    assert "rerank" not in off.timings_ms
    depth = 5
    with Engine.open(settings.model_copy(update={"rerank": str(reranker[0]), "rerank_depth": depth,
                                                 "rerank_weight": 1.0})) as engine:  # fmt: skip
        on = engine.retriever().search(question, k=30)
    first = [r.chunk.chunk_id for r in plain.results]
    second = [r.chunk.chunk_id for r in on.results]
    assert sorted(second[:depth]) == sorted(first[:depth]) and second[depth:] == first[depth:]
    assert "rerank" in on.timings_ms


def test_a_folder_without_a_trained_reranker_is_refused_with_what_to_run(tmp_path: Path) -> None:
    with pytest.raises(RerankerError, match="make reranker"):
        CrossEncoder(tmp_path)


def test_training_reads_a_query_longer_than_the_window() -> None:
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(minilm_path()), local_files_only=True)
    encoded = encode_pairs(
        tokenizer, ["wound infection " * 100, "fever"], ["Clipping is better.", "x " * 300], 32
    )
    assert encoded["input_ids"].shape == (2, 32)


def test_each_query_sees_its_positive_first_then_its_negative_then_other_positives() -> None:
    batch = [Triplet("heading", f"q{i}", f"pos{i}", f"neg{i}", f"d{i}") for i in range(4)]
    groups = candidate_groups(batch, random.Random(1))
    for i, group in enumerate(groups):
        assert group[:2] == [f"pos{i}", f"neg{i}"]
        assert len(group) == 2 + OTHER_POSITIVES and f"pos{i}" not in group[2:]
        assert all(p.startswith("pos") for p in group[2:])


def test_blend_weight_zero_keeps_the_order_and_one_follows_the_model() -> None:
    hits = [Hit("a", "A", 0.9, {"dense": 1}), Hit("b", "B", 0.5), Hit("c", "C", 0.1)]
    logits = np.array([-2.0, 3.0, 1.0])
    assert [h.chunk_id for h in blend(hits, logits, 0.0)] == ["a", "b", "c"]
    assert [h.chunk_id for h in blend(hits, logits, 1.0)] == ["b", "c", "a"]
    mixed = blend(hits, logits, 0.5)  # a: 0.5·1 + 0.5·0 = 0.5, b: 0.5·0.5 + 0.5·1 = 0.75, c: 0.5·0.6 = 0.3
    assert [h.chunk_id for h in mixed] == ["b", "a", "c"]
    assert mixed[1].ranks == {"dense": 1} and mixed[0].score == pytest.approx(0.75)


def test_search_with_a_folder_that_holds_no_reranker_fails_on_one_line(home: Path, tmp_path: Path) -> None:
    result = run(home, "search", "fever", env={"EVIDENCEQA_RERANK": str(tmp_path)})
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert f"{tmp_path} holds no trained reranker" in result.stderr and "make reranker" in result.stderr
