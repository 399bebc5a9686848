"""Fitting abstention: labelled searches → a calibrated `Abstainer`, on benchmarks or on the library itself.

A sample is one question searched as an answer would be, with its adequacy signals and two labels:
whether its source stayed in the library (`answerable`) and whether the evidence states the answer
(`in_evidence`). Only the samples where the two agree are fitted on ("verified"): an answerable
question whose evidence misses the answer, or a gap question answered by another source, says
nothing about whether the signals tell adequate evidence from inadequate.

Self-calibration (`self_calibrate`) makes those samples from the user's own library, with no
benchmark and no review: questions written from the library's sentences (`evidenceqa.answer.probes`)
are searched once as they are (answerable when the evidence holds the sentence) and once with their
document held out of the search (a gap, unless another document states the sentence word for word).
They refine the shipped model rather than replace it (`PRIOR_STRENGTH`): a few hundred questions of
one kind pin some weights down poorly, and a weight they get wrong costs most on questions unlike
them. Its threshold holds them to a share of the false-abstention budget (`PROBE_SHARE`), since
they are written in the library's own words and users' questions, in theirs, score lower.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from pydantic import BaseModel, Field

from evidenceqa.answer.abstain import FEATURES, SHIPPED, Abstainer, features, fit, threshold_for
from evidenceqa.answer.probes import Probe, probes
from evidenceqa.index.base import Filters
from evidenceqa.library.catalogue import Catalogue
from evidenceqa.retrieval.retriever import Retriever, SearchResponse

# A gold span this long found word for word in another document's chunk means that chunk states
# the answer too; shorter spans ("3", "bats") turn up anywhere.
MIN_SPAN_WORDS = 3
# Fewer verified samples of either kind than this and a fit says more about chance than about the
# library: the shipped default stays.
MIN_SAMPLES = 30
# Refit once the library's content chunks have changed by this share since the fit.
REFRESH_SHARE = 0.2
FOLDS = 5
# How firmly the shipped model's weights hold against the library's questions (the L2 penalty on
# standardised signals, towards those weights): the strength the other development sets favour
# when medquad-sample, pubmedqa or clinician-dev is left out of the shipped model's fit, and gains
# AUC on each; covidqa-dev loses at any but the weakest (benchmarks/abstention_transfer.py, in
# docs/answering.md).
PRIOR_STRENGTH = 10.0
# The library's questions share its wording; users' answerable questions, in their own, score lower.
# Held to this share of the budget, the threshold's false abstentions on clinician-dev's answerable
# questions came near the budget: chosen there, the one development set in users' words. Left out,
# no set gets it: the others' choice is 0.1 while clinician-dev is among them (only then does it stay
# within the budget), the whole budget when it is not (docs/answering.md).
PROBE_SHARE = 0.3


class CalibrationOptions(BaseModel):
    # The questions `calibrate` writes from the library, and that `ingest` runs when the library is
    # new or has changed by REFRESH_SHARE (0: never on ingest; the shipped default then applies).
    calibration_questions: int = Field(200, ge=0, le=5000)


@dataclass(frozen=True)
class Sample:
    query_id: str
    answerable: bool  # its gold documents stayed in the library
    signals: dict[str, float]
    found: bool  # the search returned anything at all
    # Whether the evidence an answer would be written from states the answer (`states_answer`).
    in_evidence: bool

    @property
    def label(self) -> bool | None:
        """Verified: True when the evidence holds the answer of an answerable question, False when a
        gap question's evidence does not; None for the two kinds that say nothing about adequacy."""
        if self.answerable == self.in_evidence:
            return self.answerable
        return None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Sample:
        return cls(**data)


def states_answer(
    gold_doc_ids: Sequence[str],
    spans: Sequence[str],
    response: SearchResponse,
    answering_chunk: str | None = None,
) -> bool:
    """Whether a chunk of the evidence states the answer: a gold document's chunk with a gold span
    (any chunk of it when there are no spans), another chunk with a long span word for word, or the
    chunk a reviewer found to answer (`answering_chunk`)."""
    lowered = [span.lower() for span in spans]
    long_spans = [span for span in lowered if len(span.split()) >= MIN_SPAN_WORDS]
    for result in response.results:
        text = result.chunk.text.lower()
        if result.chunk.doc_id in gold_doc_ids and (not lowered or any(s in text for s in lowered)):
            return True
        if any(span in text for span in long_spans) or result.chunk.chunk_id == answering_chunk:
            return True
    return False


def calibrate(
    fitting: Sequence[Sample],
    max_false_abstention: float,
    source: str,
    folds: int = FOLDS,
    groups: Sequence[str] | None = None,
    prior: Abstainer | None = None,
) -> Abstainer:
    """A logistic model of adequacy on the verified samples of `fitting` (its weights drawn towards
    `prior`'s by PRIOR_STRENGTH where one is given), with the threshold that abstains on at most
    `max_false_abstention` of its adequate ones — of each of `groups` (one name per sample: a
    question style, a benchmark) when given, so that no kind of question pays for another being
    easy. The threshold is read off out-of-fold probabilities: in-sample ones flatter the fit, and
    the budget was then overspent on new questions."""
    kinds = groups or [""] * len(fitting)
    labelled = [(s, kind) for s, kind in zip(fitting, kinds, strict=True) if s.found and s.label is not None]
    x, y = verified_signals([s for s, _ in labelled])
    weights, bias = fit_towards(x, y, prior)
    model = Abstainer(weights, bias, 0.5, source)
    probabilities = out_of_fold(x, y, folds, prior)
    model.threshold = min(
        threshold_for(
            [p for p, (_, k) in zip(probabilities, labelled, strict=True) if k == kind],
            [ok for ok, (_, k) in zip(y, labelled, strict=True) if k == kind],
            max_false_abstention,
        )
        for kind in sorted(set(kinds))
    )
    return model


def fit_towards(
    x: list[list[float]], y: list[bool], prior: Abstainer | None, strength: float = PRIOR_STRENGTH
) -> tuple[list[float], float]:
    """`abstain.fit`, its weights drawn towards `prior`'s at `strength` (no prior, or 0: towards 0)."""
    if prior is None or prior.weights is None or not strength:
        return fit(x, y)
    return fit(x, y, strength, prior.weights)


def verified_signals(samples: Sequence[Sample]) -> tuple[list[list[float]], list[bool]]:
    """The signals and labels of the samples a fit learns from: found, and verified either way."""
    labelled = [s for s in samples if s.found and s.label is not None]
    return [[s.signals[name] for name in FEATURES] for s in labelled], [bool(s.label) for s in labelled]


def out_of_fold(
    x: list[list[float]], y: list[bool], folds: int = FOLDS, prior: Abstainer | None = None
) -> list[float]:
    """Each sample's probability from a model fitted without its fold (fold = position mod folds)."""
    probabilities = [0.0] * len(x)
    for fold in range(folds):
        inside = [i for i in range(len(x)) if i % folds != fold]
        weights, bias = fit_towards([x[i] for i in inside], [y[i] for i in inside], prior)
        model = Abstainer(weights, bias)
        for i in range(fold, len(x), folds):
            probabilities[i] = model.probability(dict(zip(FEATURES, x[i], strict=True))) or 0.0
    return probabilities


def auc(positives: Sequence[float], negatives: Sequence[float]) -> float:
    """The chance that a random positive scores above a random negative (ties count half)."""
    if not positives or not negatives:
        return float("nan")
    wins = sum((p > n) + 0.5 * (p == n) for p in positives for n in negatives)
    return wins / (len(positives) * len(negatives))


def library_size(catalogue: Catalogue) -> int:
    """The content chunks of the library: what a calibration is keyed to."""
    return catalogue.term_frequencies(())[0]


def too_small(catalogue: Catalogue) -> str | None:
    """Why the library is too small to calibrate itself (one question per document: fewer than
    MIN_SAMPLES documents cannot verify MIN_SAMPLES of either kind), or None."""
    documents = sum(1 for _ in catalogue.documents())
    return f"{documents} documents; {MIN_SAMPLES} are needed" if documents < MIN_SAMPLES else None


def stale(model: Abstainer, catalogue: Catalogue) -> str | None:
    """Why the library should calibrate itself again, or None when `model` still fits it: it was
    not fitted on this library, or the library has changed by REFRESH_SHARE since."""
    if model.library_chunks is None:
        return "not yet calibrated on this library"
    now = library_size(catalogue)
    change = abs(now - model.library_chunks) / max(1, model.library_chunks)
    if change >= REFRESH_SHARE:
        return f"the library changed by {change:.0%} since its calibration ({model.library_chunks:,} → {now:,} chunks)"
    return None


@dataclass(frozen=True)
class SelfCalibration:
    model: Abstainer | None  # None: too few verified samples to fit (the reason says why)
    probes: list[Probe]
    samples: list[Sample]  # per probe: answerable, then held out
    reason: str = ""
    prior: Abstainer | None = None  # the model the fit was drawn towards

    def counts(self) -> dict[str, int]:
        labels = Counter(s.label for s in self.samples)
        return {"questions": len(self.probes), "adequate": labels[True], "gaps": labels[False],
                "unverified": labels[None]}  # fmt: skip

    def styles(self) -> dict[str, int]:
        return dict(Counter(p.style for p in self.probes))

    def cross_validated(self) -> tuple[float, float, float]:
        """(gaps abstained, false abstentions, AUC) of the fit's own out-of-fold probabilities at its
        threshold: how well the library's signals separate, on questions no fold was fitted on."""
        x, y = verified_signals(self.samples)
        if self.model is None or not x:
            return float("nan"), float("nan"), float("nan")
        scored = list(zip(out_of_fold(x, y, prior=self.prior), y, strict=True))
        adequate = [p for p, ok in scored if ok]
        gaps = [p for p, ok in scored if not ok]
        threshold = self.model.threshold
        return (
            sum(p < threshold for p in gaps) / len(gaps),
            sum(p < threshold for p in adequate) / len(adequate),
            auc(adequate, gaps),
        )


def fit_on_probes(
    made: Sequence[Probe],
    samples: Sequence[Sample],
    max_false_abstention: float,
    prior: Abstainer | None,
    share: float = PROBE_SHARE,
) -> Abstainer:
    """The library's model from its questions' samples (two per probe, as `self_calibrate` makes
    them): drawn towards `prior`, the threshold holding each style to `share` of the budget."""
    source = f"self-calibrated on {len(made)} questions from the library"
    groups = [p.style for p in made for _ in range(2)]
    return calibrate(samples, max_false_abstention * share, source, groups=groups, prior=prior)


def self_calibrate(
    catalogue: Catalogue,
    retriever: Retriever,
    k: int,
    questions: int,
    max_false_abstention: float = 0.10,
    seed: int = 13,
    on_probe: Callable[[], None] = lambda: None,
    prior: Abstainer | None = None,
) -> SelfCalibration:
    """Abstention fitted on the library's own questions (`probes`), each searched with its evidence
    budget `k` as it is and with its document held out; never a benchmark question. The fit is
    drawn towards `prior`, by default the shipped model. `max_false_abstention` is the budget for
    users' questions."""
    prior = prior or Abstainer.read(SHIPPED)
    small = too_small(catalogue)
    if small:
        return SelfCalibration(None, [], [], small, prior)
    made = probes(catalogue, questions, seed)
    samples: list[Sample] = []
    for probe in made:
        for held_out in (False, True):
            filters = Filters(exclude_doc_ids=(probe.doc_id,)) if held_out else None
            response = retriever.search(probe.question, k=k, filters=filters)
            samples.append(
                Sample(
                    f"{probe.chunk_id}{'/held-out' if held_out else ''}",
                    not held_out,
                    features(response, retriever.embedder) if response.results else {},
                    bool(response.results),
                    states_answer((probe.doc_id,), (probe.passage,), response),
                )
            )
        on_probe()
    labels = Counter(s.label for s in samples if s.found)
    if min(labels[True], labels[False]) < MIN_SAMPLES:
        reason = (f"{labels[True]} adequate and {labels[False]} gap questions verified from "
                  f"{len(made)} made; {MIN_SAMPLES} of each are needed")  # fmt: skip
        return SelfCalibration(None, made, samples, reason, prior)
    model = fit_on_probes(made, samples, max_false_abstention, prior)
    model.library_chunks = library_size(catalogue)
    return SelfCalibration(model, made, samples, prior=prior)
