"""The adequacy model: signals from a search, a logistic fit, a threshold, and its file."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from evidenceqa.answer.abstain import CALIBRATION_FILE, Abstainer, fit, threshold_for


def test_fit_separates_separable_signals_and_orders_probabilities() -> None:
    rng = np.random.default_rng(3)
    good = rng.normal([0.6, 2.0, 0.9], 0.05, size=(40, 3))
    bad = rng.normal([0.3, 0.5, 0.4], 0.05, size=(40, 3))
    weights, bias = fit(np.vstack([good, bad]).tolist(), [True] * 40 + [False] * 40)
    model = Abstainer(weights, bias)
    signals = dict(zip(("dense_top", "keyword_per_term", "coverage"), [0.6, 2.0, 0.9], strict=True))
    weak = dict(zip(("dense_top", "keyword_per_term", "coverage"), [0.3, 0.5, 0.4], strict=True))
    assert model.probability(signals) > 0.9 > 0.1 > model.probability(weak)
    assert model.decide(weak).abstain and not model.decide(signals).abstain


def test_threshold_abstains_on_at_most_the_allowed_share_of_answerable_questions() -> None:
    probabilities = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.05, 0.15]
    answerable = [True] * 10 + [False] * 2
    threshold = threshold_for(probabilities, answerable, 0.2)
    wrongly = sum(p < threshold for p, a in zip(probabilities, answerable, strict=True) if a)
    assert wrongly == 2 and threshold == 0.3


def test_without_calibration_only_a_search_that_found_nothing_alike_abstains() -> None:
    floor = Abstainer()
    assert floor.decide(None).abstain
    assert floor.decide({"dense_top": 0.1, "keyword_per_term": 0.0, "coverage": 0.0}).abstain
    assert not floor.decide({"dense_top": 0.1, "keyword_per_term": 0.4, "coverage": 0.2}).abstain
    assert floor.decide({"dense_top": 0.5, "keyword_per_term": 0.0, "coverage": 0.0}).p_answerable is None


def test_calibration_round_trips_and_a_bad_file_is_named(tmp_path: Path) -> None:
    model = Abstainer([1.0, 2.0, 3.0], -1.5, 0.42, "covidqa-dev")
    model.save(tmp_path)
    assert Abstainer.load(tmp_path) == model
    assert Abstainer.load(tmp_path / "elsewhere") == Abstainer()
    (tmp_path / CALIBRATION_FILE).write_text(json.dumps({"weights": [1.0]}), encoding="utf-8")
    with pytest.raises(ValueError, match=f"{CALIBRATION_FILE}: not an abstention calibration"):
        Abstainer.load(tmp_path)
