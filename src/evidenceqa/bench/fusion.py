"""Fitting and checking the fusion on development benchmarks, leave-one-benchmark-out.

For each question the two candidate lists are retrieved once; `curve` then fuses them offline at
every dense weight of `GRID` (with `evidenceqa.retrieval.fusion`, as search does) and records the reciprocal
ranks. A method is judged on a benchmark it was not fitted on: `leave_one_out` fits on all sets
but one and reports on the one left out, so what is learned is what transfers to a question style
never seen.

The adaptive model (`evidenceqa.retrieval.adaptive.AdaptiveAlpha`) is fitted with one intercept per
benchmark and shared signal weights: the weights then have to explain how questions differ within
a style, and the style's own average is not learned as if it were a signal. A new library's
questions get the mean of the intercepts. The objective is each benchmark's mean reciprocal rank
(passage and document averaged where the benchmark has passages), benchmarks weighted equally.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from evidenceqa.bench.metrics import Ranked, gold_positions, score
from evidenceqa.index.base import Hit
from evidenceqa.retrieval.adaptive import CLIP, SIGNALS, AdaptiveAlpha
from evidenceqa.retrieval.fusion import Fusion, dense_weights, fuse

GRID = tuple(round(i * 0.05, 2) for i in range(21))
DEPTH = 100
L2 = 1e-3  # ridge on the standardised signal weights


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
          gold_passages: Sequence[str], signals: dict[str, float]) -> Scored:  # fmt: skip
    """The question's reciprocal ranks at every weight of GRID (weighted fusion); `text`: chunk
    id → body, for the passage level."""
    doc, passage = [], []
    for alpha in GRID:
        hits = fuse(lists, dense_weights(alpha), Fusion("weighted", alpha, 60, DEPTH), 10)
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


def fit_adaptive(sets: dict[str, Sequence[Scored]], signals: Sequence[str] = SIGNALS) -> AdaptiveAlpha:
    """Signal weights shared by every benchmark, one intercept each; the model keeps their mean."""
    from scipy.optimize import minimize

    names = tuple(signals)
    matrices = [(np.array([[r.signals[n] for n in names] for r in rows]), np.array([r.objective for r in rows]))
                for rows in sets.values()]  # fmt: skip
    stacked = np.vstack([x for x, _ in matrices])
    mean, scale = stacked.mean(axis=0), stacked.std(axis=0) + 1e-9
    k = len(names)
    positions = [np.arange(len(x)) for x, _ in matrices]

    def loss(params: np.ndarray) -> float:
        weights, total = params[:k], 0.0
        for s, ((x, objective), index) in enumerate(zip(matrices, positions, strict=True)):
            alphas = 1.0 / (
                1.0 + np.exp(-(params[k + s] + np.clip((x - mean) / scale, -CLIP, CLIP) @ weights))
            )
            place = alphas * (len(GRID) - 1)
            low = np.floor(place).astype(int)
            high = np.minimum(low + 1, len(GRID) - 1)
            share = place - low
            total += float(np.mean((1 - share) * objective[index, low] + share * objective[index, high]))
        return -total / len(matrices) + L2 * float(weights @ weights)

    starts = [np.r_[np.zeros(k), np.full(len(matrices), start)] for start in (0.0, -0.85)]
    fits = [minimize(loss, x0, method="Powell", options={"maxiter": 40000, "xtol": 1e-3, "ftol": 1e-7})
            for x0 in starts]  # fmt: skip
    best = min(fits, key=lambda f: f.fun).x
    return AdaptiveAlpha(signals=names, mean=tuple(float(v) for v in mean), scale=tuple(float(v) for v in scale),
                         weights=tuple(float(v) for v in best[:k]), intercept=float(np.mean(best[k:])),
                         fitted_on=tuple(sets))  # fmt: skip


def adaptive_alphas(model: AdaptiveAlpha, rows: Sequence[Scored]) -> np.ndarray:
    return np.array([model.alpha(r.signals) for r in rows])


@dataclass(frozen=True)
class LeftOut:
    benchmark: str
    method: str
    doc: float
    passage: float | None
    mean_alpha: float | None


def leave_one_out(sets: dict[str, Sequence[Scored]], default_alpha: float) -> list[LeftOut]:
    """Per benchmark left out: BM25, dense, the fixed default, a fixed weight fitted on the others,
    and the adaptive model fitted on the others."""
    rows: list[LeftOut] = []
    for held, data in sets.items():
        rest = {name: items for name, items in sets.items() if name != held}
        fitted = best_fixed(rest)
        model = fit_adaptive(rest)
        choices = [
            ("bm25", np.zeros(len(data))),
            ("dense", np.ones(len(data))),
            (f"fixed α={default_alpha} (default)", np.full(len(data), default_alpha)),
            (f"fixed α fitted on the others ({fitted})", np.full(len(data), fitted)),
            ("adaptive, fitted on the others", adaptive_alphas(model, data)),
        ]
        for method, alphas in choices:
            doc, passage = at_alpha(data, alphas)
            mean_alpha = float(alphas.mean()) if method.startswith("adaptive") else None
            rows.append(LeftOut(held, method, doc, passage, mean_alpha))
    return rows
