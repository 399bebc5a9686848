"""Failure categories: the decision on hand-made probes, and on constructed cases over a real library."""

from __future__ import annotations

from dataclasses import replace
from datetime import date

import pytest

from evidenceqa.analytics.failures import Diagnoser, FoundDocument, Probe, categorise
from evidenceqa.answer.engine import Engine
from tests.analytics.home import OTITIS, SHAVE, TXA, TXA_SINCE
from tests.analytics.rows import exchange

TODAY = date(2026, 1, 15)


def _probe(name: str, relevant: bool, best: str | None) -> Probe:
    documents = (FoundDocument(best, best.title(), 2010, 1),) if best else ()
    return Probe(name, relevant, 0.9 if relevant else 0.1, {}, documents, None)


@pytest.mark.parametrize(
    ("probes", "time_phrase", "cited", "expected"),
    [
        ([_probe("re-run", False, "x"), _probe("wider", False, "x")], None, [], "missing_content"),
        ([_probe("re-run", False, "x")], "since 2020", [], "missing_content"),  # no topic: content first
        ([_probe("re-run", False, None), _probe("wider", True, "txa")], "since 2021", [], "temporal"),
        ([_probe("re-run", True, "shave")], None, ["chg"], "retrieval_mismatch"),
        ([_probe("re-run", False, None), _probe("document level", True, "shave")], None, [], "retrieval_mismatch"),
        ([_probe("re-run", True, "shave"), _probe("wider", True, "shave")], None, ["shave", "chg"], "edge_case"),
        ([_probe("re-run", True, None)], None, [], "missing_content"),  # "relevant" with no document
    ],
)  # fmt: skip
def test_the_category_follows_the_probes(
    probes: list[Probe], time_phrase: str | None, cited: list[str], expected: str
) -> None:
    category, reason = categorise(probes, time_phrase, cited)
    assert category == expected and reason


@pytest.fixture(scope="module")
def diagnoser(engine: Engine) -> Diagnoser:
    return Diagnoser.of(engine, TODAY)


def test_a_question_on_a_topic_the_library_lacks_is_missing_content(diagnoser: Diagnoser) -> None:
    found = diagnoser.diagnose(exchange(1, abstained=True, question=OTITIS))
    assert found.category == "missing_content"
    probes = found.evidence["probes"]
    assert [p["name"] for p in probes] == ["re-run", "wider", "document level"]
    assert all(not p["relevant"] and p["p_answerable"] < found.evidence["threshold"] for p in probes)


def test_a_document_the_answer_did_not_surface_is_a_retrieval_mismatch(diagnoser: Diagnoser) -> None:
    # Rated Very poor, citing the chlorhexidine paper: the library's paper on shaving was not surfaced.
    found = diagnoser.diagnose(exchange(2, 0.2, question=SHAVE, cited=("chg",)))
    assert found.category == "retrieval_mismatch"
    assert "'Hair removal before spinal surgery' (shave)" in found.reason
    assert found.evidence["cited"] == ["chg"]
    # An abstention on it too: nothing was surfaced, and a search finds the document now.
    assert diagnoser.diagnose(exchange(3, abstained=True, question=SHAVE)).category == "retrieval_mismatch"


def test_a_question_with_a_time_limit_is_temporal(diagnoser: Diagnoser) -> None:
    found = diagnoser.diagnose(exchange(4, abstained=True, question=TXA_SINCE))
    assert found.category == "temporal"
    assert found.evidence["time_limit"] == "since 2021"
    rerun, wider, _ = found.evidence["probes"]
    assert rerun["documents"] == [] and rerun["time_limit"] == "year ≥ 2021 (from 'since 2021')"
    # Without the limit the library's 2019 paper is there: the limit, not the library, failed it.
    assert (
        wider["relevant"]
        and wider["documents"][0]["doc_id"] == "txa"
        and wider["documents"][0]["year"] == 2019
    )


def test_a_poor_rating_with_the_best_document_cited_is_an_edge_case(diagnoser: Diagnoser) -> None:
    found = diagnoser.diagnose(exchange(5, 0.2, question=TXA, cited=("txa",)))
    assert found.category == "edge_case"
    # The answer's own recorded time phrase counts too, even if the parser would not find one now.
    plain = exchange(6, 0.2, question=TXA, cited=("txa",))
    timed = replace(plain, answer=replace(plain.answer, temporal="year ≥ 2015 (from 'since 2015')"))
    assert diagnoser.diagnose(timed).category == "temporal"
