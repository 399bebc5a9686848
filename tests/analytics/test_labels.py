"""Failure labels in the store: automatic labels, an admin's correction, and its survival of
re-labelling; on SQLite and on a real PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from evidenceqa.records import Answer, Usage
from evidenceqa.settings import Settings
from evidenceqa.store import (
    InvalidCategory,
    NotFound,
    Store,
    User,
    correct_label,
    create_user,
    failure_labels,
    open_store,
    record_exchange,
    save_automatic_label,
    start_conversation,
)
from tests.analytics.home import START
from tests.store.postgres import PostgresServer, start_postgres


@pytest.fixture(scope="module")
def postgres() -> Iterator[PostgresServer]:
    server = start_postgres()
    yield server
    server.stop()


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    url = request.getfixturevalue("postgres").create_database() if request.param == "postgresql" else None
    with open_store(Settings(home=tmp_path / "home", database_url=url)) as opened:
        opened.clock = lambda: START
        yield opened


def _answer(store: Store, user: User) -> int:
    answer = Answer(
        question="Does shaving increase infection?", answer="I don't know.", abstained=True, citations=[],
        sentences=[], unsupported=0, generator="extractive", filters={}, temporal=None,
        timings_ms={"total": 120.0}, cost_usd={"total": 0.0}, usage=Usage(), index_version=1,
    )  # fmt: skip
    return record_exchange(store, start_conversation(store, user).id, user, answer)


def test_a_correction_is_kept_when_the_answer_is_labelled_again(store: Store) -> None:
    admin = create_user(store, "admin@example.org", "Admin", "correct horse battery", is_admin=True)
    answer_id = _answer(store, admin)
    save_automatic_label(store, answer_id, "missing_content", {"reason": "nothing on it"})
    assert failure_labels(store)[answer_id].category == "missing_content"

    corrected = correct_label(store, answer_id, "retrieval_mismatch", admin)
    assert (corrected.category, corrected.corrected_by, corrected.corrected_at) == (
        "retrieval_mismatch", admin.id, START
    )  # fmt: skip

    save_automatic_label(store, answer_id, "temporal", {"reason": "a time limit"})  # the library changed
    label = failure_labels(store, [answer_id])[answer_id]
    assert (label.category, label.automatic_category, label.evidence) == (
        "retrieval_mismatch", "temporal", {"reason": "a time limit"}
    )  # fmt: skip


def test_only_known_categories_by_admins_for_labelled_answers(store: Store) -> None:
    admin = create_user(store, "admin@example.org", "Admin", "correct horse battery", is_admin=True)
    clinician = create_user(store, "c@example.org", "C", "correct horse battery")
    answer_id = _answer(store, clinician)
    with pytest.raises(NotFound):  # never labelled
        correct_label(store, answer_id, "edge_case", admin)
    with pytest.raises(InvalidCategory):
        save_automatic_label(store, answer_id, "bad luck", {})
    save_automatic_label(store, answer_id, "edge_case", {})
    with pytest.raises(InvalidCategory):
        correct_label(store, answer_id, "bad luck", admin)
    with pytest.raises(PermissionError):
        correct_label(store, answer_id, "temporal", clinician)
    assert failure_labels(store)[answer_id].category == "edge_case"
