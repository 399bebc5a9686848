"""Answer benchmarks: calibrating abstention on a content-gap set, and scoring answers.

Abstention is fitted on the even questions of a content-gap set (`bench.gaps`) and reported on
the odd ones, so no reported figure was tuned on. Answer quality, per the Answering issue:
- covidqa-style (gold spans): an answer "hits" when it contains a gold answer span and cites a
  gold article — the success-rate proxy;
- document-gold benchmarks (pubmedqa): whether the answer cites a gold document;
- gap questions: the share abstained on; answerable ones: the share wrongly abstained on; and of
  the abstentions, the share whose answer (written without the adequacy check) would have hit;
- the share of answer sentences the citation check could not support (0 for extractive answers,
  which are verbatim).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from evidenceqa.answer.abstain import Abstainer, Judgement, features
from evidenceqa.answer.calibration import Sample, auc, states_answer
from evidenceqa.answer.findings import direction_of, is_summary
from evidenceqa.answer.pipeline import Answerer
from evidenceqa.bench.metrics import normalize
from evidenceqa.bench.retrieval import Question, question_filters
from evidenceqa.records import Answer
from evidenceqa.retrieval.retriever import Retriever, SearchResponse


def answer_in_evidence(question: Question, response: SearchResponse, answering: dict[str, str]) -> bool:
    """Whether the evidence states a benchmark question's answer (`states_answer` on its gold
    documents and spans), or holds the chunk a review found to answer it (`answering`)."""
    return states_answer(
        question.gold_doc_ids, question.gold_passages, response, answering.get(question.query_id)
    )


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

    def row(self, label: str, labels: str) -> list[str]:
        return [label, labels, f"{self.gap_questions:,}", f"{self.answerable_questions:,}",
                f"{self.gaps_abstained:.1%}", f"{self.false_abstentions:.1%}", f"{self.precision:.1%}",
                "–" if self.auc is None else f"{self.auc:.3f}"]  # fmt: skip


ABSTENTION_HEADERS = [
    "Rule",
    "Labels",
    "Gap questions",
    "Answerable",
    "Gaps abstained",
    "False abstentions",
    "Precision",
    "AUC",
]


def samples(retriever: Retriever, rows: Sequence[dict[str, Any]], k: int, answering: dict[str, str],
            on_row: Callable[[], None] = lambda: None) -> list[Sample]:  # fmt: skip
    """Each content-gap row searched as an answer would be (`k` = the evidence an answer gets, its
    held-out documents excluded), with whether that evidence states the answer."""
    found = []
    for row in rows:
        question = Question.from_row(row)
        response = retriever.search(question.question, k=k, filters=question_filters(question))
        found.append(
            Sample(
                question.query_id,
                bool(row["meta"]["answerable"]),
                features(response, retriever.embedder),
                bool(response.results),
                answer_in_evidence(question, response, answering),
            )
        )
        on_row()
    return found


def evaluate(model: Abstainer, held_out: Sequence[Sample], verified: bool = False) -> AbstentionScores:
    """Abstentions against the content-gap set's labels as held out (answerable = its gold documents
    stayed), or `verified` ones (answerable = the evidence states the answer; gap = it does not)."""
    labelled = [(s, s.label if verified else s.answerable) for s in held_out]
    kept = [(s, answerable) for s, answerable in labelled if answerable is not None]
    judgements = [_judge(model, s) for s, _ in kept]
    decisions = [(j.abstain, bool(ok)) for j, (_, ok) in zip(judgements, kept, strict=True)]
    gaps = [abstained for abstained, answerable in decisions if not answerable]
    answerable = [abstained for abstained, ok in decisions if ok]
    abstained = [ok for done, ok in decisions if done]
    return AbstentionScores(
        gap_questions=len(gaps),
        answerable_questions=len(answerable),
        gaps_abstained=_share(gaps),
        false_abstentions=_share(answerable),
        precision=_share([not ok for ok in abstained]),
        auc=_auc(judgements, [ok for _, ok in kept]) if model.weights is not None else None,
    )


LEFT_OUT_HEADERS = ["Left out of the verified labels", "Questions", "Abstained"]


def left_out(model: Abstainer, held_out: Sequence[Sample]) -> list[list[str]]:
    """The questions verified labels leave out, and how often they were abstained on: answerable
    ones whose evidence misses the answer (abstaining is the better outcome there), gap ones whose
    evidence states it from another source (answering is)."""
    kinds = [
        ("answerable, but the evidence misses the answer", True),
        ("gap, but the evidence states the answer elsewhere", False),
    ]
    rows = []
    for name, answerable in kinds:
        group = [s for s in held_out if s.answerable == answerable and s.label is None]
        rows.append([name, f"{len(group):,}", f"{_share([_judge(model, s).abstain for s in group]):.1%}"])
    return rows


def _judge(model: Abstainer, sample: Sample) -> Judgement:
    return model.decide(sample.signals if sample.found else None)


def _auc(judgements: Sequence[Judgement], answerable: Sequence[bool]) -> float:
    scored = [(j.p_answerable or 0.0, ok) for j, ok in zip(judgements, answerable, strict=True)]
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
    # Abstained, though the answer written without the adequacy check would have been a hit: what
    # abstention cost.
    would_hit: bool = False


def score_answer(question: Question, answer: Answer) -> AnswerScore:
    cites_gold = any(c.doc_id in question.gold_doc_ids for c in answer.citations)
    text = answer.answer.lower()
    has_span = not question.gold_passages or any(p.lower() in text for p in question.gold_passages)
    return AnswerScore(cites_gold and has_span and not answer.abstained, answer.abstained,
                       len(answer.sentences), answer.unsupported)  # fmt: skip


def answer_and_score(answerer: Answerer, question: Question) -> AnswerScore:
    """The question answered as `ask` would (no cache) and scored; an abstention is answered again
    without the adequacy check (the uncalibrated floor), to tell whether it cost a hit."""
    filters = question_filters(question)
    score = score_answer(question, answerer.ask(question.question, filters, use_cache=False))
    if not score.abstained:
        return score
    unguarded = replace(answerer, abstainer=Abstainer())
    return replace(
        score,
        would_hit=score_answer(question, unguarded.ask(question.question, filters, use_cache=False)).hit,
    )


ANSWER_HEADERS = ["Benchmark", "Generator", "Questions", "Answer hit rate", "Abstained",
                  "Abstentions that cost a hit", "Sentences", "Unsupported sentences"]  # fmt: skip


def answer_row(name: str, scores: Sequence[AnswerScore], generator: str) -> list[str]:
    sentences = sum(s.sentences for s in scores if not s.abstained)
    unsupported = sum(s.unsupported for s in scores if not s.abstained)
    abstained = [s for s in scores if s.abstained]
    return [name, generator, f"{len(scores):,}", f"{_share([s.hit for s in scores]):.1%}",
            f"{_share([s.abstained for s in scores]):.1%}", f"{_share([s.would_hit for s in abstained]):.1%}",
            f"{sentences:,}", f"{unsupported / sentences if sentences else 0.0:.1%}"]  # fmt: skip


def by_answerability(name: str, questions: list[Question]) -> list[tuple[str, list[Question]]]:
    """A set with meta.answerable rows (a content-gap set, clinician-dev's unanswerable questions)
    reports its gap and answerable questions apart."""
    if not any("answerable" in q.meta for q in questions):
        return [(name, questions)]
    answerable = [q for q in questions if q.meta.get("answerable")]
    gaps = [q for q in questions if not q.meta.get("answerable")]
    return [(f"{name} (answerable)", answerable), (f"{name} (content gaps)", gaps)]


@dataclass(frozen=True)
class SourceScore:
    """Where an answer's sentences come from: how many of its quoted sentences cite a gold
    document, and whether the first one does (the sentence a clinician reads)."""

    sentences: int
    from_gold: int
    first_from_gold: bool
    direction: str | None  # the yes/no line's direction, when the answer has one
    # Whether the first quoted sentence holds a gold passage or is part of one: the answer leads
    # with what answers the question, not only with its article. None: the question names none.
    first_quotes_gold: bool | None = None


def score_sources(question: Question, answer: Answer) -> SourceScore:
    """Only the sentences that quote evidence count (not the rule-made yes/no line); a sentence is
    from gold when a number it cites is a chunk of a gold document. An abstention quotes nothing:
    its "I don't have adequate information" is no answer sentence, from gold or not."""
    doc_of = {c.n: c.doc_id for c in answer.citations}
    quoted = [] if answer.abstained else [s for s in answer.sentences if not is_summary(s.text)]
    gold = [any(doc_of.get(n) in question.gold_doc_ids for n in s.citations) for s in quoted]
    direction = next((d for s in answer.sentences if (d := direction_of(s.text))), None)
    first_quotes = None
    if question.gold_passages and quoted:
        first = normalize(quoted[0].text)
        passages = [normalize(p) for p in question.gold_passages]
        first_quotes = any(p in first or first in p for p in passages if p)
    return SourceScore(len(quoted), sum(gold), bool(gold and gold[0]), direction, first_quotes)


def source_shares(scores: Sequence[SourceScore]) -> tuple[int, float, float]:
    """Of the answers with quoted sentences: how many, the share of their sentences from a gold
    article, and the share whose first sentence is."""
    answered = [s for s in scores if s.sentences]
    if not answered:
        return 0, 0.0, 0.0
    total = sum(s.sentences for s in answered)
    return (len(answered), sum(s.from_gold for s in answered) / total,
            sum(s.first_from_gold for s in answered) / len(answered))  # fmt: skip


def first_quote_share(scores: Sequence[SourceScore]) -> float | None:
    """Of the answers to questions with gold passages, the share whose first sentence quotes one;
    None when no question has them."""
    judged = [s.first_quotes_gold for s in scores if s.first_quotes_gold is not None]
    return sum(judged) / len(judged) if judged else None
