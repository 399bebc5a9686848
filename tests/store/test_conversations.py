"""Conversations, answer records, feedback and the analytics rows, on SQLite and PostgreSQL."""

from __future__ import annotations

import math
from datetime import datetime, timedelta

import pytest
from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError

from evidenceqa.answer.base import ABSTAIN_MESSAGE
from evidenceqa.records import Answer, Citation, Sentence, Usage
from evidenceqa.store import (
    RATINGS,
    AnswerRecord,
    Feedback,
    InvalidRating,
    Message,
    NotFound,
    Store,
    User,
    answer_record,
    answers_between,
    conversations_of,
    create_user,
    delete_conversation,
    feedback_between,
    feedback_of,
    messages_of,
    record_exchange,
    record_feedback,
    rename_conversation,
    start_conversation,
    to_answer,
)
from tests.store.conftest import START, Clock

QUESTION = "Can chlorhexidine gluconate be used on mucous membranes?"


def make_answer(question: str = QUESTION, **changes: object) -> Answer:
    answer = Answer(
        question=question,
        answer="No; use povidone-iodine on mucosa [1]. Chlorhexidine can irritate it [2].",
        abstained=False,
        citations=[
            Citation(
                1,
                "doc-1",
                "doc-1:3",
                "Skin antisepsis before surgery",
                2019,
                "Results › Mucosa",
                "Use PVP-I.",
            ),
            Citation(2, "doc-2", "doc-2:0", None, None, None, "Chlorhexidine — “irritant” on mucosa ✓"),
        ],
        sentences=[
            Sentence("No; use povidone-iodine on mucosa [1].", [1], True, 0.93, None),
            Sentence("Chlorhexidine can irritate it [2].", [2], False, 0.41, "weak support from [2]"),
        ],
        unsupported=1,
        generator="llm:gpt-4o-mini",
        filters={"year_min": 2015, "collection": ["guidelines"], "level": "content"},
        temporal="since 2015",
        timings_ms={
            "retrieve": 12.345678901234,
            "embed": 3.21,
            "generate": 812.5,
            "check": 40.0,
            "total": 868.1,
        },
        cost_usd={"embed": 0.0, "search": 1e-05, "generate": 0.000123456789, "total": 0.000133456789},
        usage=Usage(812, 57),
        index_version=42,
        p_answerable=0.8712345678901234,
        cache_hit=False,
        query_id="q-17",
    )
    for name, value in changes.items():
        setattr(answer, name, value)
    return answer


@pytest.fixture
def ann(store: Store) -> User:
    return create_user(store, "ann@example.org", "Ann", "correct horse battery")


@pytest.fixture
def bob(store: Store) -> User:
    return create_user(store, "bob@example.org", "Bob", "correct horse battery")


@pytest.fixture
def admin(store: Store) -> User:
    return create_user(store, "admin@example.org", "Admin", "correct horse battery", is_admin=True)


def _count(store: Store, model: type) -> int:
    with store.transaction() as session:
        return session.scalar(select(func.count()).select_from(model)) or 0


def test_an_exchange_round_trips_the_answer_exactly(store: Store, ann: User) -> None:
    conversation = start_conversation(store, ann, "")
    answer = make_answer()
    answer_id = record_exchange(store, conversation.id, ann, answer)
    asked, replied = messages_of(store, conversation.id, ann)
    assert (asked.role, asked.text, asked.answer) == ("user", QUESTION, None)
    assert (replied.role, replied.text) == ("assistant", answer.answer)
    assert replied.answer is not None and replied.answer.id == answer_id
    for record in (replied.answer, answer_record(store, answer_id, ann)):
        again = to_answer(record)
        assert again == answer
        assert again.to_dict() == answer.to_dict()
        assert list(again.timings_ms) == list(answer.timings_ms)  # order kept too
        assert list(again.cost_usd) == list(answer.cost_usd)
    assert replied.answer.cost_usd == 0.000133456789
    assert replied.answer.cost_by_stage == {"embed": 0.0, "search": 1e-05, "generate": 0.000123456789}
    assert replied.answer.created_at == asked.created_at == START


def test_an_abstention_and_a_cache_hit_round_trip(store: Store, ann: User) -> None:
    conversation = start_conversation(store, ann, "Mine")
    answer = make_answer(
        answer=ABSTAIN_MESSAGE,
        abstained=True,
        citations=[],
        sentences=[Sentence(ABSTAIN_MESSAGE)],
        unsupported=0,
        temporal=None,
        p_answerable=None,
        query_id=None,
        cache_hit=True,
        cost_usd={"embed": 0.0, "search": 0.0, "generate": 0.0, "total": 0.0},
        timings_ms={"cache": 0.41, "total": 0.41},
    )
    answer_id = record_exchange(store, conversation.id, ann, answer)
    assert to_answer(answer_record(store, answer_id, ann)) == answer


def test_the_first_question_titles_an_untitled_conversation(store: Store, ann: User) -> None:
    untitled = start_conversation(store, ann, "  ")
    titled = start_conversation(store, ann, "Antisepsis")
    long_question = "What is the evidence for " + "very " * 40 + "long questions?"
    record_exchange(store, untitled.id, ann, make_answer(long_question))
    record_exchange(store, untitled.id, ann, make_answer("A second question"))
    record_exchange(store, titled.id, ann, make_answer())
    titles = {c.id: c.title for c in conversations_of(store, ann)}
    assert titles[titled.id] == "Antisepsis"
    assert titles[untitled.id].startswith("What is the evidence for very")
    assert len(titles[untitled.id]) <= 80 and titles[untitled.id].endswith("…")
    assert len(messages_of(store, untitled.id, ann)) == 4


def test_conversations_come_newest_activity_first(store: Store, ann: User, clock: Clock) -> None:
    first = start_conversation(store, ann, "First")
    clock.advance(minutes=1)
    second = start_conversation(store, ann, "Second")
    assert [c.id for c in conversations_of(store, ann)] == [second.id, first.id]
    clock.advance(minutes=1)
    record_exchange(store, first.id, ann, make_answer())
    listed = conversations_of(store, ann)
    assert [c.id for c in listed] == [first.id, second.id]
    assert listed[0].updated_at == clock.now and listed[0].created_at == START


def test_users_see_only_their_own_conversations(store: Store, ann: User, bob: User, admin: User) -> None:
    mine = start_conversation(store, ann, "Ann's")
    answer_id = record_exchange(store, mine.id, ann, make_answer())
    start_conversation(store, bob, "Bob's")
    assert [c.title for c in conversations_of(store, bob)] == ["Bob's"]
    with pytest.raises(NotFound):
        messages_of(store, mine.id, bob)
    with pytest.raises(NotFound):
        answer_record(store, answer_id, bob)
    with pytest.raises(NotFound):
        record_exchange(store, mine.id, bob, make_answer("Bob writes into Ann's"))
    with pytest.raises(NotFound):
        messages_of(store, 999_999, ann)
    assert _count(store, Message) == 2 and _count(store, AnswerRecord) == 1


def test_a_reader_renames_searches_and_deletes_only_their_own_conversations(
    store: Store, ann: User, bob: User
) -> None:
    antisepsis = start_conversation(store, ann)
    record_exchange(store, antisepsis.id, ann, make_answer())  # titled by its question
    bleeding = start_conversation(store, ann, "Ward round")
    record_exchange(store, bleeding.id, ann, make_answer("Does tranexamic acid reduce 100% of bleeding?"))
    assert rename_conversation(store, ann, bleeding.id, "  Knee   bleeding ").title == "Knee bleeding"
    with pytest.raises(ValueError, match="visible character"):
        rename_conversation(store, ann, bleeding.id, " \u200b ")
    with pytest.raises(NotFound):
        rename_conversation(store, bob, bleeding.id, "Bob's now")
    # By title or by a question asked in it, case aside; "%" and "_" are only themselves.
    assert [c.id for c in conversations_of(store, ann, "CHLORHEXIDINE")] == [antisepsis.id]
    assert [c.id for c in conversations_of(store, ann, "tranexamic")] == [bleeding.id]
    assert [c.id for c in conversations_of(store, ann, "knee")] == [bleeding.id]
    assert [c.id for c in conversations_of(store, ann, "100%")] == [bleeding.id]
    assert conversations_of(store, ann, "_") == [] and conversations_of(store, bob, "knee") == []
    with pytest.raises(NotFound):
        delete_conversation(store, bob, bleeding.id)
    delete_conversation(store, ann, bleeding.id)
    assert [c.id for c in conversations_of(store, ann)] == [antisepsis.id]
    with pytest.raises(NotFound):
        messages_of(store, bleeding.id, ann)
    with pytest.raises(NotFound):
        record_exchange(store, bleeding.id, ann, make_answer())
    # Its answers still count in the pilot's figures.
    assert _count(store, AnswerRecord) == 2


def test_admins_read_everyone_but_write_only_their_own(store: Store, ann: User, admin: User) -> None:
    mine = start_conversation(store, ann, "Ann's")
    answer_id = record_exchange(store, mine.id, ann, make_answer())
    assert [m.role for m in messages_of(store, mine.id, admin)] == ["user", "assistant"]
    assert answer_record(store, answer_id, admin).id == answer_id
    assert conversations_of(store, admin) == []  # the list is one's own
    with pytest.raises(NotFound):
        record_exchange(store, mine.id, admin, make_answer())


def _rated(store: Store, user: User) -> int:
    conversation = start_conversation(store, user, "")
    return record_exchange(store, conversation.id, user, make_answer())


@pytest.mark.parametrize(("given", "stored"), [(1.0, 1.0), (float("0.6"), 0.6), (0.2, 0.2), (1, 1.0)])
def test_the_three_ratings_are_accepted(store: Store, ann: User, given: float, stored: float) -> None:
    answer_id = _rated(store, ann)
    feedback = record_feedback(store, answer_id, ann, given, "  useful  ")
    assert (feedback.rating, feedback.comment, feedback.user_id) == (stored, "useful", ann.id)
    again = feedback_of(store, answer_id, ann)
    assert again is not None and again.rating == stored


@pytest.mark.parametrize("rating", [0.5, 0.0, 0.8, -1.0, 2, math.nan, True, "0.6", None])
def test_any_other_rating_is_refused(store: Store, ann: User, rating: object) -> None:
    answer_id = _rated(store, ann)
    with pytest.raises(InvalidRating, match=r"1\.0 \(Excellent\), 0\.6 \(Acceptable\), 0\.2 \(Very poor\)"):
        record_feedback(store, answer_id, ann, rating, "")  # type: ignore[arg-type]
    assert _count(store, Feedback) == 0


def test_the_database_itself_refuses_other_ratings(store: Store, ann: User) -> None:
    answer_id = _rated(store, ann)
    with pytest.raises(IntegrityError), store.transaction() as session:
        session.add(
            Feedback(answer_id=answer_id, user_id=ann.id, rating=0.5, comment="", created_at=store.now())
        )
    assert set(RATINGS.values()) == {1.0, 0.6, 0.2}


def test_a_second_rating_replaces_the_first(store: Store, ann: User, admin: User, clock: Clock) -> None:
    answer_id = _rated(store, ann)
    first = record_feedback(store, answer_id, ann, 0.2, "wrong dose")
    clock.advance(minutes=3)
    second = record_feedback(store, answer_id, ann, 1.0, None)
    assert second.id == first.id
    assert (second.rating, second.comment, second.created_at) == (1.0, "", clock.now)
    record_feedback(store, answer_id, admin, 0.6, "reviewed")  # another user's rating is separate
    assert _count(store, Feedback) == 2
    mine = feedback_of(store, answer_id, ann)
    assert mine is not None and (mine.rating, mine.comment) == (1.0, "")


def test_feedback_only_on_answers_one_can_see(store: Store, ann: User, bob: User) -> None:
    answer_id = _rated(store, ann)
    with pytest.raises(NotFound):
        record_feedback(store, answer_id, bob, 1.0, "")
    with pytest.raises(NotFound):
        record_feedback(store, 999_999, ann, 1.0, "")
    assert _count(store, Feedback) == 0


def test_answers_between_is_a_half_open_window(store: Store, ann: User, bob: User, clock: Clock) -> None:
    ids = []
    for user, hours in ((ann, 0), (bob, 1), (ann, 2)):
        clock.now = START + timedelta(hours=hours)
        ids.append(_rated(store, user))
    window = answers_between(store, START + timedelta(hours=1), START + timedelta(hours=2))
    assert [row.answer_id for row in window] == [ids[1]]
    [row] = window
    assert (row.user_id, row.created_at, row.answer) == (bob.id, START + timedelta(hours=1), make_answer())
    assert [r.answer_id for r in answers_between(store, START, START + timedelta(days=1))] == ids
    assert answers_between(store, START + timedelta(hours=3), START + timedelta(days=1)) == []


def test_the_analytics_need_aware_times(store: Store) -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        answers_between(store, datetime(2025, 1, 1), datetime(2026, 1, 1))
    with pytest.raises(ValueError, match="timezone-aware"):
        feedback_between(store, datetime(2025, 1, 1), datetime(2026, 1, 1))


def test_feedback_between_reports_the_latest_rating(store: Store, ann: User, clock: Clock) -> None:
    answer_id = _rated(store, ann)
    record_feedback(store, answer_id, ann, 0.2, "first")
    clock.advance(days=2)
    record_feedback(store, answer_id, ann, 0.6, "on reflection")
    assert feedback_between(store, START, START + timedelta(days=1)) == []
    [row] = feedback_between(store, START, START + timedelta(days=3))
    assert (row.answer_id, row.user_id, row.rating, row.comment) == (answer_id, ann.id, 0.6, "on reflection")
    assert (row.question, row.abstained, row.created_at) == (QUESTION, False, clock.now)
