"""Should the library's evidence be answered from at all? A calibrated decision on raw retrieval signals.

Fused scores rank within one question (the best is near 1 whatever it is), so adequacy is judged on
signals that compare across questions:
- how close the best match is: the best cosine of the dense retriever, the best BM25 score per
  query term;
- whether the top evidence is about the question: the share of its terms in the top chunks
  together, and in the best single chunk (a question about an entity the library never mentions
  misses exactly those);
- whether one source stands out: the keyword list's top score over its tenth (an answerable
  question tends to have a clear winner, a gap question many middling near-misses), and how many
  distinct documents the top results come from (a gap question's scatter across many);
- whether one sentence says it: the best share of the question's terms in a single sentence of the
  evidence, and the best cosine between the question and a sentence of the top chunks (an answer
  is stated in a sentence; a near-miss spreads the question's words over a passage);
- how much the question asks: the number of its terms (a long specific question is missed more
  easily than a short one, so the same coverage means less).
The evidence they read is the search's results, or with adaptive fusion its `adequacy_results`:
the same two lists fused at the fixed weight the signals were designed on, since a weight that
moves per question moves which chunks sit on top (the answer is still written from the results).
A logistic model over them is fitted on questions whose source is held out of the search and on
ones whose evidence states the answer (`evidenceqa.answer.calibration`), with the threshold chosen
for a target false-abstention rate. It is stored, with the signals it was fitted on, as
`abstention.json` in the data home: fitted on the library itself (`evidenceqa calibrate`, run by
`ingest`) or on a benchmark (`bench abstention --write`). Until a library has its own, the model
shipped with the package applies (fitted on the development benchmarks); `Abstainer()` is the
uncalibrated floor, which abstains only when neither retriever found anything like the question.
A question that names something the library never mentions ("sugammadex" in a library without a
word of it: `evidenceqa.retrieval.unknown`) is abstained on, its evidence most likely about
something else, unless the model finds the evidence more likely than not to answer (the name is
then the question's word for what the documents call otherwise: "rodent" for their "rat").
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from evidenceqa.answer.extractive import answerable_sentences
from evidenceqa.embeddings.base import Embedder
from evidenceqa.jsonl import json_fingerprint
from evidenceqa.retrieval.retriever import SearchResponse
from evidenceqa.text.tokens import terms

FEATURES = (
    "dense_top",
    "keyword_per_term",
    "coverage",
    "best_chunk_coverage",
    "keyword_margin",
    "log_documents",
    "best_sentence_coverage",
    "best_sentence_cosine",
    "log_terms",
)
CALIBRATION_FILE = "abstention.json"
log = logging.getLogger(__name__)
# Fitted on the development benchmarks by benchmarks/abstention_transfer.py --write-default.
SHIPPED = Path(__file__).with_name("abstention_default.json")
RECALIBRATE = "recalibrate with `evidenceqa calibrate`"
COVERAGE_DEPTH = 3  # the evidence an answer is mostly built from
SPREAD_DEPTH = 10  # the results a reader is shown: how many sources they come from
# Uncalibrated floor: MiniLM cosines under ~0.2 are unrelated text; no BM25 match at all.
FLOOR_COSINE = 0.2
# How many of the question's words name something the library never mentions
# (evidenceqa.retrieval.unknown): any is an abstention unless the model itself finds the evidence
# more likely than not to answer (a word the documents put otherwise: "rodent" for their "rat").
UNKNOWN_NAMES = "unknown_names"
NAMES_OVERRULED_AT = 0.5


def features(response: SearchResponse, embedder: Embedder) -> dict[str, float]:
    wanted = set(response.keyword_terms.split())
    results = response.results if response.adequacy_results is None else response.adequacy_results
    chunks = [set(terms(result.chunk.text)) & wanted for result in results[:COVERAGE_DEPTH]]
    documents = {result.chunk.doc_id for result in results[:SPREAD_DEPTH]}
    # The sentences an extractive answer could be made of, per evidence chunk.
    sentences = [[s.text for s in answerable_sentences(r.chunk.body)] for r in results]
    return {
        "dense_top": response.top_scores.get("dense", 0.0),
        "keyword_per_term": response.top_scores.get("keyword", 0.0) / max(1, len(wanted)),
        "coverage": _share(set().union(*chunks), wanted),
        "best_chunk_coverage": max((_share(found, wanted) for found in chunks), default=0.0),
        "keyword_margin": _log_ratio(
            response.top_scores.get("keyword", 0.0), response.tenth_scores.get("keyword", 0.0)
        ),
        # A log: one more source matters among few, hardly among many.
        "log_documents": math.log(max(1, len(documents))),
        "best_sentence_coverage": max(
            (_share(set(terms(text)) & wanted, wanted) for chunk in sentences for text in chunk), default=0.0
        ),
        "best_sentence_cosine": _best_cosine(
            embedder, response.query_text, [text for chunk in sentences[:COVERAGE_DEPTH] for text in chunk]
        ),
        "log_terms": math.log(1 + len(wanted)),
        # Not a signal of the model: a rule (`Abstainer.decide`).
        UNKNOWN_NAMES: float(len(response.unknown_names)),
    }


def _best_cosine(embedder: Embedder, question: str, sentences: list[str]) -> float:
    """The question's best cosine with one of the sentences (embeddings are cached: an extractive
    answer then reuses them)."""
    if not sentences:
        return 0.0
    return float((embedder.embed(sentences) @ embedder.embed_query(question)).max())


def _share(found: set[str], wanted: set[str]) -> float:
    return len(found) / len(wanted) if wanted else 0.0


def _log_ratio(top: float, tenth: float) -> float:
    """log(top ÷ tenth); 0 (no winner) when the list is empty or scores are not positive."""
    return math.log(top / tenth) if top > 0 and tenth > 0 else 0.0


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
    # The library's content chunks when it was fitted on that library (None: not fitted on it).
    library_chunks: int | None = None

    def __post_init__(self) -> None:
        if self.weights is not None and len(self.weights) != len(FEATURES):
            raise ValueError(
                f"{len(self.weights)} abstention weights for {len(FEATURES)} signals ({', '.join(FEATURES)})"
            )

    def probability(self, signals: dict[str, float]) -> float | None:
        if self.weights is None:
            return None
        z = self.bias + sum(w * signals[name] for w, name in zip(self.weights, FEATURES, strict=True))
        return 1.0 / (1.0 + math.exp(-z))

    def judge(self, response: SearchResponse, embedder: Embedder) -> Judgement:
        return self.decide(features(response, embedder) if response.results else None)

    def decide(self, signals: dict[str, float] | None) -> Judgement:
        """From a search's signals; None when it found nothing at all, which is always abstained on."""
        if signals is None:
            return Judgement(True, 0.0 if self.weights else None, {})
        p = self.probability(signals)
        if signals.get(UNKNOWN_NAMES) and (p is None or p < NAMES_OVERRULED_AT):
            return Judgement(True, p, signals)  # the evidence is most likely about something else
        if p is None:  # uncalibrated: only when neither retriever found anything like the question
            return Judgement(
                signals["dense_top"] < FLOOR_COSINE and signals["keyword_per_term"] == 0.0, None, signals
            )
        return Judgement(p < self.threshold, p, signals)

    def fingerprint(self) -> str:
        """A digest of the model: answers cached under another one are not this model's answers."""
        return json_fingerprint(asdict(self))

    def save(self, home: Path) -> Path:
        """Written with the signals' names, so a later version with other signals refuses the file."""
        return self.write(home / CALIBRATION_FILE)

    def write(self, path: Path) -> Path:
        """Whole or not at all (a running app may read it at any moment: `LiveCalibration`)."""
        partial = path.with_name(f".{path.name}.partial")
        partial.write_text(
            json.dumps({"features": list(FEATURES), **asdict(self)}, indent=1) + "\n", encoding="utf-8"
        )
        partial.replace(path)
        return path

    @classmethod
    def load(cls, home: Path) -> Abstainer:
        """The calibrated model in the data home, else the shipped default."""
        path = home / CALIBRATION_FILE
        return cls.read(path if path.is_file() else SHIPPED)

    @classmethod
    def read(cls, path: Path) -> Abstainer:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            fitted = data.get("features")
        except (ValueError, AttributeError) as exc:
            raise ValueError(f"{path}: not an abstention calibration ({exc}); {RECALIBRATE}") from None
        if fitted != list(FEATURES):  # weights for other signals would score nonsense, not fail
            was = ", ".join(map(str, fitted)) if isinstance(fitted, list) else "an older version's"
            raise ValueError(
                f"{path}: fitted on {was} signals, not this version's ({', '.join(FEATURES)}); {RECALIBRATE}"
            )
        try:
            chunks = data.get("library_chunks")
            return cls(list(map(float, data["weights"])), float(data["bias"]), float(data["threshold"]),
                       str(data.get("fitted_on", "")), None if chunks is None else int(chunks))  # fmt: skip
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"{path}: not an abstention calibration ({exc}); {RECALIBRATE}") from None


def fit(
    x: Sequence[Sequence[float]],
    answerable: Sequence[bool],
    l2: float = 1e-2,
    prior: Sequence[float] | None = None,
) -> tuple[list[float], float]:
    """Logistic regression by Newton's method (a few features: no library needed); returns (w, b)
    on the features as given. It is fitted on standardised features, so the penalty weighs each
    signal alike whatever its unit (cosines, BM25 ratios, log counts), then mapped back. The
    penalty pulls the weights towards `prior` (weights on the features as given, e.g. the shipped
    model's) where one is given, else towards 0; the bias is never penalised."""
    raw = np.asarray(x, dtype=float)
    mean, scale = raw.mean(axis=0), raw.std(axis=0)
    # A constant signal (its std may come out a rounding error above 0): left as it is, its weight
    # staying 0, or the prior's.
    scale[np.ptp(raw, axis=0) == 0] = 1.0
    data = np.hstack([(raw - mean) / scale, np.ones((len(x), 1))])
    y = np.asarray(answerable, dtype=float)
    centre = np.r_[
        np.asarray(prior, dtype=float) * scale if prior is not None else np.zeros(raw.shape[1]), 0.0
    ]
    beta = centre.copy()
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-data @ beta))
        gradient = data.T @ (p - y) + l2 * np.r_[(beta - centre)[:-1], 0.0]
        hessian = (data * (p * (1 - p))[:, None]).T @ data + l2 * np.eye(len(beta))
        step = np.linalg.solve(hessian, gradient)
        beta -= step
        if np.abs(step).max() < 1e-8:
            break
    weights = beta[:-1] / scale
    return [float(v) for v in weights], float(beta[-1] - weights @ mean)


def threshold_for(
    probabilities: Sequence[float], answerable: Sequence[bool], max_false_abstention: float
) -> float:
    """The highest threshold that abstains on at most `max_false_abstention` of the answerable questions."""
    answerable_p = sorted(p for p, a in zip(probabilities, answerable, strict=True) if a)
    if not answerable_p:
        return 0.5
    allowed = int(max_false_abstention * len(answerable_p))  # answerable questions we may abstain on
    return answerable_p[allowed]


@dataclass
class LiveCalibration:
    """The data home's calibration as a running app sees it: an ingest in another process refits
    `abstention.json`, and the next question is judged by the new model, without a restart."""

    home: Path
    loaded: Abstainer
    # The file's (inode, mtime_ns, size) when read (each write is a new file); None: there was none.
    stamp: tuple[int, int, int] | None

    @classmethod
    def open(cls, home: Path) -> LiveCalibration:
        return cls(home, Abstainer.load(home), _stamp(home / CALIBRATION_FILE))

    def current(self, abstainer: Abstainer) -> Abstainer:
        """`abstainer` where it is not the model read from the home (a caller chose another), else
        the home's model as it is now; one that cannot be read leaves the last one in use."""
        if abstainer is not self.loaded:
            return abstainer
        stamp = _stamp(self.home / CALIBRATION_FILE)
        if stamp != self.stamp:
            try:
                self.loaded = Abstainer.load(self.home)
            except ValueError as exc:
                log.warning("%s; the previous calibration stays in use", exc)
            self.stamp = stamp
        return self.loaded


def _stamp(path: Path) -> tuple[int, int, int] | None:
    try:
        status = path.stat()
    except FileNotFoundError:
        return None
    return status.st_ino, status.st_mtime_ns, status.st_size
