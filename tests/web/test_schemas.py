"""The API's answer is the answer record: a field added to `records.Answer` (or `Citation`) and not to
the API schema fails here, instead of being dropped from every response without a word."""

from __future__ import annotations

from dataclasses import fields

from evidenceqa.records import Answer, Citation, Sentence, Usage
from evidenceqa.web.schemas import AnswerOut, CitationOut

# Batch files only: a row of `ask --queries` carries its query's id; an API answer has its own ids.
BATCH_ONLY = {"query_id"}


def test_the_api_answer_carries_every_field_of_the_answer_record() -> None:
    citation = Citation(1, "chg", "chg#1", "Chlorhexidine", 2015, "Results", "Not on mucous membranes.")
    answer = Answer(
        question="Can chlorhexidine be used on mucous membranes?", answer="No [1].", abstained=False,
        citations=[citation], sentences=[Sentence("No [1].", [1], supported=True)], unsupported=0,
        generator="extractive", filters={}, temporal=None, timings_ms={"total": 1.0},
        cost_usd={"total": 0.0}, usage=Usage(), index_version=3,
    )  # fmt: skip
    assert set(answer.to_row()) - BATCH_ONLY <= set(AnswerOut.model_fields)
    assert {f.name for f in fields(Citation)} <= set(CitationOut.model_fields)
