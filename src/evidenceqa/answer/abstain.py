"""Should the library's evidence be answered from at all? A calibrated decision on raw retrieval signals.

Fused scores rank within one question (the best is near 1 whatever it is), so adequacy is judged on
signals that compare across questions: the best cosine of the dense retriever, the best BM25 score
per query term, and how many of the question's terms the top evidence contains at all (a question
about an entity the library never mentions misses exactly those). A logistic model over them is
fitted on a content-gap set (questions whose source article is held out of the search) against
answerable questions, with the threshold chosen for a target false-abstention rate; it is stored
as `abstention.json` in the data home. Without one, a conservative floor applies: abstain only when
neither retriever found anything resembling the question.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from evidenceqa.analysis import terms
from evidenceqa.retrieval import SearchResponse

FEATURES = ("dense_top", "keyword_per_term", "coverage")
CALIBRATION_FILE = "abstention.json"
COVERAGE_DEPTH = 3  # the evidence an answer is mostly built from
# Uncalibrated floor: MiniLM cosines under ~0.2 are unrelated text; no BM25 match at all.
FLOOR_COSINE = 0.2


def features(response: SearchResponse) -> dict[str, float]:
    wanted = set(response.keyword_terms.split())
    found: set[str] = set()
    for result in response.results[:COVERAGE_DEPTH]:
        found |= set(terms(result.chunk.text))
    return {
        "dense_top": response.top_scores.get("dense", 0.0),
        "keyword_per_term": response.top_scores.get("keyword", 0.0) / max(1, len(wanted)),
        "coverage": len(wanted & found) / len(wanted) if wanted else 0.0,
    }


@dataclass(frozen=True)
class Judgement:
    abstain: bool
    p_answerable: float | None  # None when no calibration exists
    signals: dict[str, float]


@dataclass
class Abstainer:
    """p(answerable) = σ(w·x + b) over FEATURES; abstain below `threshold`. No weights: the floor."""

    weights: list[float] | None = None
    bias: float = 0.0
    threshold: float = 0.5
    fitted_on: str = ""

    def probability(self, signals: dict[str, float]) -> float | None:
        if self.weights is None:
            return None
        z = self.bias + sum(w * signals[name] for w, name in zip(self.weights, FEATURES, strict=True))
        return 1.0 / (1.0 + math.exp(-z))

    def judge(self, response: SearchResponse) -> Judgement:
        return self.decide(features(response) if response.results else None)

    def decide(self, signals: dict[str, float] | None) -> Judgement:
        """From a search's signals; None when it found nothing at all, which is always abstained on."""
        if signals is None:
            return Judgement(True, 0.0 if self.weights else None, {})
        p = self.probability(signals)
        if p is None:  # uncalibrated: only when neither retriever found anything like the question
            return Judgement(
                signals["dense_top"] < FLOOR_COSINE and signals["keyword_per_term"] == 0.0, None, signals
            )
        return Judgement(p < self.threshold, p, signals)

    def save(self, home: Path) -> Path:
        path = home / CALIBRATION_FILE
        path.write_text(json.dumps(asdict(self), indent=1), encoding="utf-8")
        return path

    @classmethod
    def load(cls, home: Path) -> Abstainer:
        """The calibrated model in the data home, or the uncalibrated floor when there is none."""
        path = home / CALIBRATION_FILE
        if not path.is_file():
            return cls()
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            return cls(list(map(float, data["weights"])), float(data["bias"]), float(data["threshold"]),
                       str(data.get("fitted_on", "")))  # fmt: skip
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(
                f"{path}: not an abstention calibration ({exc}); delete it or recalibrate"
            ) from None


def fit(
    x: Sequence[Sequence[float]], answerable: Sequence[bool], l2: float = 1e-2
) -> tuple[list[float], float]:
    """Logistic regression by Newton's method (three features: no library needed); returns (w, b)."""
    data = np.hstack([np.asarray(x, dtype=float), np.ones((len(x), 1))])
    y = np.asarray(answerable, dtype=float)
    beta = np.zeros(data.shape[1])
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-data @ beta))
        gradient = data.T @ (p - y) + l2 * np.r_[beta[:-1], 0.0]
        hessian = (data * (p * (1 - p))[:, None]).T @ data + l2 * np.eye(len(beta))
        step = np.linalg.solve(hessian, gradient)
        beta -= step
        if np.abs(step).max() < 1e-8:
            break
    return [float(v) for v in beta[:-1]], float(beta[-1])


def threshold_for(
    probabilities: Sequence[float], answerable: Sequence[bool], max_false_abstention: float
) -> float:
    """The highest threshold that abstains on at most `max_false_abstention` of the answerable questions."""
    answerable_p = sorted(p for p, a in zip(probabilities, answerable, strict=True) if a)
    if not answerable_p:
        return 0.5
    allowed = int(max_false_abstention * len(answerable_p))  # answerable questions we may abstain on
    return answerable_p[allowed]
