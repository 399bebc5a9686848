"""Review decisions in the store, on SQLite and PostgreSQL: who decided what, and when."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from evidenceqa.curation import review_store
from evidenceqa.curation.candidates import Candidate, Decision
from evidenceqa.store import NotFound, Store, create_user
from tests.curation.samples import sample_candidates
from tests.store.conftest import START, Clock

EARLIER = datetime(2025, 1, 5, 12, 0, tzinfo=UTC)


def test_decisions_are_kept_with_who_and_when(store: Store, clock: Clock) -> None:
    chg, shave, xss = sample_candidates()
    assert review_store.load_candidates(store, "periop-v1", [chg, shave, xss]) == (3, 0)
    reed = create_user(store, "reed@example.org", "Dr Reed", "correct horse battery")
    review_store.record_decision(
        store, "periop-v1", Decision(chg.candidate_id, "accept", "ignored", EARLIER), reed
    )
    clock.advance(minutes=5)
    edit = Decision(chg.candidate_id, "edit", "ignored", EARLIER, question="Can chlorhexidine touch mucosa?",
                    gold_doc_ids=["chg"], comment="narrower")  # fmt: skip
    review_store.record_decision(store, "periop-v1", edit, reed)
    # An offline expert's decision from a CSV: their name and time as recorded, no account.
    review_store.record_decision(
        store, "periop-v1", Decision(xss.candidate_id, "reject", "Dr Kim (CSV)", EARLIER)
    )

    item = review_store.review_item(store, "periop-v1", chg.candidate_id)
    assert [(d.decision, d.reviewer, d.reviewed_at) for d in item.history] == [
        ("accept", "reed@example.org", START),
        ("edit", "reed@example.org", START.replace(minute=5)),
    ]
    assert item.decision.question == "Can chlorhexidine touch mucosa?" and item.decision.gold_doc_ids == [
        "chg"
    ]
    listed, decided = review_store.decisions_in_force(store, "periop-v1")
    assert [c.candidate_id for c in listed] == [chg.candidate_id, shave.candidate_id, xss.candidate_id]
    assert {k: (d.decision, d.reviewer) for k, d in decided.items()} == {
        chg.candidate_id: ("edit", "reed@example.org"), xss.candidate_id: ("reject", "Dr Kim (CSV)"),
    }  # fmt: skip
    assert decided[xss.candidate_id].reviewed_at == EARLIER
    assert review_store.next_pending(store, "periop-v1") == shave.candidate_id


def test_loading_again_updates_candidates_and_keeps_decisions(store: Store) -> None:
    chg, shave, _ = sample_candidates()
    review_store.load_candidates(store, "v2", [chg])
    review_store.record_decision(store, "v2", Decision(chg.candidate_id, "accept", "Dr Kim", EARLIER))
    chg.answer = "Revised answer text from a rebuilt candidates file."
    assert review_store.load_candidates(store, "v2", [chg, shave]) == (1, 1)
    listed, decided = review_store.decisions_in_force(store, "v2")
    assert listed[0].answer.startswith("Revised") and listed[1].candidate_id == shave.candidate_id
    assert decided[chg.candidate_id].decision == "accept"
    assert review_store.benchmarks(store) == [("v2", 2)]


def test_what_cannot_be_stored(store: Store) -> None:
    chg = sample_candidates()[0]
    review_store.load_candidates(store, "v3", [chg])
    with pytest.raises(ValueError, match="decision must be one of"):
        review_store.record_decision(store, "v3", Decision(chg.candidate_id, "approve", "Dr Kim", EARLIER))
    with pytest.raises(ValueError, match="at least one gold source"):
        review_store.record_decision(store, "v3", Decision(chg.candidate_id, "edit", "Dr Kim", EARLIER,
                                                           gold_doc_ids=[]))  # fmt: skip
    with pytest.raises(NotFound):
        review_store.record_decision(store, "v3", Decision("no-such-id", "accept", "Dr Kim", EARLIER))
    with pytest.raises(NotFound):
        review_store.review_items(store, "never-loaded")
    with pytest.raises(ValueError, match="benchmark name"):
        review_store.load_candidates(store, "../etc", [chg])
    with pytest.raises(ValueError, match="candidate ids must be"):
        review_store.load_candidates(
            store, "v3", [Candidate.from_dict({**chg.to_dict(), "candidate_id": "a/../b"})]
        )
    assert review_store.review_item(store, "v3", chg.candidate_id).history == []
