"""Abstention calibrated on one half and reported on the other; answers scored against gold."""

from __future__ import annotations

import random

from evidenceqa.answer.abstain import FEATURES, Abstainer
from evidenceqa.answer.base import Citation, Usage
from evidenceqa.answer.pipeline import Answer
from evidenceqa.bench.answers import Sample, by_answerability, calibrate, evaluate, halves, score_answer
from evidenceqa.bench.retrieval import Question


def _samples(n: int, seed: int = 5) -> list[Sample]:
    rng = random.Random(seed)
    found = []
    for i in range(n):
        answerable = i % 3 != 0
        centre = 0.6 if answerable else 0.35
        signals = {"dense_top": rng.gauss(centre, 0.08), "keyword_per_term": rng.gauss(centre * 3, 0.4),
                   "coverage": rng.gauss(centre + 0.2, 0.1)}  # fmt: skip
        # The other signals carry nothing here: the fit must not be thrown by uninformative ones.
        signals |= {name: rng.gauss(1.0, 0.3) for name in FEATURES if name not in signals}
        found.append(Sample(str(i), answerable, signals, True))
    return found


def test_calibration_on_the_fit_half_holds_on_the_reported_half() -> None:
    fitting, held_out = halves(_samples(600))
    model = calibrate(fitting, 0.10, "synthetic")
    scores = evaluate(model, held_out)
    assert scores.gap_questions + scores.answerable_questions == 300
    assert scores.false_abstentions <= 0.15 and scores.gaps_abstained >= 0.8 and scores.precision > 0.7
    assert scores.auc is not None and scores.auc > 0.9
    assert evaluate(Abstainer(), held_out).auc is None  # the floor has no probabilities to rank by
    assert model.fitted_on == "synthetic"


def test_a_search_that_found_nothing_is_always_abstained_on() -> None:
    model = calibrate(_samples(90), 0.10, "")
    scores = evaluate(model, [Sample("x", True, {}, False)])
    assert scores.false_abstentions == 1.0 and scores.precision == 0.0


def _answer(text: str, doc_ids: list[str], abstained: bool = False) -> Answer:
    citations = [Citation(i + 1, d, f"{d}#0", None, None, None, text) for i, d in enumerate(doc_ids)]
    return Answer(
        "q", text, abstained, citations, [], 0, "extractive", {}, None, {}, {"total": 0.0}, Usage(), 1
    )


def test_a_hit_cites_a_gold_document_and_contains_a_gold_span() -> None:
    q = Question("1", "q", ["covidqa-1"], ["HCoV-OC43"], {})
    assert score_answer(q, _answer("The commonest was hcov-oc43 [1].", ["covidqa-1"])).hit
    assert not score_answer(q, _answer("The commonest was HCoV-OC43 [1].", ["covidqa-2"])).hit
    assert not score_answer(q, _answer("It was a coronavirus [1].", ["covidqa-1"])).hit
    pubmed = Question("2", "q", ["pubmed-9"], [], {})
    assert score_answer(pubmed, _answer("Yes [1].", ["pubmed-9"])).hit


def test_a_content_gap_set_reports_its_two_kinds_apart() -> None:
    rows = [
        Question("1", "q", [], [], {"answerable": True}),
        Question("2", "q", [], [], {"answerable": False}),
    ]
    assert [(name, [q.query_id for q in group]) for name, group in by_answerability("gaps", rows)] == [
        ("gaps (answerable)", ["1"]),
        ("gaps (content gaps)", ["2"]),
    ]
    assert by_answerability("plain", [Question("3", "q", [], [], {})])[0][0] == "plain"
