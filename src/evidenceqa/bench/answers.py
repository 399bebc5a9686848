"""Answer benchmarks: calibrating abstention on a content-gap set, and scoring answers.

Abstention is fitted on the even questions of a content-gap set (`bench.gaps`) and reported on
the odd ones, so no reported figure was tuned on. Answer quality, per the Answering issue:
- covidqa-style (gold spans): an answer "hits" when it contains a gold answer span and cites a
  gold article — the success-rate proxy;
- document-gold benchmarks (pubmedqa): whether the answer cites a gold document;
- gap questions: the share abstained on; answerable ones: the share wrongly abstained on;
- the share of answer sentences the citation check could not support (0 for extractive answers,
  which are verbatim).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from evidenceqa.answer.abstain import FEATURES, Abstainer, Judgement, features, fit, threshold_for
from evidenceqa.answer.pipeline import Answer
from evidenceqa.bench.gaps import auc
from evidenceqa.bench.retrieval import Question, question_filters
from evidenceqa.retrieval import Retriever


@dataclass(frozen=True)
class Sample:
    query_id: str
    answerable: bool
    signals: dict[str, float]
    found: bool  # the search returned anything at all


@dataclass(frozen=True)
class AbstentionScores:
    gap_questions: int
    answerable_questions: int
    gaps_abstained: float  # recall of abstention: gap questions abstained on
    false_abstentions: float  # answerable questions abstained on
    precision: float  # abstentions that were on gap questions
    # p(answerable) ranks an answerable question above a gap one: the quality of the model whatever
    # the threshold; None for the uncalibrated floor, which has no probabilities.
    auc: float | None

    def row(self, label: str) -> list[str]:
        return [label, f"{self.gap_questions:,}", f"{self.answerable_questions:,}", f"{self.gaps_abstained:.1%}",
                f"{self.false_abstentions:.1%}", f"{self.precision:.1%}",
                "–" if self.auc is None else f"{self.auc:.3f}"]  # fmt: skip


ABSTENTION_HEADERS = [
    "Rule",
    "Gap questions",
    "Answerable",
    "Gaps abstained",
    "False abstentions",
    "Precision",
    "AUC",
]


def samples(retriever: Retriever, rows: Sequence[dict[str, Any]], on_row: Callable[[], None] = lambda: None,
            k: int = 10) -> list[Sample]:  # fmt: skip
    """Each content-gap row searched as an answer would be (its held-out documents excluded)."""
    found = []
    for row in rows:
        question = Question.from_row(row)
        response = retriever.search(question.question, k=k, filters=question_filters(question))
        found.append(
            Sample(row["query_id"], row["meta"]["answerable"], features(response), bool(response.results))
        )
        on_row()
    return found


def calibrate(fitting: Sequence[Sample], max_false_abstention: float, source: str) -> Abstainer:
    """A logistic model of answerability on `fitting`, with the threshold that abstains on at most
    `max_false_abstention` of its answerable questions."""
    x = [[s.signals[name] for name in FEATURES] for s in fitting]
    weights, bias = fit(x, [s.answerable for s in fitting])
    model = Abstainer(weights, bias, 0.5, source)
    probabilities = [model.probability(s.signals) or 0.0 for s in fitting]
    model.threshold = threshold_for(probabilities, [s.answerable for s in fitting], max_false_abstention)
    return model


def evaluate(model: Abstainer, held_out: Sequence[Sample]) -> AbstentionScores:
    judgements = [_judge(model, s) for s in held_out]
    decisions = [(j.abstain, s.answerable) for j, s in zip(judgements, held_out, strict=True)]
    gaps = [abstained for abstained, answerable in decisions if not answerable]
    answerable = [abstained for abstained, ok in decisions if ok]
    abstained = [ok for done, ok in decisions if done]
    return AbstentionScores(
        gap_questions=len(gaps),
        answerable_questions=len(answerable),
        gaps_abstained=_share(gaps),
        false_abstentions=_share(answerable),
        precision=_share([not ok for ok in abstained]),
        auc=_auc(judgements, held_out) if model.weights is not None else None,
    )


def _judge(model: Abstainer, sample: Sample) -> Judgement:
    return model.decide(sample.signals if sample.found else None)


def _auc(judgements: Sequence[Judgement], samples: Sequence[Sample]) -> float:
    scored = [(j.p_answerable or 0.0, s.answerable) for j, s in zip(judgements, samples, strict=True)]
    return auc([p for p, ok in scored if ok], [p for p, ok in scored if not ok])


def _share(flags: Sequence[bool]) -> float:
    return sum(flags) / len(flags) if flags else 0.0


def halves(items: Sequence[Sample]) -> tuple[list[Sample], list[Sample]]:
    """Even positions fit, odd positions report."""
    return list(items[0::2]), list(items[1::2])


@dataclass(frozen=True)
class AnswerScore:
    hit: bool  # cites gold (and, where the benchmark has spans, contains one)
    abstained: bool
    sentences: int
    unsupported: int


def score_answer(question: Question, answer: Answer) -> AnswerScore:
    cites_gold = any(c.doc_id in question.gold_doc_ids for c in answer.citations)
    text = answer.answer.lower()
    has_span = not question.gold_passages or any(p.lower() in text for p in question.gold_passages)
    return AnswerScore(cites_gold and has_span and not answer.abstained, answer.abstained,
                       len(answer.sentences), answer.unsupported)  # fmt: skip


ANSWER_HEADERS = ["Benchmark", "Generator", "Questions", "Answer hit rate", "Abstained", "Sentences",
                  "Unsupported sentences"]  # fmt: skip


def answer_row(name: str, scores: Sequence[AnswerScore], generator: str) -> list[str]:
    sentences = sum(s.sentences for s in scores if not s.abstained)
    unsupported = sum(s.unsupported for s in scores if not s.abstained)
    return [name, generator, f"{len(scores):,}", f"{_share([s.hit for s in scores]):.1%}",
            f"{_share([s.abstained for s in scores]):.1%}", f"{sentences:,}",
            f"{unsupported / sentences if sentences else 0.0:.1%}"]  # fmt: skip


def by_answerability(name: str, questions: list[Question]) -> list[tuple[str, list[Question]]]:
    """A content-gap set (rows with meta.answerable) reports its gap and answerable questions apart."""
    if not any("answerable" in q.meta for q in questions):
        return [(name, questions)]
    answerable = [q for q in questions if q.meta.get("answerable")]
    gaps = [q for q in questions if not q.meta.get("answerable")]
    return [(f"{name} (answerable)", answerable), (f"{name} (content gaps)", gaps)]
