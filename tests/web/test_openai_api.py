"""The OpenAI-compatible API through the official `openai` SDK against the app served by uvicorn
(SQLite and PostgreSQL): models, answers streamed and not with footnoted citations, a two-turn
conversation, an abstention, the search model, and errors in OpenAI's shape with nothing stored."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

import openai
import pytest
from openai import OpenAI

from evidenceqa import DISCLAIMER
from evidenceqa.answer import ABSTAIN_MESSAGE
from evidenceqa.store import answers_between, lookups_between
from evidenceqa.web.openai_api import Footnoting, with_footnotes
from evidenceqa.web.schemas import AnswerOut, CitationOut
from tests.web.conftest import CEFAZOLIN, SHAVE, Live

ALICE = "alice@example.org"


def client(live: Live, key: str | None = None) -> OpenAI:
    return OpenAI(base_url=f"{live.url}/v1", api_key=key or live.tokens[ALICE], max_retries=0, timeout=120)


def stored(live: Live) -> list[Any]:
    now = datetime.now(UTC)
    return answers_between(live.store, now - timedelta(days=1), now + timedelta(days=1))


def test_the_models_are_listed(live: Live) -> None:
    models = client(live).models.list()
    assert [m.id for m in models.data] == ["evidenceqa", "evidenceqa-search"]
    assert client(live).models.retrieve("evidenceqa").owned_by == "evidenceqa"


def test_an_answer_comes_with_its_citations_as_footnotes_and_is_stored(live: Live) -> None:
    before = len(stored(live))
    completion = client(live).chat.completions.create(
        model="evidenceqa", messages=[{"role": "user", "content": CEFAZOLIN}]
    )
    [choice] = completion.choices
    content = choice.message.content or ""
    assert choice.finish_reason == "stop" and choice.message.role == "assistant"
    record = completion.model_extra["evidenceqa"]  # the whole answer record, beside what OpenAI defines
    assert not record["abstained"] and record["citations"]
    markers = set(re.findall(r"\[\^(\d+)\](?!:)", content))
    notes = dict(re.findall(r"^\[\^(\d+)\]: (.+)$", content, re.M))
    assert markers and markers == set(notes) == {str(c["n"]) for c in record["citations"]}
    for citation in record["citations"]:
        assert (
            citation["text"] in notes[str(citation["n"])]
            and citation["chunk_id"] in notes[str(citation["n"])]
        )
    assert not re.search(r"\[\d+\]", content)  # every marker became a footnote
    assert content.endswith(f"_{DISCLAIMER}_")
    [after] = stored(live)[before:]
    assert after.channel == "openai" and after.answer.question == CEFAZOLIN


def test_a_streamed_answer_arrives_in_chunks_that_make_the_same_reply(live: Live) -> None:
    question = [
        {"role": "user", "content": "Does tranexamic acid reduce blood loss after knee arthroplasty?"}
    ]
    chunks = list(client(live).chat.completions.create(model="evidenceqa", messages=question, stream=True))
    text = "".join(c.choices[0].delta.content or "" for c in chunks)
    assert chunks[0].choices[0].delta.role == "assistant"
    # Role, the answer's text as it is written, then its references, and the end with the record.
    pieces = [c.choices[0].delta.content for c in chunks if c.choices[0].delta.content]
    assert len(pieces) >= 2 and "[^1]: " not in pieces[0] and pieces[-1].startswith("\n\n[^1]: "), pieces
    assert [c.choices[0].finish_reason for c in chunks] == [None] * (len(chunks) - 1) + ["stop"]
    assert chunks[-1].model_extra["evidenceqa"]["citations"][0]["doc_id"] == "txa"
    assert len({c.id for c in chunks}) == 1
    # Asked again, not streamed (now from the cache): the same reply, footnotes and all.
    whole = client(live).chat.completions.create(model="evidenceqa", messages=question)
    assert whole.model_extra["evidenceqa"]["cache_hit"]
    assert text == whole.choices[0].message.content and "[^1]: " in text


def test_the_last_user_message_of_a_conversation_is_the_question(live: Live) -> None:
    first = client(live).chat.completions.create(
        model="evidenceqa", messages=[{"role": "user", "content": SHAVE}]
    )
    follow_up = "Is chlorhexidine gluconate safe on mucous membranes?"
    second = client(live).chat.completions.create(
        model="evidenceqa",
        messages=[
            {"role": "system", "content": "Answer from the library."},
            {"role": "user", "content": SHAVE},
            {"role": "assistant", "content": first.choices[0].message.content},
            {"role": "user", "content": [{"type": "text", "text": follow_up}]},
        ],
    )
    record = second.model_extra["evidenceqa"]
    assert record["question"] == follow_up and {c["doc_id"] for c in record["citations"]} == {"chg"}
    assert record["searched_for"] is None  # a question of its own: searched as asked


def test_a_follow_up_leans_on_the_earlier_user_messages(live: Live) -> None:
    earlier = "Does tranexamic acid reduce blood loss after knee arthroplasty?"
    messages = [
        {"role": "user", "content": earlier},
        {"role": "assistant", "content": "It does [^1]."},
        {"role": "user", "content": "Is it safe after knee arthroplasty?"},
    ]
    whole = client(live).chat.completions.create(model="evidenceqa", messages=messages)
    record = whole.model_extra["evidenceqa"]
    assert record["question"] == "Is it safe after knee arthroplasty?"
    assert record["searched_for"] == "Is tranexamic acid safe after knee arthroplasty?"
    assert record["citations"][0]["doc_id"] == "txa"
    streamed = list(client(live).chat.completions.create(model="evidenceqa", messages=messages, stream=True))
    assert streamed[-1].model_extra["evidenceqa"]["searched_for"] == record["searched_for"]
    # A pasted document earlier in the chat is no question to lean on: the answer comes all the same.
    pasted = [{"role": "user", "content": "notes " * 3000}, *messages[1:]]
    plain = client(live).chat.completions.create(model="evidenceqa", messages=pasted)
    assert plain.model_extra["evidenceqa"]["searched_for"] is None


def test_a_question_the_library_cannot_answer_abstains_without_references(live: Live) -> None:
    completion = client(live).chat.completions.create(
        model="evidenceqa",
        messages=[{"role": "user", "content": "What humidity should an operating room have?"}],
    )
    content = completion.choices[0].message.content or ""
    assert completion.model_extra["evidenceqa"]["abstained"]
    assert content.startswith(ABSTAIN_MESSAGE) and "[^" not in content


def test_the_search_model_returns_ranked_passages_with_references(live: Live) -> None:
    now = datetime.now(UTC)
    searches = lookups_between(live.store, now - timedelta(days=1), now + timedelta(days=1))
    completion = client(live).chat.completions.create(
        model="evidenceqa-search", messages=[{"role": "user", "content": SHAVE}]
    )
    content = completion.choices[0].message.content or ""
    passages = completion.model_extra["evidenceqa"]["passages"]
    assert content.startswith("1. Shaving the incision site")
    assert passages[0]["cite"] in content and passages[0]["chunk_id"] in content
    now = datetime.now(UTC)
    counted = lookups_between(live.store, now - timedelta(days=1), now + timedelta(days=1)) - searches
    assert counted == {("openai", "search"): 1}  # counted in the pilot report; no answer is stored


def test_errors_come_in_openais_shape_and_store_nothing(live: Live) -> None:
    before = len(stored(live))
    with pytest.raises(openai.AuthenticationError) as unauthorised:
        client(live, key="not-a-token").chat.completions.create(
            model="evidenceqa", messages=[{"role": "user", "content": SHAVE}]
        )
    assert unauthorised.value.code == "invalid_api_key" and unauthorised.value.type == "invalid_request_error"
    with pytest.raises(openai.NotFoundError) as unknown:
        client(live).chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": SHAVE}])
    assert unknown.value.code == "model_not_found" and unknown.value.param == "model"
    with pytest.raises(openai.BadRequestError) as too_long:
        client(live).chat.completions.create(
            model="evidenceqa", messages=[{"role": "user", "content": "why? " * 2000}]
        )
    assert "the limit is 2,000 (setting max_question_chars)" in too_long.value.message
    with pytest.raises(openai.BadRequestError) as too_long_streamed:  # refused before the stream starts
        client(live).chat.completions.create(
            model="evidenceqa", messages=[{"role": "user", "content": "why? " * 2000}], stream=True
        )
    assert too_long_streamed.value.status_code == 400
    with pytest.raises(openai.BadRequestError) as empty:
        client(live).chat.completions.create(model="evidenceqa", messages=[])
    assert empty.value.param == "messages"
    with pytest.raises(openai.BadRequestError) as no_question:
        client(live).chat.completions.create(
            model="evidenceqa", messages=[{"role": "system", "content": "Hi"}]
        )
    assert "no user message" in no_question.value.message
    assert len(stored(live)) == before


def test_markers_split_across_streamed_pieces_still_become_footnotes() -> None:
    footnoting = Footnoting()
    shown = [footnoting.feed(piece) for piece in ["Clipping [", "1] lowers it [2", "][3]", " a [b] c ["]]
    assert shown == ["Clipping ", "[^1] lowers it ", "[^2][^3]", " a [b] c "]
    assert footnoting.flush() == "["


def test_a_source_with_two_cited_passages_is_one_footnote() -> None:
    def cited(chunk_id: str, section: str, text: str) -> CitationOut:
        return CitationOut(n=1, doc_id="pubmed-1", chunk_id=chunk_id, title=None, year=2011, section=section,
                           text=text, body=text, url=None, label="Journal abstract on Apoptosis", reference="Journal abstract on Apoptosis. 2011. [pubmed-1]")  # fmt: skip

    answer = AnswerOut(
        answer_id=1, conversation_id=1, question="q", answer="Cells die [1].", abstained=False,
        citations=[cited("p#1", "Background", "Cells die."), cited("p#3", "Results", "They do.")],
        unsupported_sentences=[], filters={}, timings_ms={}, cost_usd=0.0, cost_by_stage_usd={},
        generator="extractive", p_answerable=None, cache_hit=False, index_version=1,
    )  # fmt: skip
    notes = [line for line in with_footnotes(answer).splitlines() if line.startswith("[^")]
    assert notes == [
        "[^1]: Journal abstract on Apoptosis, 2011 — Background: “Cells die.” (passage p#1); "
        "Results: “They do.” (passage p#3)"
    ]
