"""Abstention fitted on the library itself: its own questions answered and held out, keyed to its size."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from evidenceqa.answer.abstain import FEATURES, SHIPPED, Abstainer
from evidenceqa.answer.calibration import (
    MIN_SAMPLES,
    PROBE_SHARE,
    REFRESH_SHARE,
    Sample,
    calibrate,
    library_size,
    self_calibrate,
    stale,
    states_answer,
    too_small,
)
from evidenceqa.answer.engine import Engine
from evidenceqa.chunking import ChunkingConfig
from evidenceqa.library.ingest import Ingestor
from evidenceqa.retrieval.retriever import SearchResponse, SearchResult
from evidenceqa.settings import Settings
from tests.answer.evidence import chunk
from tests.answer.library import abstracts


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory, models_dir: Path) -> Iterator[Engine]:
    home = tmp_path_factory.mktemp("calibration")
    with Engine.open(Settings(home=home / "data", models_dir=models_dir)) as engine:
        Ingestor(engine.catalogue, ChunkingConfig()).ingest_file(abstracts(home / "lib.jsonl", 60))
        engine.sync()
        yield engine


def test_a_library_calibrates_itself_on_its_own_questions(engine: Engine) -> None:
    fitted = self_calibrate(engine.catalogue, engine.retriever(), k=8, questions=60)
    assert fitted.model is not None, fitted.reason
    counts = fitted.counts()
    assert counts["questions"] == 60 and len(fitted.samples) == 120
    assert counts["adequate"] >= MIN_SAMPLES and counts["gaps"] >= MIN_SAMPLES
    # Each question searched as it is, then with its document held out.
    assert [s.answerable for s in fitted.samples[:4]] == [True, False, True, False]
    assert fitted.model.library_chunks == library_size(engine.catalogue) > 0
    assert fitted.model.fitted_on.startswith("self-calibrated on 60 questions")
    gaps, false, auc = fitted.cross_validated()
    assert auc > 0.7 and gaps > 0.3 and false <= 0.2  # the signals separate this library's own gaps
    # The fit works as `ask` uses it: a held-out question is judged less answerable than its twin.
    p = [fitted.model.probability(s.signals) or 0.0 for s in fitted.samples if s.found]
    assert sum(p[0::2]) > sum(p[1::2])


def test_the_library_refines_the_shipped_model_and_holds_its_own_questions_to_a_stricter_budget(
    engine: Engine,
) -> None:
    fitted = self_calibrate(engine.catalogue, engine.retriever(), k=8, questions=60)
    shipped = Abstainer.read(SHIPPED)
    assert fitted.model is not None and fitted.prior == shipped
    alone = calibrate(fitted.samples, 0.10, "", prior=None)
    assert shipped.weights is not None and fitted.model.weights is not None and alone.weights is not None

    def distance(weights: list[float]) -> float:
        return sum((w - s) ** 2 for w, s in zip(weights, shipped.weights or [], strict=True))

    assert distance(fitted.model.weights) < distance(alone.weights) / 4
    # Its questions are in the library's words: each style is held to a share of the budget, so the
    # threshold is no higher than the budget itself would set.
    _, false, _ = fitted.cross_validated()
    assert false <= 0.10 * PROBE_SHARE
    at_budget = calibrate(fitted.samples, 0.10, "", groups=[p.style for p in fitted.probes for _ in range(2)],
                          prior=shipped)  # fmt: skip
    assert fitted.model.threshold <= at_budget.threshold


def test_the_calibration_is_saved_keyed_to_the_library_and_read_back(engine: Engine, tmp_path: Path) -> None:
    model = Abstainer([0.5] * len(FEATURES), -1.0, 0.4, "self-calibrated", library_size(engine.catalogue))
    model.save(tmp_path)
    assert Abstainer.load(tmp_path) == model
    assert stale(model, engine.catalogue) is None


def test_a_calibration_is_stale_when_not_fitted_on_the_library_or_it_changed_enough(engine: Engine) -> None:
    size = library_size(engine.catalogue)
    assert stale(Abstainer([0.0] * len(FEATURES)), engine.catalogue) == "not yet calibrated on this library"
    assert stale(Abstainer(library_chunks=round(size * (1 - REFRESH_SHARE / 2))), engine.catalogue) is None
    why = stale(Abstainer(library_chunks=round(size / (1 + 2 * REFRESH_SHARE))), engine.catalogue)
    assert why is not None and "the library changed by" in why


def test_a_small_library_keeps_the_shipped_default(engine: Engine, tmp_path: Path) -> None:
    with Engine.open(Settings(home=tmp_path / "data", models_dir=engine.settings.models_dir)) as small:
        Ingestor(small.catalogue, ChunkingConfig()).ingest_file(abstracts(tmp_path / "lib.jsonl", 5))
        small.sync()
        assert too_small(small.catalogue) == f"5 documents; {MIN_SAMPLES} are needed"
        fitted = self_calibrate(small.catalogue, small.retriever(), k=8, questions=60)
    assert fitted.model is None and fitted.samples == [] and "5 documents" in fitted.reason
    assert too_small(engine.catalogue) is None


def test_a_home_without_a_calibration_uses_the_shipped_default(tmp_path: Path) -> None:
    model = Abstainer.load(tmp_path)
    assert model == Abstainer.read(SHIPPED) and model.weights is not None
    assert model.library_chunks is None and "development sets" in model.fitted_on


def test_samples_round_trip_and_are_labelled_only_where_both_labels_agree() -> None:
    sample = Sample("q1", True, {"dense_top": 0.5}, True, False)
    assert Sample.from_dict(sample.to_dict()) == sample and sample.label is None
    assert Sample("q2", False, {}, True, False).label is False


def test_the_evidence_states_the_answer_in_its_gold_document_or_a_long_span_elsewhere() -> None:
    found = SearchResponse("q", "q", "q", "hybrid", {}, None, [], "general", 0.5,
                           [SearchResult(1, chunk("b#0", "Warming cut infection rates by half.", "", 2020, []), 1.0, {})])  # fmt: skip
    assert states_answer(["b"], ["cut infection rates"], found)
    assert states_answer(["a"], ["cut infection rates"], found)  # three words, word for word
    assert not states_answer(["a"], ["by half"], found)
    assert states_answer(["a"], [], found, answering_chunk="b#0")
