"""Fitting the fusion leave-one-benchmark-out (evidenceqa.bench.fusion) on data whose answer is known."""

from __future__ import annotations

import random

import numpy as np
import pytest

from evidenceqa.bench.fusion import (
    GRID,
    Scored,
    at_alpha,
    best_fixed,
    curve,
    fit_adaptive,
    fit_distribution_adaptive,
    leave_one_out,
)
from evidenceqa.index.base import Hit
from evidenceqa.retrieval.adaptive import SIGNALS, AdaptiveAlpha
from evidenceqa.retrieval.fusion import Fusion


def _question(best_alpha: float, signal: float, rng: random.Random) -> Scored:
    """Reciprocal rank 1 near `best_alpha`, falling away from it; `dense_top` = `signal`, the rest noise."""
    grid = np.array(GRID)
    rr = np.clip(1.0 - 2.5 * np.abs(grid - best_alpha), 0.0, 1.0)
    signals = {name: rng.gauss(0, 1) for name in SIGNALS} | {"dense_top": signal}
    return Scored(signals, rr, None)


def _benchmark(rng: random.Random, n: int, shift: float) -> list[Scored]:
    """Within every benchmark a high dense_top means dense is right; benchmarks differ in their mix."""
    rows = []
    for _ in range(n):
        dense_right = rng.random() < 0.5 + shift
        rows.append(
            _question(0.9 if dense_right else 0.1, (1.0 if dense_right else -1.0) + rng.gauss(0, 0.3), rng)
        )
    return rows


def test_the_fit_learns_the_signal_that_decides_and_transfers_to_a_set_left_out() -> None:
    rng = random.Random(7)
    sets = {name: _benchmark(rng, 60, shift) for name, shift in (("a", -0.3), ("b", 0.0), ("c", 0.3))}
    model = fit_adaptive(sets, signals=("dense_top", "keyword_margin"))
    weights = dict(zip(model.signals, model.weights, strict=True))
    assert weights["dense_top"] > 1.0 and abs(weights["keyword_margin"]) < weights["dense_top"] / 4
    assert model.fitted_on == ("a", "b", "c")
    rows = {(r.benchmark, r.method): r for r in leave_one_out(sets, 0.3)}
    for held in sets:
        adaptive = rows[(held, "adaptive, fitted on the others")].doc
        fixed = next(r.doc for (b, m), r in rows.items() if b == held and m.startswith("fixed α fitted"))
        assert adaptive > fixed + 0.2  # no single weight serves both kinds of question


def test_best_fixed_weighs_benchmarks_equally() -> None:
    rng = random.Random(1)
    lexical = [_question(0.1, 0.0, rng) for _ in range(10)]
    dense = [_question(0.6, 0.0, rng) for _ in range(10)] + [_question(0.9, 0.0, rng)]
    # A benchmark's size does not change the choice: ten copies of the dense one weigh as one.
    assert best_fixed({"lexical": lexical, "dense": dense}) == best_fixed(
        {"lexical": lexical, "dense": dense * 10}
    )
    assert best_fixed({"dense": dense}) == 0.6


def test_at_alpha_interpolates_between_grid_points() -> None:
    row = Scored({}, np.linspace(0, 1, len(GRID)), np.linspace(1, 0, len(GRID)))
    doc, passage = at_alpha([row], np.array([0.525]))
    assert doc == pytest.approx(0.525) and passage == pytest.approx(0.475)


def test_curve_fuses_at_every_weight_as_search_does() -> None:
    lists = {
        "keyword": [Hit("k", "K", 10.0), Hit("d", "D", 1.0)],
        "dense": [Hit("d", "D", 0.9), Hit("k", "K", 0.1)],
    }
    text = {"k": "keyword passage", "d": "the gold answer passage"}
    scored = curve(lists, text, ["D"], ["gold answer"], {})
    assert scored.doc_rr[0] == 0.5 and scored.doc_rr[-1] == 1.0  # BM25 alone ranks D second, dense first
    assert scored.passage_rr is not None and scored.passage_rr[-1] == 1.0
    assert scored.objective[-1] == 1.0


def test_curve_fuses_score_distributions_with_the_scales_given() -> None:
    lists = {
        "keyword": [Hit("k", "K", 10.2), Hit("d", "D", 10.0)],
        "dense": [Hit("d", "D", 0.9), Hit("k", "K", 0.1)],
    }
    text = {"k": "keyword passage", "d": "the gold answer passage"}
    softmax = Fusion("softmax", 0.5, 60, 100, {"keyword": 0.3, "dense": 0.1})
    # BM25 barely prefers K; dense is sure of D: D wins at a mostly lexical weight.
    scored = curve(lists, text, ["D"], [], {}, softmax, {"keyword": 10.0})
    assert scored.doc_rr[GRID.index(0.3)] == 1.0
    assert curve(lists, text, ["D"], [], {}).doc_rr[GRID.index(0.3)] == 0.5  # min-max: K first


def test_the_distribution_fit_keeps_the_temperatures_that_rank_best_and_reports_them_left_out() -> None:
    rng = random.Random(3)
    sets = {name: _benchmark(rng, 40, shift) for name, shift in (("a", -0.3), ("b", 0.0), ("c", 0.3))}
    # The same questions at a second pair of temperatures, where every question ranks worse.
    worse = {name: [Scored(r.signals, r.doc_rr * 0.5, None) for r in rows] for name, rows in sets.items()}
    families = {(0.2, 0.08): worse, (0.4, 0.11): sets}
    model = fit_distribution_adaptive(families)
    assert model.fusion == "softmax" and model.temperatures == {"keyword": 0.4, "dense": 0.11}
    rows = [r for r in leave_one_out(sets, 0.3, families) if "score distributions" in r.method]
    assert [r.benchmark for r in rows] == ["a", "b", "c"]
    assert all("(T 0.4 / 0.11)" in r.method for r in rows)
    adaptive = {
        r.benchmark: r.doc for r in leave_one_out(sets, 0.3) if r.method == "adaptive, fitted on the others"
    }
    for r in rows:  # the same curves as the weighted rows: the same fit, the same figure
        assert r.doc == pytest.approx(adaptive[r.benchmark])


def test_the_distribution_fit_chooses_the_temperatures_whose_model_transfers() -> None:
    """At one pair of temperatures the signal tells the benchmarks apart but not the questions
    within one: all of "a" want BM25, all of "b" and "c" dense, and dense_top sits at -1, 0 and 1.
    Fitted on the three, a step between -1 and 0 ranks every question well; fitted on two, it
    cannot place the third. At the other pair the signal decides within every benchmark, a little
    less sharply. One intercept for all, as the packaged model is fitted: in-sample the first wins;
    the pair kept is the second, whose model transfers."""
    rng = random.Random(11)
    by_set = {
        name: [_question(best, level + rng.gauss(0, 0.05), rng) for _ in range(40)]
        for name, best, level in (("a", 0.1, -1.0), ("b", 0.9, 0.0), ("c", 0.9, 1.0))
    }
    within = {name: [Scored(r.signals, r.doc_rr * 0.8, None) for r in _benchmark(rng, 40, 0.0)]
              for name in ("a", "b", "c")}  # fmt: skip
    families = {(0.2, 0.08): by_set, (0.4, 0.11): within}

    def objective(model: AdaptiveAlpha, rows: list[Scored]) -> float:
        return float(np.mean([np.interp(model.alpha(r.signals), GRID, r.objective) for r in rows]))

    def in_sample(sets: dict[str, list[Scored]]) -> float:
        return float(
            np.mean([objective(fit_adaptive(sets, shared_intercept=True), rows) for rows in sets.values()])
        )

    def left_out(sets: dict[str, list[Scored]]) -> float:
        return float(np.mean([objective(fit_adaptive({n: v for n, v in sets.items() if n != held},
                                                     shared_intercept=True), sets[held])
                              for held in sets]))  # fmt: skip

    assert in_sample(by_set) > in_sample(within) and left_out(by_set) < left_out(within)
    chosen = fit_distribution_adaptive(families, shared_intercept=True)
    assert chosen.temperatures == {"keyword": 0.4, "dense": 0.11}


def test_the_library_s_own_questions_teach_a_style_no_fitted_benchmark_has() -> None:
    """Left out, the lexical benchmark is a style the others lack: within each benchmark the signal
    does not vary, so only the library's lexical questions, fitted with one intercept beside the
    dense-leaning benchmarks, tie a high signal to BM25."""
    rng = random.Random(5)

    def style(n: int, lexical: bool) -> list[Scored]:
        return [
            _question(0.1 if lexical else 0.9, (1.0 if lexical else -1.0) + rng.gauss(0, 0.2), rng)
            for _ in range(n)
        ]

    sets = {"expert": style(40, True), "lay": style(40, False), "consumer": style(40, False)}
    library = style(40, True)
    pair = (0.4, 0.11)
    rows = {
        r.method: r.doc
        for r in leave_one_out(sets, 0.3, {pair: sets}, {pair: library})
        if r.benchmark == "expert"
    }
    with_library = rows["adaptive over score distributions, with the library's own questions, "
                        "fitted on the others (T 0.4 / 0.11)"]  # fmt: skip
    without = rows["adaptive over score distributions, fitted on the others (T 0.4 / 0.11)"]
    assert with_library > 0.9 and without < 0.5
