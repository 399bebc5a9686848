"""The adequacy model: signals from a search, a logistic fit, a threshold, and its file."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from evidenceqa.answer.abstain import (
    CALIBRATION_FILE,
    FEATURES,
    SHIPPED,
    UNKNOWN_NAMES,
    Abstainer,
    features,
    fit,
    threshold_for,
)
from evidenceqa.embeddings import CachedEmbedder
from evidenceqa.retrieval.retriever import SearchResponse, SearchResult
from tests.answer.evidence import CHUNKS, chunk, real_embedder

# Typical signals of an answerable question and of a content gap, one value per FEATURES entry.
STRONG = [0.6, 2.0, 0.9, 0.8, 0.7, 1.1, 0.8, 0.7, 1.8]
WEAK = [0.3, 0.5, 0.4, 0.3, 0.1, 2.3, 0.4, 0.4, 1.8]
RECALIBRATE = "recalibrate with `evidenceqa calibrate`"


def _signals(values: list[float]) -> dict[str, float]:
    return dict(zip(FEATURES, values, strict=True))


def test_fit_separates_separable_signals_and_orders_probabilities() -> None:
    rng = np.random.default_rng(3)
    good = rng.normal(STRONG, 0.05, size=(40, len(FEATURES)))
    bad = rng.normal(WEAK, 0.05, size=(40, len(FEATURES)))
    weights, bias = fit(np.vstack([good, bad]).tolist(), [True] * 40 + [False] * 40)
    model = Abstainer(weights, bias)
    assert model.probability(_signals(STRONG)) > 0.9 > 0.1 > model.probability(_signals(WEAK))
    assert model.decide(_signals(WEAK)).abstain and not model.decide(_signals(STRONG)).abstain


def test_a_name_the_library_never_mentions_is_abstained_on_unless_the_model_is_sure() -> None:
    named, unnamed = {**_signals(STRONG), UNKNOWN_NAMES: 1.0}, {**_signals(STRONG), UNKNOWN_NAMES: 0.0}
    flat = [0.0] * len(FEATURES)  # p = σ(bias) whatever the signals
    doubtful = Abstainer(flat, bias=-0.5, threshold=0.3)  # p 0.38: answered, but not sure
    assert not doubtful.decide(unnamed).abstain
    judged = doubtful.decide(named)
    assert judged.abstain and judged.p_answerable == pytest.approx(0.378, abs=1e-3)
    assert not Abstainer(flat, bias=2.0, threshold=0.3).decide(named).abstain  # p 0.88: overruled
    assert Abstainer().decide(named).abstain  # the uncalibrated floor has no belief to overrule it


def test_fit_does_not_depend_on_the_units_of_a_signal() -> None:
    rng = np.random.default_rng(4)
    x = rng.normal(0.0, 1.0, size=(200, 2))
    answerable = (x @ [1.0, -0.5] + rng.normal(0.0, 0.7, 200) > 0).tolist()
    weights, bias = fit(x.tolist(), answerable)
    scaled_weights, scaled_bias = fit((x * [1000.0, 0.001] + [5.0, -3.0]).tolist(), answerable)
    z = x @ weights + bias
    z_scaled = (x * [1000.0, 0.001] + [5.0, -3.0]) @ scaled_weights + scaled_bias
    assert np.allclose(z, z_scaled)  # the same probabilities, whatever scale a signal comes in


def test_a_prior_holds_the_weights_the_data_do_not_decide() -> None:
    rng = np.random.default_rng(5)
    x = rng.normal(0.0, 1.0, size=(60, 2))
    x[:, 1] = 0.7  # the second signal never varies: these samples say nothing about its weight
    answerable = (x[:, 0] + rng.normal(0.0, 0.5, 60) > 0).tolist()
    alone, _ = fit(x.tolist(), answerable)
    drawn, _ = fit(x.tolist(), answerable, l2=30.0, prior=[0.2, 1.5])
    assert alone[1] == pytest.approx(0.0, abs=1e-9) and drawn[1] == pytest.approx(1.5)
    # The signal the data do decide moves from the prior towards what they say, and the stronger
    # the pull, the less: a few samples refine the prior rather than replace it.
    loose, _ = fit(x.tolist(), answerable, l2=1.0, prior=[0.2, 1.5])
    assert 0.2 < drawn[0] < loose[0] < alone[0] + 1e-9


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


@pytest.fixture(scope="module")
def embedder(tmp_path_factory: pytest.TempPathFactory, models_dir: Path) -> CachedEmbedder:
    return real_embedder(tmp_path_factory.mktemp("abstain"), models_dir)


def _response(texts: list[tuple[str, str]], terms: str, top: float = 1.0, tenth: float = 1.0,
              question: str = "q") -> SearchResponse:  # fmt: skip
    results = [
        SearchResult(rank, chunk(f"{doc}#{rank}", text, "", 2020, []), 1.0 / rank, {})
        for rank, (doc, text) in enumerate(texts, start=1)
    ]
    return SearchResponse(question, question, terms, "hybrid", {}, None, [], "general", 0.5, results,
                          top_scores={"dense": 0.7, "keyword": top},
                          tenth_scores={"dense": 0.5, "keyword": tenth})  # fmt: skip


def test_signals_of_a_search(embedder: CachedEmbedder) -> None:
    response = _response(
        [("a", "masks reduce droplets"), ("b", "droplets in wards"), ("a", "masks"), ("c", "transmission")],
        terms="mask reduc droplet transmiss",
        top=12.0,
        tenth=3.0,
    )
    signals = features(response, embedder)
    assert list(signals) == [*FEATURES, UNKNOWN_NAMES] and signals[UNKNOWN_NAMES] == 0.0
    assert signals["dense_top"] == 0.7 and signals["keyword_per_term"] == 3.0  # 12 over 4 terms
    # The top three chunks together hold 3 of the 4 terms; the best one alone, 3 of 4 too.
    assert signals["coverage"] == 0.75 and signals["best_chunk_coverage"] == 0.75
    assert signals["keyword_margin"] == pytest.approx(math.log(4.0))  # a clear winner: top = 4 × tenth
    assert signals["log_documents"] == pytest.approx(math.log(3))  # a, b, c
    assert signals["log_terms"] == pytest.approx(math.log(5))  # 4 terms
    # Fragments of under five words are no sentences an answer could quote.
    assert signals["best_sentence_coverage"] == 0.0 and signals["best_sentence_cosine"] == 0.0


def test_signals_when_one_chunk_holds_less_than_the_top_three_together(embedder: CachedEmbedder) -> None:
    response = _response([("a", "masks"), ("b", "droplets")], terms="mask droplet", top=0.0, tenth=0.0)
    signals = features(response, embedder)
    assert signals["coverage"] == 1.0 and signals["best_chunk_coverage"] == 0.5
    assert signals["keyword_margin"] == 0.0  # no BM25 match at all: no winner either


QUESTION = "Does clipping rather than shaving reduce surgical site infection?"
QUESTION_TERMS = "clip rather shave reduc surgic site infect"


def test_a_sentence_that_states_the_answer_is_a_signal(embedder: CachedEmbedder) -> None:
    hair, tranexamic, chlorhexidine = (CHUNKS[name].body for name in ("hair", "tranexamic", "chlorhexidine"))
    stated = features(
        _response([("h", hair), ("t", tranexamic)], QUESTION_TERMS, question=QUESTION), embedder
    )
    # Every term of the question is in one sentence ("… clipping rather than shaving with a razor
    # reduces the risk of surgical site infection."), which also says what it asks.
    assert stated["best_sentence_coverage"] == 1.0 and stated["best_sentence_cosine"] > 0.6
    # Evidence on other perioperative questions: some words, no sentence that says it.
    missed = features(
        _response([("t", tranexamic), ("c", chlorhexidine)], QUESTION_TERMS, question=QUESTION), embedder
    )
    assert missed["best_sentence_coverage"] < 0.6
    assert missed["best_sentence_cosine"] < stated["best_sentence_cosine"] - 0.2


def test_sentences_are_compared_by_meaning_in_the_top_chunks_only(embedder: CachedEmbedder) -> None:
    hair, tranexamic = CHUNKS["hair"].body, CHUNKS["tranexamic"].body
    texts = [("t1", tranexamic), ("t2", tranexamic), ("t3", tranexamic), ("h", hair)]
    fourth = features(_response(texts, QUESTION_TERMS, question=QUESTION), embedder)
    first = features(_response(texts[::-1], QUESTION_TERMS, question=QUESTION), embedder)
    # The term share counts every evidence sentence; the cosine, those an answer is mostly built from.
    assert fourth["best_sentence_coverage"] == first["best_sentence_coverage"] == 1.0
    assert fourth["best_sentence_cosine"] < first["best_sentence_cosine"] - 0.2


def test_signals_read_the_adequacy_evidence_when_the_search_gives_one(embedder: CachedEmbedder) -> None:
    hair, tranexamic = CHUNKS["hair"].body, CHUNKS["tranexamic"].body
    texts = [("t1", tranexamic), ("t2", tranexamic), ("t3", tranexamic), ("h", hair)]
    shown = _response(texts, QUESTION_TERMS, question=QUESTION)
    judged = _response(texts[::-1], QUESTION_TERMS, question=QUESTION)
    # Adaptive fusion shows one order; abstention judges the fixed-weight order it was fitted on.
    both = replace(shown, adequacy_results=judged.results)
    assert features(both, embedder) == features(judged, embedder) != features(shown, embedder)


def test_calibration_round_trips_with_the_signals_it_was_fitted_on(tmp_path: Path) -> None:
    model = Abstainer([1.0, 2.0, 3.0, 0.5, -1.0, -0.5, 1.5, 2.5, -0.2], -1.5, 0.42, "covidqa-dev")
    path = model.save(tmp_path)
    assert json.loads(path.read_text())["features"] == list(FEATURES)
    assert Abstainer.load(tmp_path) == model
    assert Abstainer.load(tmp_path / "elsewhere") == Abstainer.read(SHIPPED)  # no file: the shipped default


def test_a_calibration_of_an_older_version_is_refused_not_misread(tmp_path: Path) -> None:
    old = {"weights": [5.2, 0.6, 1.4], "bias": -5.6, "threshold": 0.66, "fitted_on": "covidqa-dev"}
    (tmp_path / CALIBRATION_FILE).write_text(json.dumps(old), encoding="utf-8")
    with pytest.raises(
        ValueError, match=f"{CALIBRATION_FILE}: fitted on an older version's signals"
    ) as caught:
        Abstainer.load(tmp_path)
    assert RECALIBRATE in str(caught.value) and str(tmp_path) in str(caught.value)


def test_a_calibration_for_other_signals_or_weights_is_refused(tmp_path: Path) -> None:
    path = tmp_path / CALIBRATION_FILE
    other = {"features": ["dense_top", "coverage"], "weights": [1.0, 1.0], "bias": 0.0, "threshold": 0.5}
    path.write_text(json.dumps(other), encoding="utf-8")
    with pytest.raises(
        ValueError, match=f"fitted on dense_top, coverage signals, not this version's .*{RECALIBRATE}"
    ):
        Abstainer.load(tmp_path)
    short = {**other, "features": list(FEATURES)}  # the right names, too few weights
    path.write_text(json.dumps(short), encoding="utf-8")
    with pytest.raises(ValueError, match=f"{CALIBRATION_FILE}: not an abstention calibration"):
        Abstainer.load(tmp_path)
    with pytest.raises(ValueError, match=f"3 abstention weights for {len(FEATURES)} signals"):
        Abstainer([1.0, 2.0, 3.0])


def test_a_file_that_is_no_calibration_is_named(tmp_path: Path) -> None:
    for text in ("not json", "[1, 2]"):
        (tmp_path / CALIBRATION_FILE).write_text(text, encoding="utf-8")
        with pytest.raises(ValueError, match=f"{CALIBRATION_FILE}: not an abstention calibration"):
            Abstainer.load(tmp_path)
