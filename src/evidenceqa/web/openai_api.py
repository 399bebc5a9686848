"""An OpenAI-compatible API under /v1, so that the library is a "model" for any client written against
OpenAI's (the `openai` SDK, Open WebUI, LibreChat…).

- `GET /v1/models`: `evidenceqa` (a cited answer) and `evidenceqa-search` (the ranked passages).
- `POST /v1/chat/completions`, streamed (`stream: true`, server-sent chunks then `[DONE]`) or not.
  The last user message is the question. The reply is the answer with its citations as numbered
  Markdown footnotes ([^1] … and a reference list), and the whole answer record in an extra
  `evidenceqa` field that OpenAI clients ignore. Optional `filters` (year_min, year_max,
  collection, doc_type, evidence_type, prefer_evidence) come in the body (the SDK's `extra_body`).
- Errors have OpenAI's shape, `{"error": {"message", "type", "param", "code"}}` (`error_response`).

Authentication is an API token as the bearer key: what `OpenAI(api_key=…)` sends.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import AsyncIterator, Mapping
from typing import Any, Literal

from fastapi import APIRouter, HTTPException, Request, status
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

from evidenceqa import DISCLAIMER
from evidenceqa.answer import GenerationError
from evidenceqa.answer.base import DISCARD_STREAMED
from evidenceqa.records import by_source_number
from evidenceqa.web.agent_access import AgentAccess, EvidenceFilters, SearchEvidenceOut
from evidenceqa.web.auth import ApiReader, ApiUser
from evidenceqa.web.entitlements import Reader
from evidenceqa.web.schemas import AnswerOut
from evidenceqa.web.services import AnswerStream

router = APIRouter(prefix="/v1", tags=["openai"])
log = logging.getLogger(__name__)
ANSWER_MODEL = "evidenceqa"
SEARCH_MODEL = "evidenceqa-search"
MODELS = {
    ANSWER_MODEL: "A cited answer from the library, or an abstention when it does not hold one.",
    SEARCH_MODEL: "The library's passages ranked for the question, each with its reference.",
}
_MARKER = re.compile(r"\[(\d+)\]")
_OPEN_MARKER = re.compile(r"\[\d*$")  # a marker the next piece of text may finish
_CREATED = int(time.time())  # when the models "were created": this process's start


class ContentPart(BaseModel):
    model_config = ConfigDict(extra="allow")
    type: str
    text: str | None = None


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="allow")  # name, tool_calls…: accepted, not used
    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | list[ContentPart] | None = None

    def text(self) -> str:
        if isinstance(self.content, list):
            return " ".join(part.text for part in self.content if part.type == "text" and part.text)
        return self.content or ""


class ChatCompletionIn(BaseModel):
    model_config = ConfigDict(extra="allow")  # temperature, max_tokens…: the answer is not sampled
    model: str
    messages: list[ChatMessage] = Field(min_length=1, max_length=200)
    stream: bool = False
    filters: EvidenceFilters | None = None

    def question(self) -> str:
        asked = self._asked()
        if not asked:
            raise HTTPException(
                status.HTTP_400_BAD_REQUEST, "no user message with text: the last one is the question"
            )
        return asked[-1]

    def earlier(self) -> list[str]:
        """The user's questions before the last: the conversation a follow-up leans on."""
        return self._asked()[:-1]

    def _asked(self) -> list[str]:
        return [m.text() for m in self.messages if m.role == "user" and m.text().strip()]


@router.get("/models")
async def list_models(identity: ApiUser) -> dict[str, Any]:
    """The models this server offers (OpenAI's list shape)."""
    return {"object": "list", "data": [_model(name) for name in MODELS]}


@router.get("/models/{model}")
async def get_model(model: str, identity: ApiUser) -> dict[str, Any]:
    _check_model(model)
    return _model(model)


def _model(name: str) -> dict[str, Any]:
    return {
        "id": name,
        "object": "model",
        "created": _CREATED,
        "owned_by": "evidenceqa",
        "description": MODELS[name],
    }


def _check_model(model: str) -> None:
    if model not in MODELS:
        raise OpenAIError(
            status.HTTP_404_NOT_FOUND, f"The model {model!r} does not exist; this server offers "
            + ", ".join(MODELS), param="model", code="model_not_found",
        )  # fmt: skip


@router.post("/chat/completions")
async def chat_completions(body: ChatCompletionIn, request: Request, reader: ApiReader) -> Any:
    """The last user message answered from the library (OpenAI's chat completion shape)."""
    _check_model(body.model)
    question = body.question()
    access = AgentAccess.of(request.app)
    completion_id = f"chatcmpl-{time.time_ns():x}"
    if body.model == SEARCH_MODEL:
        found = await access.search(reader, question, 10, body.filters, channel="openai")
        reply = _passages_text(found)
        if body.stream:
            return _sse(_replay(completion_id, body.model, reply, found.model_dump(mode="json")))
        return _completion(completion_id, body.model, reply, found.model_dump(mode="json"))
    if body.stream:  # a question refused is refused before the stream starts, with its status
        question = await access.admit(reader.user, question, "questions")
        await access.within(reader, body.filters)  # 403 for a collection the reader may not read
        return _sse(_stream_answer(access, reader, question, body, completion_id))
    try:
        answer = await access.answer(reader, question, body.filters, "openai", earlier=body.earlier())
    except GenerationError as exc:
        raise OpenAIError(status.HTTP_502_BAD_GATEWAY, str(exc), kind="api_error") from exc
    return _completion(completion_id, body.model, with_footnotes(answer), answer.model_dump(mode="json"))


def with_footnotes(answer: AnswerOut) -> str:
    """The answer's text with its [n] markers as Markdown footnotes, and the references below it."""
    return _MARKER.sub(r"[^\1]", answer.answer) + _references(answer)


def _references(answer: AnswerOut) -> str:
    if answer.abstained or not answer.citations:
        return f"\n\n_{DISCLAIMER}_"
    notes = []
    for n, passages in by_source_number(answer.citations):  # one footnote per source, its passages in it
        first = passages[0]
        where = ", ".join(p for p in (first.label, str(first.year or "")) if p)
        link = f" <{first.url}>" if first.url else ""
        quoted = "; ".join(
            f"{c.section + ': ' if c.section else ''}“{c.text}” (passage {c.chunk_id})" for c in passages
        )
        notes.append(f"[^{n}]: {where}{link} — {quoted}")
    return "\n\n" + "\n".join(notes) + f"\n\n_{DISCLAIMER}_"


def _passages_text(found: SearchEvidenceOut) -> str:
    if not found.passages:
        return "No passage of the library matches this question."
    return "\n\n".join(f"{p.rank}. {p.text}\n   — {p.cite} (passage {p.chunk_id})" for p in found.passages)


def _completion(completion_id: str, model: str, content: str, record: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": completion_id,
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
        ],
        "evidenceqa": record,
    }


def _chunk(completion_id: str, model: str, delta: dict[str, Any], finish: str | None = None,
           record: dict[str, Any] | None = None) -> str:  # fmt: skip
    data: dict[str, Any] = {
        "id": completion_id,
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    if record is not None:
        data["evidenceqa"] = record
    return f"data: {json.dumps(data, ensure_ascii=False)}\n\n"


def _sse(events: AsyncIterator[str]) -> StreamingResponse:
    headers = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
    return StreamingResponse(events, media_type="text/event-stream", headers=headers)


async def _replay(completion_id: str, model: str, content: str, record: dict[str, Any]) -> AsyncIterator[str]:
    yield _chunk(completion_id, model, {"role": "assistant", "content": ""})
    yield _chunk(completion_id, model, {"content": content})
    yield _chunk(completion_id, model, {}, "stop", record)
    yield "data: [DONE]\n\n"


class Footnoting:
    """Streamed text with [n] markers turned into [^n]; a marker split across pieces is held back."""

    def __init__(self) -> None:
        self.held = ""

    def feed(self, text: str) -> str:
        text = self.held + text
        cut = _OPEN_MARKER.search(text)
        self.held, text = (text[cut.start() :], text[: cut.start()]) if cut else ("", text)
        return _MARKER.sub(r"[^\1]", text)

    def flush(self) -> str:
        held, self.held = self.held, ""
        return held


async def _stream_answer(
    access: AgentAccess, reader: Reader, question: str, body: ChatCompletionIn, completion_id: str
) -> AsyncIterator[str]:
    """The answer's text as the generator writes it, then its references and the record."""
    answer = AnswerStream(
        access.services,
        lambda on_delta: access.answer(
            reader, question, body.filters, "openai", on_delta, admitted=True, earlier=body.earlier()
        ),
    )
    yield _chunk(completion_id, body.model, {"role": "assistant", "content": ""})
    footnoting, streamed = Footnoting(), False
    async for text in answer.pieces():
        if text == DISCARD_STREAMED:  # what was streamed cannot be taken back: say it is void
            shown = (
                footnoting.flush() + "\n\n(The language model failed; the library's own answer follows.)\n\n"
            )
        else:
            shown = footnoting.feed(text)
        streamed = True
        if shown:
            yield _chunk(completion_id, body.model, {"content": shown})
    try:
        record = answer.task.result()
    except GenerationError as exc:  # the headers are sent: the stream itself says that it failed
        yield _stream_error(str(exc))
        return
    except Exception:
        log.exception("answering failed")
        yield _stream_error("the answer could not be produced or stored; see the server log")
        return
    # A cached answer, or a generator that does not stream, arrives whole.
    tail = footnoting.flush() + (_references(record) if streamed else with_footnotes(record))
    yield _chunk(completion_id, body.model, {"content": tail})
    yield _chunk(completion_id, body.model, {}, "stop", record.model_dump(mode="json"))
    yield "data: [DONE]\n\n"


def _stream_error(message: str) -> str:
    return f"data: {json.dumps({'error': {'message': message, 'type': 'api_error', 'param': None, 'code': None}})}\n\n"


class OpenAIError(HTTPException):
    """An error to answer in OpenAI's shape, with its type, parameter and code."""

    def __init__(self, status_code: int, message: str, kind: str = "invalid_request_error",
                 param: str | None = None, code: str | None = None) -> None:  # fmt: skip
        super().__init__(status_code, message)
        self.kind, self.param, self.code = kind, param, code


_KINDS = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("invalid_request_error", "forbidden"),
    404: ("invalid_request_error", "not_found"),
    429: ("rate_limit_error", "rate_limit_exceeded"),
}


def error_response(status_code: int, message: str, headers: Mapping[str, str] | None = None,
                   exc: StarletteHTTPException | None = None) -> JSONResponse:  # fmt: skip
    """OpenAI's error body for any error under /v1 (the app's handlers call this for those paths).
    OpenAI answers a request it cannot take 400, never 422 (a question too long, for one)."""
    status_code = status.HTTP_400_BAD_REQUEST if status_code == 422 else status_code
    kind, code = _KINDS.get(
        status_code, ("api_error" if status_code >= 500 else "invalid_request_error", None)
    )
    param = None
    if isinstance(exc, OpenAIError):
        kind, code, param = exc.kind, exc.code or code, exc.param
    error = {"message": message, "type": kind, "param": param, "code": code}
    return JSONResponse({"error": error}, status_code, headers=dict(headers or {}))
