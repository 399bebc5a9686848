"""Stored things as the API and the pages show them: answers with their cited passages, conversations."""

from __future__ import annotations

import logging

from sqlalchemy.exc import SQLAlchemyError
from starlette.concurrency import run_in_threadpool

from evidenceqa import DISCLAIMER
from evidenceqa.evidence_types import type_name
from evidenceqa.records import Answer, by_source_number
from evidenceqa.retrieval.temporal import NOT_APPLIED
from evidenceqa.store import (
    Channel,
    Conversation,
    Feedback,
    LookupKind,
    Message,
    NotFound,
    Store,
    User,
    conversations,
    record_lookup,
)
from evidenceqa.web.schemas import (
    RATING_NAMES,
    AnswerOut,
    AppliedLimit,
    CitationOut,
    ConversationDetailOut,
    ConversationOut,
    LimitKind,
    MessageOut,
    UserOut,
)
from evidenceqa.web.services import Services

log = logging.getLogger(__name__)


def answer_out(
    answer: Answer,
    answer_id: int,
    conversation_id: int,
    passages: list[CitationOut],
    feedback: Feedback | None = None,
) -> AnswerOut:
    """The record `evidenceqa ask --json` prints, with its ids, passages and the user's rating.
    `passages`: the cited ones, then an abstention's nearest ones (`Library.passages` of both)."""
    row = answer.to_row()
    rating = RATING_NAMES.get(feedback.rating) if feedback is not None else None
    ids = {"answer_id": answer_id, "conversation_id": conversation_id}
    cited, nearest = passages[: len(answer.citations)], passages[len(answer.citations) :]
    shown = {
        "citations": cited,
        "nearest": nearest,
        "rating": rating,
        "feedback_comment": feedback.comment if feedback is not None else None,
        "applied_filters": applied_limits(answer),
    }
    return AnswerOut.model_validate(row | ids | shown)


def applied_limits(answer: Answer) -> list[AppliedLimit]:
    """The limits the answer's evidence was held to, one chip each: years, what the question's own
    words set, collections, document types, topics. A reader must see why evidence is missing,
    and which limit to lift: removing a years chip asks again with no year limit, typed or read
    from the question (their bounds are merged in the record); a question's years that were not
    applied are a note only. The bound of a reader's access is not theirs to lift, and not shown."""
    applied = answer.filters
    low, high = applied.get("year_min"), applied.get("year_max")
    years = f"{low}–{high}" if low and high else f"from {low}" if low else f"up to {high}" if high else None
    limits = [AppliedLimit(label=f"Years {years}", limit="years")] if years else []
    if answer.temporal:  # what the question's own words set: "year ≥ 2015 (from 'since 2015')"
        applies = NOT_APPLIED not in answer.temporal
        limits.append(
            AppliedLimit(
                label=f"Read from the question: {answer.temporal}", limit="years" if applies else None
            )
        )
    named: tuple[tuple[LimitKind, str], ...] = (
        ("collections", "Collection"), ("doc_types", "Document type"), ("evidence_types", "Evidence"),
        ("topics", "Topic"))  # fmt: skip
    for key, name in named:
        limits.extend(
            AppliedLimit(
                label=f"{name}: {type_name(v) or v if key == 'evidence_types' else v}", limit=key, value=v
            )
            for v in applied.get(key) or ()
        )
    if applied.get("prefer_evidence"):
        limits.append(AppliedLimit(label="Stronger evidence ranked first", limit="prefer_evidence"))
    return limits


async def count_lookup(store: Store, user: User, channel: Channel, kind: LookupKind, results: int) -> None:
    """Count a search or read for the pilot report (its question is not kept). A count the database
    will not take (locked, full) is logged and lost: the reader's results are not."""
    try:
        await run_in_threadpool(record_lookup, store, user, channel, kind, results)
    except SQLAlchemyError as exc:
        log.warning("a %s %s was not counted for the pilot report (%s)", channel, kind, type(exc).__name__)


def store_exchange(
    store: Store, user: User, conversation_id: int | None, answer: Answer, channel: Channel
) -> tuple[int, int]:
    """Store a question and its answer: (conversation id, answer id). A new conversation is started
    only once there is an answer to put in it, so a failed question leaves no empty conversation
    behind; the store titles it by the question."""
    if conversation_id is None:
        conversation_id = conversations.start_conversation(store, user, answer.question).id
    return conversation_id, conversations.record_exchange(store, conversation_id, user, answer, channel)


def conversation_out(conversation: Conversation) -> ConversationOut:
    return ConversationOut.model_validate(conversation, from_attributes=True)


def user_out(user: User) -> UserOut:
    return UserOut.model_validate(user, from_attributes=True)


def own_conversation(store: Store, user: User, conversation_id: int) -> Conversation:
    """The user's own conversation. The store lets administrators read anyone's (for review); the chat
    shows each person only theirs, and another's conversation is "not found", so ids reveal nothing."""
    for conversation in conversations.conversations_of(store, user):
        if conversation.id == conversation_id:
            return conversation
    raise NotFound(f"no conversation {conversation_id}")


async def conversation_detail(services: Services, user: User, conversation_id: int) -> ConversationDetailOut:
    conversation, messages, given = await run_in_threadpool(_load, services.store, user, conversation_id)
    answers = {m.id: conversations.to_answer(m.answer) for m in messages if m.answer is not None}
    # One trip to the engine thread for every cited passage of the conversation.
    passages = await services.library.passages([c for a in answers.values() for c in a.shown_passages()])
    shown = []
    for message in messages:
        answer = answers.get(message.id)
        out = None
        if answer is not None and message.answer is not None:
            count = len(answer.shown_passages())
            cited, passages = passages[:count], passages[count:]
            record_id = message.answer.id
            out = answer_out(answer, record_id, conversation_id, cited, given.get(record_id))
        shown.append(
            MessageOut(role=message.role, text=message.text, created_at=message.created_at, answer=out)
        )
    return ConversationDetailOut(**conversation_out(conversation).model_dump(), messages=shown)


def _load(
    store: Store, user: User, conversation_id: int
) -> tuple[Conversation, list[Message], dict[int, Feedback]]:
    """The conversation, its messages, and the user's feedback on its answers, by answer id."""
    conversation = own_conversation(store, user, conversation_id)
    messages = conversations.messages_of(store, conversation_id, user)
    given = {}
    for message in messages:
        if message.answer is not None:
            feedback = conversations.feedback_of(store, message.answer.id, user)
            if feedback is not None:
                given[message.answer.id] = feedback
    return conversation, messages, given


def conversation_markdown(conversation: ConversationDetailOut) -> str:
    """A conversation to keep or share: each question, its answer with its [n] markers, and the
    references (Vancouver order) with the passages that support it; the notice first."""
    lines = [f"# {conversation.title}", "", f"_{DISCLAIMER}_"]
    for message in conversation.messages:
        if message.role == "user":
            lines += ["", f"## {message.text}"]
            continue
        answer = message.answer
        if answer is None:
            continue
        if answer.searched_for:
            lines += ["", f"_Searched for: {answer.searched_for}_"]
        if answer.applied_filters:
            lines += ["", "_Limits: " + "; ".join(chip.label for chip in answer.applied_filters) + "_"]
        lines += ["", answer.answer]
        if answer.citations:
            lines += ["", "References:", ""]
        for n, passages in by_source_number(answer.citations):
            lines.append(f"{n}. {passages[0].reference}")
            lines += [f"   > {c.section + ': ' if c.section else ''}“{c.text}”" for c in passages]
    return "\n".join(lines) + "\n"
