"""Abstention calibrated on one half and reported on the other; answers scored against gold."""

from __future__ import annotations

import random

from evidenceqa.answer.abstain import FEATURES, Abstainer, threshold_for
from evidenceqa.answer.calibration import Sample, calibrate, out_of_fold
from evidenceqa.bench.answers import (
    answer_in_evidence,
    by_answerability,
    evaluate,
    first_quote_share,
    halves,
    left_out,
    score_answer,
    score_sources,
    source_shares,
)
from evidenceqa.bench.retrieval import Question
from evidenceqa.records import Answer, Citation, Sentence, Usage
from evidenceqa.retrieval.retriever import SearchResponse, SearchResult
from tests.answer.evidence import chunk


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
        found.append(Sample(str(i), answerable, signals, True, answerable))
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
    scores = evaluate(model, [Sample("x", True, {}, False, False)])
    assert scores.false_abstentions == 1.0 and scores.precision == 0.0


def test_verified_labels_leave_out_what_says_nothing_about_adequacy() -> None:
    """An answerable question whose evidence misses the answer, and a gap question whose evidence
    states it from another source, are neither counted as false abstentions nor as gaps."""
    clean = _samples(300)
    missed = [
        Sample(f"m{i}", True, s.signals, True, False) for i, s in enumerate(clean[:60]) if not s.answerable
    ]
    elsewhere = [
        Sample(f"e{i}", False, s.signals, True, True) for i, s in enumerate(clean[:60]) if s.answerable
    ]
    model = calibrate(clean[::2] + missed + elsewhere, 0.10, "synthetic")
    as_held_out = evaluate(model, clean[1::2] + missed + elsewhere)
    verified = evaluate(model, clean[1::2] + missed + elsewhere, verified=True)
    assert verified == evaluate(model, clean[1::2], verified=True) == evaluate(model, clean[1::2])
    assert as_held_out.answerable_questions == verified.answerable_questions + len(missed)
    assert as_held_out.false_abstentions > verified.false_abstentions  # weak signals, abstained on
    shares = {name: (count, share) for name, count, share in left_out(model, missed + elsewhere)}
    assert shares["answerable, but the evidence misses the answer"][0] == str(len(missed))
    assert shares["gap, but the evidence states the answer elsewhere"][0] == str(len(elsewhere))


def test_the_threshold_is_read_off_probabilities_of_questions_not_fitted_on() -> None:
    fitting = _samples(300)
    x = [[s.signals[name] for name in FEATURES] for s in fitting]
    y = [s.answerable for s in fitting]
    held_apart = out_of_fold(x, y, 5)
    flipped = out_of_fold(x, [not y[0], *y[1:]], 5)
    # A question's probability comes from a model that never saw its label; the others' did see it.
    assert flipped[0] == held_apart[0] and flipped[1] != held_apart[1]
    assert calibrate(fitting, 0.10, "").threshold == threshold_for(held_apart, y, 0.10)


def _found(*results: tuple[str, str]) -> SearchResponse:
    hits = [
        SearchResult(rank, chunk(cid, text, "", 2020, []), 1.0, {})
        for rank, (cid, text) in enumerate(results, 1)
    ]
    return SearchResponse("q", "q", "q", "hybrid", {}, None, [], "general", 0.5, hits)


def test_the_evidence_states_the_answer_when_a_gold_chunk_holds_a_span_or_a_review_says_so() -> None:
    q = Question("7", "q", ["covidqa-1"], ["14 days", "up to two weeks after exposure"], {})
    assert answer_in_evidence(q, _found(("covidqa-1#3", "Incubation lasts 14 days.")), {})
    # The span in another document: only a long one is taken as the same statement.
    assert not answer_in_evidence(q, _found(("pubmed-2#0", "Patients were followed for 14 days.")), {})
    assert answer_in_evidence(q, _found(("pubmed-2#0", "Symptoms start up to two weeks after exposure.")), {})
    # A gold document's chunk without a span does not answer; a reviewed chunk does.
    assert not answer_in_evidence(q, _found(("covidqa-1#4", "Methods."), ("medquad-9#1", "Two weeks.")), {})
    assert answer_in_evidence(q, _found(("covidqa-1#4", "Methods."), ("medquad-9#1", "Two weeks.")),
                              {"7": "medquad-9#1"})  # fmt: skip
    # Without spans (pubmedqa), any chunk of a gold document.
    assert answer_in_evidence(Question("8", "q", ["pubmed-9"], [], {}), _found(("pubmed-9#2", "Yes.")), {})


def _answer(
    text: str, doc_ids: list[str], abstained: bool = False, sentences: list[Sentence] | None = None
) -> Answer:
    citations = [Citation(i + 1, d, f"{d}#0", None, None, None, text) for i, d in enumerate(doc_ids)]
    return Answer(
        "q",
        text,
        abstained,
        citations,
        sentences or [],
        0,
        "extractive",
        {},
        None,
        {},
        {"total": 0.0},
        Usage(),
        1,
    )


def test_a_hit_cites_a_gold_document_and_contains_a_gold_span() -> None:
    q = Question("1", "q", ["covidqa-1"], ["HCoV-OC43"], {})
    assert score_answer(q, _answer("The commonest was hcov-oc43 [1].", ["covidqa-1"])).hit
    assert not score_answer(q, _answer("The commonest was HCoV-OC43 [1].", ["covidqa-2"])).hit
    assert not score_answer(q, _answer("It was a coronavirus [1].", ["covidqa-1"])).hit
    pubmed = Question("2", "q", ["pubmed-9"], [], {})
    assert score_answer(pubmed, _answer("Yes [1].", ["pubmed-9"])).hit


def test_answer_sentences_are_scored_by_source_and_an_abstention_quotes_none() -> None:
    q = Question("1", "q", ["pubmed-1"], [], {})
    quoted = [Sentence("Found less infection.", [1]), Sentence("Another study agreed.", [2])]
    answer = _answer(
        "Found less infection. [1] Another study agreed. [2]", ["pubmed-2", "pubmed-1"], sentences=quoted
    )
    scored = score_sources(q, answer)  # two quoted, one from gold, the first not
    assert (scored.sentences, scored.from_gold, scored.first_from_gold) == (2, 1, False)
    abstention = _answer("I don't have adequate information to answer this question.", [], True,
                         [Sentence("I don't have adequate information to answer this question.")])  # fmt: skip
    assert score_sources(q, abstention).sentences == 0
    # An abstention is no answer: it neither counts as answered nor lowers the shares of the answers.
    assert source_shares([score_sources(q, answer), score_sources(q, abstention)]) == (1, 0.5, 0.0)


def test_the_first_sentence_is_judged_against_the_gold_passages() -> None:
    passage = "Clipping rather than shaving reduces surgical site infection."
    q = Question("1", "q", ["cochrane-1"], [passage], {})
    leads = [
        Sentence("Clipping rather than  shaving reduces surgical site infection.", [1]),
        Sentence("Razors cut.", [1]),
    ]
    follows = list(reversed(leads))
    scores = [score_sources(q, _answer(" ".join(s.text for s in sentences), ["cochrane-1"], sentences=sentences))
              for sentences in (leads, follows)]  # fmt: skip
    assert [s.first_quotes_gold for s in scores] == [True, False]
    assert first_quote_share(scores) == 0.5
    # A question with no gold passages (PubMedQA's) is not judged.
    unjudged = score_sources(
        Question("2", "q", ["pubmed-1"], [], {}), _answer("Razors cut.", ["pubmed-1"], sentences=leads)
    )
    assert unjudged.first_quotes_gold is None and first_quote_share([unjudged]) is None


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
