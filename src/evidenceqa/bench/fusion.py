"""Fitting and checking the fusion on development benchmarks, leave-one-benchmark-out.

For each question the two candidate lists are retrieved once; `curve` then fuses them offline at
every dense weight of `GRID` (with `evidenceqa.retrieval.fusion`, as search does) and records the reciprocal
ranks. A method is judged on a benchmark it was not fitted on: `leave_one_out` fits on all sets
but one and reports on the one left out, so what is learned is what transfers to a question style
never seen.

The adaptive model (`evidenceqa.retrieval.adaptive.AdaptiveAlpha`) is fitted with shared signal
weights and, by default, one intercept per benchmark: the weights then have to explain how
questions differ within a style, and a new library's questions get the mean of the intercepts.
The same fit over score-distribution fusion (`fit_distribution_adaptive`) also chooses that
fusion's two temperatures, leave-one-benchmark-out within the benchmarks it is fitted on (so the
left-out rows choose them without the benchmark they report).

Every development style but one leans dense, so a model fitted without the expert questions has
never seen a question written from the passage. The library's own questions (`LIBRARY`:
`evidenceqa.answer.probes`, written from its sentences, never a benchmark question) are that
style, on any library; fitted beside the benchmarks with one shared intercept
(`shared_intercept`), the weights learn from the differences between styles as well, and nothing
is fitted per style that a new library would have to guess.

The objective is each set's mean reciprocal rank (passage and document averaged where it has
passages), sets weighted equally.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from evidenceqa.bench.metrics import Ranked, gold_positions, score
from evidenceqa.index.base import Hit
from evidenceqa.retrieval.adaptive import CLIP, SIGNALS, AdaptiveAlpha
from evidenceqa.retrieval.fusion import Fusion, dense_weights, fuse

GRID = tuple(round(i * 0.05, 2) for i in range(21))
DEPTH = 100
WEIGHTED = Fusion("weighted", 0.5, 60, DEPTH)
L2 = 1e-3  # ridge on the standardised signal weights
LIBRARY = "library questions"  # the name of the library's own questions among the fitted sets


@dataclass(frozen=True)
class Scored:
    """One question: its signals and, per dense weight of GRID, its reciprocal ranks."""

    signals: dict[str, float]
    doc_rr: np.ndarray  # len(GRID)
    passage_rr: np.ndarray | None  # None: the benchmark has no gold passages for it

    @property
    def objective(self) -> np.ndarray:
        return self.doc_rr if self.passage_rr is None else (self.doc_rr + self.passage_rr) / 2


def reciprocal_ranks(
    ranked: Sequence[Ranked], gold_docs: Sequence[str], gold_passages: Sequence[str]
) -> tuple[float, float | None]:
    doc = score(gold_positions(ranked, gold_docs, [], "document"), len(gold_docs)).rr
    if not gold_passages:
        return doc, None
    return doc, score(gold_positions(ranked, [], gold_passages, "passage"), len(gold_passages)).rr


def curve(lists: dict[str, list[Hit]], text: dict[str, str], gold_docs: Sequence[str],
          gold_passages: Sequence[str], signals: dict[str, float], fusion: Fusion = WEIGHTED,
          scales: dict[str, float] | None = None) -> Scored:  # fmt: skip
    """The question's reciprocal ranks at every weight of GRID (`fusion` at that weight: min-max
    weighted unless told); `text`: chunk id → body, for the passage level."""
    doc, passage = [], []
    for alpha in GRID:
        hits = fuse(lists, dense_weights(alpha), replace(fusion, alpha=alpha), 10, scales)
        d, p = reciprocal_ranks([Ranked(h.doc_id, text[h.chunk_id]) for h in hits], gold_docs, gold_passages)
        doc.append(d)
        passage.append(p)
    passages = None if passage[0] is None else np.array(passage, dtype=float)
    return Scored(signals, np.array(doc, dtype=float), passages)


def at_alpha(rows: Sequence[Scored], alphas: np.ndarray) -> tuple[float, float | None]:
    """(doc MRR@10, passage MRR@10) with each question fused at its own weight (interpolated on GRID)."""
    doc = float(np.mean([_interpolate(r.doc_rr, a) for r, a in zip(rows, alphas, strict=True)]))
    with_passages = [(r.passage_rr, a) for r, a in zip(rows, alphas, strict=True) if r.passage_rr is not None]
    passage = float(np.mean([_interpolate(p, a) for p, a in with_passages])) if with_passages else None
    return doc, passage


def _interpolate(values: np.ndarray, alpha: float) -> float:
    position = min(max(alpha, 0.0), 1.0) * (len(GRID) - 1)
    low = int(np.floor(position))
    high = min(low + 1, len(GRID) - 1)
    share = position - low
    return float((1 - share) * values[low] + share * values[high])


def best_fixed(sets: dict[str, Sequence[Scored]]) -> float:
    """The one weight of GRID with the best mean objective, benchmarks weighted equally."""
    means = np.mean([np.mean([r.objective for r in rows], axis=0) for rows in sets.values()], axis=0)
    return GRID[int(np.argmax(means))]


def fit_adaptive(
    sets: Mapping[str, Sequence[Scored]], signals: Sequence[str] = SIGNALS, shared_intercept: bool = False
) -> AdaptiveAlpha:
    """Signal weights shared by every set, and one intercept each (the model keeps their mean) or,
    with `shared_intercept`, one for all."""
    from scipy.optimize import minimize

    names = tuple(signals)
    matrices = [(np.array([[r.signals[n] for n in names] for r in rows]), np.array([r.objective for r in rows]))
                for rows in sets.values()]  # fmt: skip
    stacked = np.vstack([x for x, _ in matrices])
    mean, scale = stacked.mean(axis=0), stacked.std(axis=0) + 1e-9
    k = len(names)
    positions = [np.arange(len(x)) for x, _ in matrices]
    intercepts = 1 if shared_intercept else len(matrices)

    def loss(params: np.ndarray) -> float:
        weights, total = params[:k], 0.0
        for s, ((x, objective), index) in enumerate(zip(matrices, positions, strict=True)):
            intercept = params[k + (0 if shared_intercept else s)]
            alphas = 1.0 / (1.0 + np.exp(-(intercept + np.clip((x - mean) / scale, -CLIP, CLIP) @ weights)))
            place = alphas * (len(GRID) - 1)
            low = np.floor(place).astype(int)
            high = np.minimum(low + 1, len(GRID) - 1)
            share = place - low
            total += float(np.mean((1 - share) * objective[index, low] + share * objective[index, high]))
        return -total / len(matrices) + L2 * float(weights @ weights)

    starts = [np.r_[np.zeros(k), np.full(intercepts, start)] for start in (0.0, -0.85)]
    fits = [minimize(loss, x0, method="Powell", options={"maxiter": 40000, "xtol": 1e-3, "ftol": 1e-7})
            for x0 in starts]  # fmt: skip
    best = min(fits, key=lambda f: f.fun).x
    return AdaptiveAlpha(signals=names, mean=tuple(float(v) for v in mean), scale=tuple(float(v) for v in scale),
                         weights=tuple(float(v) for v in best[:k]), intercept=float(np.mean(best[k:])),
                         fitted_on=tuple(sets))  # fmt: skip


# (keyword, dense) temperature pair → benchmark → its questions' curves fused at those temperatures
Families = Mapping[tuple[float, float], Mapping[str, Sequence[Scored]]]


def with_library(families: Families, library: Mapping[tuple[float, float], Sequence[Scored]]) -> Families:
    """`families` with the library's own questions' curves (per temperature pair) added as one set."""
    return {pair: {**sets, LIBRARY: library[pair]} for pair, sets in families.items()}


def fit_distribution_adaptive(families: Families, shared_intercept: bool = False) -> AdaptiveAlpha:
    """The adaptive model over score-distribution ("softmax") fusion: for each (keyword, dense)
    temperature pair, `families` holds every set's curves fused at those temperatures. The pair is
    the one whose model transfers best — the mean objective of each benchmark left out of a fit on
    the others (the library's own questions, when given, stay in every fit) — and the model is then
    fitted on every set at that pair. Chosen by how well it fitted these same sets, the pair moved
    with small changes of the pipeline to one that lost on clinicians' lay questions, which no fit
    sees enough of to weigh. With fewer than two benchmarks nothing can be left out, and the pair
    that fits best is kept."""
    if not families:
        raise ValueError("no temperature pair to fit")
    benchmarks = [name for name in next(iter(families.values())) if name != LIBRARY]
    pair = max(families, key=lambda pair: _transfer(families[pair], benchmarks, shared_intercept))
    model = fit_adaptive(families[pair], shared_intercept=shared_intercept)
    return replace(model, fusion="softmax", temperatures={"keyword": pair[0], "dense": pair[1]})


def _transfer(sets: Mapping[str, Sequence[Scored]], benchmarks: list[str], shared_intercept: bool) -> float:
    """The mean objective of each of `benchmarks` left out of a fit on the other sets; with fewer than
    two, nothing can be left out, and it is how well one fit on every set ranks them."""
    if len(benchmarks) < 2:
        model = fit_adaptive(sets, shared_intercept=shared_intercept)
        return float(np.mean([_objective(model, rows) for rows in sets.values()]))
    return float(np.mean([_objective(fit_adaptive({n: v for n, v in sets.items() if n != held},
                                                  shared_intercept=shared_intercept), sets[held])
                          for held in benchmarks]))  # fmt: skip


def _objective(model: AdaptiveAlpha, rows: Sequence[Scored]) -> float:
    """The mean objective of `rows`, each question fused at the weight `model` gives it."""
    return float(np.mean([_interpolate(r.objective, model.alpha(r.signals)) for r in rows]))


def adaptive_alphas(model: AdaptiveAlpha, rows: Sequence[Scored]) -> np.ndarray:
    return np.array([model.alpha(r.signals) for r in rows])


@dataclass(frozen=True)
class LeftOut:
    benchmark: str
    method: str
    doc: float
    passage: float | None
    mean_alpha: float | None


def leave_one_out(
    sets: dict[str, Sequence[Scored]],
    baseline_alpha: float,
    families: Families | None = None,
    library: Mapping[tuple[float, float], Sequence[Scored]] | None = None,
) -> list[LeftOut]:
    """Per benchmark left out: BM25, dense, the fixed baseline weight, a fixed weight fitted on the others,
    the adaptive model fitted on the others and, given score-distribution curves per temperature
    pair (`families`), the adaptive model over them with its temperatures chosen on the others;
    given the library's own questions' curves per pair too (`library`), that model fitted on the
    others and the library's questions with one intercept."""
    rows: list[LeftOut] = []
    for held, data in sets.items():
        rest = {name: items for name, items in sets.items() if name != held}
        fitted = best_fixed(rest)
        model = fit_adaptive(rest)
        choices = [
            ("bm25", data, np.zeros(len(data))),
            ("dense", data, np.ones(len(data))),
            (f"fixed α={baseline_alpha}", data, np.full(len(data), baseline_alpha)),
            (f"fixed α fitted on the others ({fitted})", data, np.full(len(data), fitted)),
            ("adaptive, fitted on the others", data, adaptive_alphas(model, data)),
        ]
        if families:
            others = {
                pair: {n: v for n, v in curves.items() if n != held} for pair, curves in families.items()
            }
            spread = fit_distribution_adaptive(others)
            pair = (spread.temperatures["keyword"], spread.temperatures["dense"])
            own = families[pair][held]
            label = f"adaptive over score distributions, fitted on the others (T {pair[0]} / {pair[1]})"
            choices.append((label, own, adaptive_alphas(spread, own)))
            if library:
                styles = fit_distribution_adaptive(with_library(others, library), shared_intercept=True)
                pair = (styles.temperatures["keyword"], styles.temperatures["dense"])
                own = families[pair][held]
                label = (f"adaptive over score distributions, with the library's own questions, "
                         f"fitted on the others (T {pair[0]} / {pair[1]})")  # fmt: skip
                choices.append((label, own, adaptive_alphas(styles, own)))
        for method, curves, alphas in choices:
            doc, passage = at_alpha(curves, alphas)
            mean_alpha = float(alphas.mean()) if method.startswith("adaptive") else None
            rows.append(LeftOut(held, method, doc, passage, mean_alpha))
    return rows
