"""The benchmark review pages: any clinician reviews, decisions keep who and when, forms need the CSRF
token, document text is shown as text, and the validated set downloads in the shared format."""

from __future__ import annotations

import json

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from evidenceqa.curation import review_store
from evidenceqa.curation.candidates import Candidate
from tests.curation.samples import SCRIPT, sample_candidates
from tests.web.conftest import Client, store_of


@pytest.fixture(scope="module")
def proposals(app: FastAPI) -> list[Candidate]:
    loaded = sample_candidates()
    review_store.load_candidates(store_of(app), "periop", loaded)
    return loaded


def post(client: Client, candidate: Candidate, **form: object) -> object:
    return client.post(f"/review/periop/{candidate.candidate_id}", data={"csrf_token": client.csrf, **form})


def test_review_needs_a_login(anonymous: TestClient, proposals: list[Candidate]) -> None:
    for path in ("/review", "/review/periop", f"/review/periop/{proposals[0].candidate_id}",
                 "/review/periop/export.jsonl"):  # fmt: skip
        response = anonymous.get(path)
        assert response.status_code == 303 and response.headers["location"].startswith("/login")


def test_the_pair_page_shows_the_source_and_its_passages_as_text(
    alice: Client, proposals: list[Candidate]
) -> None:
    page = alice.get(f"/review/periop/{proposals[2].candidate_id}")
    assert page.status_code == 200
    assert SCRIPT not in page.text and "&lt;script&gt;alert(1)&lt;/script&gt;" in page.text
    chg = alice.get(f"/review/periop/{proposals[0].candidate_id}").text
    assert "Chlorhexidine gluconate should not be used on mucous membranes." in chg
    assert 'value="shave" checked' in chg and "answers, confidence 0.70" in chg
    assert "clinical safety, expected precision critical" in chg
    assert '<a href="/review">Review</a>' in chg  # the navigation leads here


def test_a_form_without_the_csrf_token_is_refused(
    alice: Client, proposals: list[Candidate], app: FastAPI
) -> None:
    response = alice.post(f"/review/periop/{proposals[0].candidate_id}", data={"action": "accept"})
    assert response.status_code == 403
    assert review_store.review_item(store_of(app), "periop", proposals[0].candidate_id).history == []


def test_unknown_benchmark_or_pair_is_not_found(alice: Client, proposals: list[Candidate]) -> None:
    assert alice.get("/review/nothing-here").status_code == 404
    assert alice.get("/review/periop/0000000000000000").status_code == 404
    assert post(alice, Candidate.from_dict({**proposals[0].to_dict(), "candidate_id": "0" * 16}),
                action="accept").status_code == 404  # fmt: skip


def test_accept_edit_reject_then_download(
    alice: Client, bob: Client, proposals: list[Candidate], app: FastAPI
) -> None:
    chg, shave, xss = proposals
    assert "0 of 3 pairs reviewed" in alice.get("/review/periop").text

    accepted = post(alice, chg, action="accept", comment="clear")
    assert (
        accepted.status_code == 303 and accepted.headers["location"] == f"/review/periop/{shave.candidate_id}"
    )
    # An edit that empties the question is refused, with the reason, and nothing is stored.
    refused = post(
        bob, shave, action="edit", question=" ", question_type="factual", expected_precision="high"
    )
    assert refused.status_code == 400 and "an edited question cannot be empty" in refused.text
    edited = post(bob, shave, action="edit", question="Does shaving raise infection rates?",
                  answer=shave.answer, gold=["shave"], extra_gold="guideline-7",
                  question_type="clinical safety", expected_precision="critical", topic="wound care")  # fmt: skip
    assert edited.headers["location"] == f"/review/periop/{xss.candidate_id}"
    rejected = post(alice, xss, action="reject")
    assert rejected.headers["location"] == "/review/periop"  # nothing left to review

    listing = alice.get("/review/periop").text
    assert "3 of 3 pairs reviewed: 1 accepted, 1 edited, 1 rejected." in listing
    history = review_store.review_item(store_of(app), "periop", shave.candidate_id).history
    assert [(d.decision, d.reviewer) for d in history] == [("edit", "bob@example.org")]
    assert history[0].reviewed_at.tzinfo is not None

    download = alice.get("/review/periop/export.jsonl")
    assert download.status_code == 200
    assert download.headers["content-disposition"] == 'attachment; filename="periop-validated.jsonl"'
    rows = [json.loads(line) for line in download.text.splitlines()]
    assert [r["query_id"] for r in rows] == [chg.candidate_id, shave.candidate_id]
    assert rows[0]["meta"]["reviewer"] == "alice@example.org" and rows[0]["meta"]["comment"] == "clear"
    assert rows[1]["question"] == "Does shaving raise infection rates?"
    assert rows[1]["gold_doc_ids"] == ["shave", "guideline-7"]
    assert (rows[1]["meta"]["question_type"], rows[1]["meta"]["expected_precision"]) == (
        "clinical safety",
        "critical",
    )
