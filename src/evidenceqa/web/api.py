"""The JSON API under /api, and the SSE stream of an answer as it is produced.

Every route here depends on `api_identity` (401 without a session or token; CSRF on POSTs with a
session cookie); admin routes on `api_admin` (403 for others).
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Query, Request, Response, status
from fastapi.responses import StreamingResponse
from starlette.concurrency import run_in_threadpool

from evidenceqa.answer import GenerationError
from evidenceqa.answer.base import DISCARD_STREAMED
from evidenceqa.index.base import Filters
from evidenceqa.store import Channel, User, accounts, conversations
from evidenceqa.web.auth import ApiAdmin, ApiReader, ApiUser, public_link
from evidenceqa.web.entitlements import held_filters
from evidenceqa.web.guards import check_ask_rate, check_search_rate, checked_question, log_question
from evidenceqa.web.records import (
    answer_out,
    conversation_detail,
    conversation_out,
    count_lookup,
    own_conversation,
    store_exchange,
    user_out,
)
from evidenceqa.web.schemas import (
    QUESTION_CEILING,
    QUESTION_NOTE,
    RATING_SCORES,
    AdminStatusOut,
    AnswerOut,
    AskIn,
    ConversationDetailOut,
    ConversationIn,
    ConversationOut,
    FeedbackIn,
    FeedbackOut,
    GapIn,
    GapOut,
    HealthOut,
    InviteIn,
    InviteOut,
    ReadyOut,
    RowId,
    SearchOut,
    UserIn,
    UserOut,
)
from evidenceqa.web.services import AnswerStream, OnDelta, Services, services_of

router = APIRouter()
SSE = "text/event-stream"
log = logging.getLogger(__name__)


@router.get("/healthz", response_model=HealthOut, tags=["public"])
async def healthz() -> HealthOut:
    """Public liveness: the process answers (restart it if not). Checks nothing else."""
    return HealthOut(ok=True)


@router.get("/readyz", response_model=ReadyOut, tags=["public"], responses={503: {"model": ReadyOut}})
async def readyz(request: Request, response: Response) -> ReadyOut:
    """Public readiness: the database answers, the index opens and counts, the embedder embeds.
    503 while any of them does not, so a load balancer sends questions elsewhere."""
    services = services_of(request)
    checks, version, documents = await services.library.readiness()
    try:
        await run_in_threadpool(services.store.ping)
        checks["database"] = "ok"
    except Exception as exc:
        checks["database"] = f"unavailable ({type(exc).__name__})"
    ready = all(state == "ok" for state in checks.values())
    response.status_code = status.HTTP_200_OK if ready else status.HTTP_503_SERVICE_UNAVAILABLE
    return ReadyOut(
        ready=ready, checks=dict(sorted(checks.items())), index_version=version, documents=documents
    )


@router.post(
    "/api/ask",
    response_model=AnswerOut,
    responses={200: {"content": {SSE: {"description": "`delta` events ({text}), then one `answer` event "
                                       "(the record), or an `error` event ({detail}). A `discard` "
                                       "event voids the text streamed so far (the LLM failed and "
                                       "the extractive answer follows)."}}}},
)  # fmt: skip
async def ask(body: AskIn, request: Request, identity: ApiUser, reader: ApiReader) -> Any:
    """A cited answer from the library, stored in a conversation (a new one unless `conversation_id`
    is given). With `Accept: text/event-stream` the answer's text streams as it is produced."""
    services = services_of(request)
    body = body.model_copy(update={"question": checked_question(request, body.question)})  # 422 if too long
    await check_ask_rate(request, identity.user)  # 429 past ask_rate_per_minute
    log_question(request, identity.user, body.question)
    previous: list[str] = []  # a follow-up is resolved against the conversation's earlier questions
    if body.conversation_id is not None:  # someone else's is refused before any work is done
        await run_in_threadpool(own_conversation, services.store, identity.user, body.conversation_id)
        previous = await run_in_threadpool(
            conversations.searched_questions, services.store, body.conversation_id, identity.user
        )
    # Only what the reader may read (403 for a collection they may not), decided before any work.
    filters = await held_filters(
        reader, body.filters.to_filters() if body.filters else None, services.library
    )
    # An API token is a script's; a login session is the chat page's.
    channel: Channel = "api" if identity.csrf is None else "chat"
    produce = _producer(services, identity.user, body, filters, channel, previous)
    if SSE in request.headers.get("accept", ""):
        headers = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}  # no proxy buffering
        return StreamingResponse(_stream(services, produce), media_type=SSE, headers=headers)
    try:
        return await produce(None)
    except GenerationError as exc:
        raise HTTPException(status.HTTP_502_BAD_GATEWAY, str(exc)) from exc


Produce = Callable[[OnDelta | None], Coroutine[Any, Any, AnswerOut]]  # a coroutine: it runs as a task


def _producer(
    services: Services,
    user: User,
    body: AskIn,
    filters: Filters | None,
    channel: Channel,
    previous: list[str],
) -> Produce:
    """The work of one question: answer it on the engine thread, store it, attach the cited passages."""

    async def produce(on_delta: OnDelta | None) -> AnswerOut:
        answer, passages = await services.library.ask(
            body.question, filters, on_delta, previous, body.question_years
        )
        conversation_id, answer_id = await run_in_threadpool(
            store_exchange, services.store, user, body.conversation_id, answer, channel
        )
        return answer_out(answer, answer_id, conversation_id, passages)

    return produce


async def _stream(services: Services, produce: Produce) -> AsyncIterator[str]:
    """SSE: each piece of text as the generator produces it, then the stored record."""
    answer = AnswerStream(services, produce)
    async for text in answer.pieces():
        yield _event("discard", {}) if text == DISCARD_STREAMED else _event("delta", {"text": text})
    try:
        record = answer.task.result()
    except GenerationError as exc:
        yield _event("error", {"detail": str(exc)})
        return
    except Exception:  # the headers are sent: the stream itself must say that it failed
        log.exception("answering failed")
        yield _event("error", {"detail": "the answer could not be produced or stored; see the server log"})
        return
    yield _event("answer", record.model_dump(mode="json"))


def _event(name: str, data: dict[str, Any]) -> str:
    return f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"


@router.get("/api/search", response_model=SearchOut)
async def search(
    request: Request,
    reader: ApiReader,
    q: Annotated[str, Query(min_length=1, max_length=QUESTION_CEILING, description=QUESTION_NOTE)],
    k: Annotated[int | None, Query(ge=1, le=100, description="How many results.")] = None,
) -> SearchOut:
    """The ranked passages for a question (hybrid BM25 + dense search), as `evidenceqa search --json`.
    At most search_rate_per_minute a minute per user, then 429 with Retry-After."""
    await check_search_rate(request, reader.user)
    library = services_of(request).library
    filters = await held_filters(reader, None, library)
    response = await library.search(checked_question(request, q), k, filters)
    await count_lookup(services_of(request).store, reader.user, "api", "search", len(response.results))
    return SearchOut.model_validate(response.to_dict())


@router.get("/api/conversations", response_model=list[ConversationOut])
async def list_conversations(
    request: Request,
    identity: ApiUser,
    q: Annotated[
        str, Query(max_length=200, description="Only those whose title or a question holds this.")
    ] = "",
) -> list[ConversationOut]:
    """The caller's conversations, most recent first."""
    store = services_of(request).store
    found = await run_in_threadpool(conversations.conversations_of, store, identity.user, q)
    return [conversation_out(c) for c in found]


@router.patch("/api/conversations/{conversation_id}", response_model=ConversationOut)
async def rename_conversation(
    conversation_id: RowId, body: ConversationIn, request: Request, identity: ApiUser
) -> ConversationOut:
    """Retitle one of the caller's conversations; 404 for anyone else's, 422 for a blank title."""
    store = services_of(request).store
    try:
        renamed = await run_in_threadpool(
            conversations.rename_conversation, store, identity.user, conversation_id, body.title
        )
    except ValueError as exc:
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, str(exc)) from exc
    return conversation_out(renamed)


@router.delete("/api/conversations/{conversation_id}", status_code=status.HTTP_204_NO_CONTENT)
async def delete_conversation(conversation_id: RowId, request: Request, identity: ApiUser) -> None:
    """Delete one of the caller's conversations: gone from their list and pages (404 from then on).
    Its answers stay in the pilot's figures, which count them without saying whose."""
    store = services_of(request).store
    await run_in_threadpool(conversations.delete_conversation, store, identity.user, conversation_id)


@router.post("/api/conversations", response_model=ConversationOut, status_code=status.HTTP_201_CREATED)
async def create_conversation(body: ConversationIn, request: Request, identity: ApiUser) -> ConversationOut:
    store = services_of(request).store
    created = await run_in_threadpool(conversations.start_conversation, store, identity.user, body.title)
    return conversation_out(created)


@router.get("/api/conversations/{conversation_id}", response_model=ConversationDetailOut)
async def get_conversation(
    conversation_id: RowId, request: Request, identity: ApiUser
) -> ConversationDetailOut:
    """One of the caller's conversations with its messages and answer records; 404 for anyone else's."""
    services = services_of(request)
    return await conversation_detail(services, identity.user, conversation_id)


@router.post("/api/answers/{answer_id}/feedback", response_model=FeedbackOut)
async def feedback(answer_id: RowId, body: FeedbackIn, request: Request, identity: ApiUser) -> FeedbackOut:
    """Rate an answer the caller was given: excellent (1.0), acceptable (0.6) or very poor (0.2).
    A second rating replaces the first."""
    store = services_of(request).store
    stored = await run_in_threadpool(
        conversations.record_feedback,
        store,
        answer_id,
        identity.user,
        RATING_SCORES[body.rating],
        body.comment,
    )
    return FeedbackOut(answer_id=answer_id, rating=body.rating, score=stored.rating, comment=stored.comment)


@router.post("/api/answers/{answer_id}/gap", response_model=GapOut)
async def report_gap(answer_id: RowId, body: GapIn, request: Request, identity: ApiUser) -> GapOut:
    """Tell the library team that the library lacks what this answer was asked for (with what the
    caller was looking for): it joins the pilot report's content gaps. A second report replaces the first."""
    stored = await run_in_threadpool(
        conversations.report_gap, services_of(request).store, answer_id, identity.user, body.comment
    )
    return GapOut(answer_id=answer_id, comment=stored.comment)


@router.get("/api/admin/status", response_model=AdminStatusOut, tags=["admin"])
async def admin_status(request: Request, identity: ApiAdmin) -> AdminStatusOut:
    """The library's size and whether the search index has caught up with it."""
    return await services_of(request).library.status()


@router.post("/api/admin/users", response_model=UserOut, status_code=status.HTTP_201_CREATED, tags=["admin"])
async def admin_create_user(body: UserIn, request: Request, identity: ApiAdmin) -> UserOut:
    store = services_of(request).store
    try:
        user = await run_in_threadpool(
            accounts.create_user, store, body.email, body.name, body.password, body.is_admin
        )
    except accounts.AccountError as exc:
        raise HTTPException(status.HTTP_409_CONFLICT, str(exc)) from exc
    return user_out(user)


@router.post(
    "/api/admin/invites", response_model=InviteOut, status_code=status.HTTP_201_CREATED, tags=["admin"]
)
async def admin_create_invite(body: InviteIn, request: Request, identity: ApiAdmin) -> InviteOut:
    """A one-time sign-up link for `email`, valid for `days`."""
    store = services_of(request).store
    try:
        token = await run_in_threadpool(
            accounts.create_invite, store, body.email, body.is_admin, identity.user, body.days
        )
    except accounts.AccountError as exc:
        raise HTTPException(status.HTTP_409_CONFLICT, str(exc)) from exc
    return InviteOut(email=body.email, url=public_link(request, "invite_page", token=token), days=body.days)
