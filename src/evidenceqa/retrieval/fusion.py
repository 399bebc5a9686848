"""Rank fusion of the keyword (BM25) and dense result lists: pure functions.

- Reciprocal Rank Fusion: score = Σ weight_r / (k + rank_r). Uses ranks only, so it needs no
  score calibration; the weights let one retriever count more.
- Weighted score fusion: score = alpha · dense' + (1 − alpha) · keyword', each list's scores
  min-max normalised to [0, 1]; a chunk missing from a list scores 0 there.
- Score-distribution fusion ("softmax"): each list becomes a probability distribution over its
  chunks, softmax(score / temperature), and score = alpha · p_dense + (1 − alpha) · p_keyword.
  Min-max stretches every list to [0, 1], so a flat list (a paraphrase BM25 barely matched) counts
  as much as a decisive one; a distribution keeps how far the best stands above the rest, and a
  decisive list dominates. BM25 scores are divided by the question's idf mass first (`scales`),
  so one temperature fits questions of any length.

`alpha` is the weight of the dense retriever in both (for RRF the weights are alpha and 1 − alpha,
scaled so that alpha = 0.5 is plain RRF).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal

import numpy as np

from evidenceqa.index.base import Filters, Hit, SearchBackend

FusionMethod = Literal["rrf", "weighted", "softmax"]
UNIT_TEMPERATURES: Mapping[str, float] = MappingProxyType({"keyword": 1.0, "dense": 1.0})


@dataclass(frozen=True)
class Fusion:
    method: FusionMethod = "rrf"
    alpha: float = 0.5  # weight of the dense retriever, 0 … 1
    rrf_k: int = 60
    depth: int = 100  # candidates taken from each retriever before fusing
    # "softmax" only: each retriever's temperature (of its scaled scores), fitted with the adaptive
    # model that uses them (benchmarks/fusion_grid.py).
    temperatures: Mapping[str, float] = field(default_factory=lambda: dict(UNIT_TEMPERATURES))


def fuse(
    lists: Mapping[str, Sequence[Hit]],
    weights: dict[str, float],
    fusion: Fusion,
    k: int,
    scales: Mapping[str, float] | None = None,
) -> list[Hit]:
    """Fuse ranked lists (retriever name → hits, best first) into the top `k` hits. `scales`: what
    "softmax" divides each list's scores by first (1 where not given)."""
    if fusion.method == "rrf":
        scores = _rrf(lists, weights, fusion.rrf_k)
    elif fusion.method == "softmax":
        scores = _distributions(lists, weights, fusion.temperatures, scales or {})
    else:
        scores = _weighted(lists, weights)
    merged: dict[str, Hit] = {}
    for name, hits in lists.items():
        for rank, hit in enumerate(hits, start=1):
            into = merged.setdefault(hit.chunk_id, Hit(hit.chunk_id, hit.doc_id, 0.0))
            into.ranks[name] = rank
    for chunk_id, hit in merged.items():
        hit.score = scores[chunk_id]
    return sorted(merged.values(), key=lambda h: (-h.score, min(h.ranks.values()), h.chunk_id))[:k]


def dense_weights(alpha: float) -> dict[str, float]:
    return {"dense": alpha, "keyword": 1.0 - alpha}


def _rrf(lists: Mapping[str, Sequence[Hit]], weights: dict[str, float], k: int) -> dict[str, float]:
    scores: dict[str, float] = {}
    for name, hits in lists.items():
        weight = 2.0 * weights.get(name, 0.5)  # alpha 0.5 → weight 1 each: plain RRF
        for rank, hit in enumerate(hits, start=1):
            scores[hit.chunk_id] = scores.get(hit.chunk_id, 0.0) + weight / (k + rank)
    return scores


def _weighted(lists: Mapping[str, Sequence[Hit]], weights: dict[str, float]) -> dict[str, float]:
    scores: dict[str, float] = {}
    for name, hits in lists.items():
        for chunk_id, value in _min_max(hits).items():
            scores[chunk_id] = scores.get(chunk_id, 0.0) + weights.get(name, 0.5) * value
    for hits in lists.values():
        for hit in hits:
            scores.setdefault(hit.chunk_id, 0.0)
    return scores


def _distributions(
    lists: Mapping[str, Sequence[Hit]],
    weights: dict[str, float],
    temperatures: Mapping[str, float],
    scales: Mapping[str, float],
) -> dict[str, float]:
    scores: dict[str, float] = {}
    for name, hits in lists.items():
        if not hits:
            continue  # every hit of every list is scored below: no chunk is left out of the fusion
        divisor = temperatures.get(name, 1.0) * (scales.get(name) or 1.0)
        logits = np.array([h.score for h in hits]) / divisor
        shares = np.exp(logits - logits.max())
        shares /= shares.sum()
        for hit, share in zip(hits, shares, strict=True):
            scores[hit.chunk_id] = scores.get(hit.chunk_id, 0.0) + weights.get(name, 0.5) * float(share)
    return scores


def _min_max(hits: Sequence[Hit]) -> dict[str, float]:
    if not hits:
        return {}
    values = [h.score for h in hits]
    low, high = min(values), max(values)
    if high == low:
        return {h.chunk_id: 1.0 for h in hits}
    return {h.chunk_id: (h.score - low) / (high - low) for h in hits}


def hybrid_search(
    backend: SearchBackend, vector: np.ndarray, terms: str, k: int, filters: Filters, fusion: Fusion
) -> list[Hit]:
    """Keyword and dense search on one backend, fused. Backends use this as their `hybrid`."""
    depth = max(fusion.depth, k)
    lists = {
        "keyword": backend.search_keyword(terms, depth, filters) if terms.strip() else [],
        "dense": backend.search_dense(vector, depth, filters),
    }
    return fuse(lists, dense_weights(fusion.alpha), fusion, k)
