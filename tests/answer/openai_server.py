"""A small OpenAI-compatible chat server for tests, speaking the real wire protocol over HTTP.

It answers POST /v1/chat/completions and Azure's /openai/deployments/<deployment>/chat/completions
with a server-sent-event stream of `chat.completion.chunk` objects — a role chunk, one chunk per
scripted delta, a finish chunk, the usage chunk when the request asks for it, `data: [DONE]` — sent
with chunked transfer encoding, as OpenAI does. Each request takes the next scripted Reply from a
queue, and every request is recorded so tests can inspect what the client sent.
"""

from __future__ import annotations

import json
import re
import sys
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import parse_qs, urlsplit

from pydantic import SecretStr

from evidenceqa.settings import Settings

HOLD_S = 10.0
_OPENAI_PATH = "/v1/chat/completions"
_AZURE_PATH = re.compile(r"/openai/deployments/(?P<deployment>[^/]+)/chat/completions")


@dataclass(frozen=True)
class Reply:
    """One scripted response: a stream of `deltas`, or an HTTP error when `status` is not 200."""

    deltas: tuple[str, ...] = ()
    usage: tuple[int, int] | None = None  # (prompt, completion) tokens; sent only when asked for
    finish_reason: str = "stop"
    status: int = 200
    message: str = ""  # the error message of an HTTP error or of `error_event`
    delay_s: float = 0.0  # silence before the response starts
    stall_s: float = 0.0  # silence after the first delta
    error_event: bool = False  # end the stream with an {"error": …} event after the deltas (vLLM does)
    # Answer only once this many requests are in flight at the same time (at most HOLD_S): shows
    # whether a client sends its requests concurrently. Each wait's outcome goes to `OpenAIServer.held`.
    together: int = 0


def answer(*deltas: str, usage: tuple[int, int] | None = (120, 30)) -> Reply:
    return Reply(deltas=deltas, usage=usage)


def failure(status: int, message: str) -> Reply:
    return Reply(status=status, message=message)


@dataclass
class Request:
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]  # names lower-cased
    body: dict[str, Any]


def recorded(handler: BaseHTTPRequestHandler) -> Request:
    """The request a handler is serving, read whole, for tests to inspect."""
    parts = urlsplit(handler.path)
    body = json.loads(handler.rfile.read(int(handler.headers["Content-Length"])))
    return Request(
        parts.path, parse_qs(parts.query), {k.lower(): v for k, v in handler.headers.items()}, body
    )


@dataclass
class OpenAIServer:
    """Started on a free port of 127.0.0.1 by `with OpenAIServer() as server:`."""

    replies: deque[Reply] = field(default_factory=deque)
    requests: list[Request] = field(default_factory=list)
    stopping: threading.Event = field(default_factory=threading.Event)
    held: list[bool] = field(default_factory=list)  # per `together` reply: were enough requests in flight
    in_flight: int = 0
    arrivals: threading.Condition = field(default_factory=threading.Condition)
    # One cell per held request: the most requests in flight at once since it arrived (a request
    # that was answered meanwhile has still been in flight together with it).
    peaks: list[list[int]] = field(default_factory=list)
    _httpd: ThreadingHTTPServer | None = None

    def arrive(self) -> int:
        """Count a request in; returns how many are in flight with it."""
        with self.arrivals:
            self.in_flight += 1
            for peak in self.peaks:
                peak[0] = max(peak[0], self.in_flight)
            self.arrivals.notify_all()
            return self.in_flight

    def wait_together(self, count: int, at_arrival: int) -> None:
        with self.arrivals:
            peak = [max(at_arrival, self.in_flight)]
            self.peaks.append(peak)
            self.held.append(self.arrivals.wait_for(lambda: peak[0] >= count, timeout=HOLD_S))
            self.peaks.remove(peak)

    @property
    def url(self) -> str:
        assert self._httpd is not None, "the server is not running"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def script(self, *replies: Reply) -> None:
        self.replies.extend(replies)

    def __enter__(self) -> OpenAIServer:
        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.owner = self  # type: ignore[attr-defined]
        threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True).start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        assert self._httpd is not None
        self.stopping.set()  # wakes handlers still sleeping in a slow reply
        self._httpd.shutdown()
        self._httpd.server_close()


class _Server(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        # The SDK closes a kept-alive connection when a test's client goes: a reset, not an error of
        # the server's, whose traceback in the test output would only hide real ones.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive and chunked streaming, like the real API
    server: Any

    def do_POST(self) -> None:
        owner: OpenAIServer = self.server.owner
        at_arrival = owner.arrive()
        try:
            self._serve(owner, at_arrival)
        finally:
            with owner.arrivals:
                owner.in_flight -= 1

    def _serve(self, owner: OpenAIServer, at_arrival: int) -> None:
        owner.requests.append(recorded(self))
        parts = urlsplit(self.path)
        azure = _AZURE_PATH.fullmatch(parts.path)
        if parts.path != _OPENAI_PATH and not azure:
            return self._json(404, _error_body(f"no route for {parts.path}"))
        if not owner.replies:  # a 400, which no client retries, so the test fails at once
            return self._json(400, _error_body("test server: no scripted reply left"))
        reply = owner.replies.popleft()
        if reply.together:
            owner.wait_together(reply.together, at_arrival)
        try:
            if owner.stopping.wait(reply.delay_s):
                self.close_connection = True
                return
            if reply.status != 200:
                return self._json(reply.status, _error_body(reply.message))
            self._stream(reply, owner.requests[-1].body, azure=azure is not None, stopping=owner.stopping)
        except OSError:  # the client gave up (the timeout tests)
            self.close_connection = True

    def _stream(self, reply: Reply, request: dict[str, Any], azure: bool, stopping: threading.Event) -> None:
        model = request["model"]
        wants_usage = bool((request.get("stream_options") or {}).get("include_usage"))
        extra = {"usage": None} if wants_usage else {}
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        if azure:  # Azure opens with the prompt's content-filter results and no choices
            self._event({"id": "", "object": "", "created": 0, "model": "", "choices": [], **_PROMPT_FILTER})
        self._event(_chunk(model, {"role": "assistant", "content": "", "refusal": None}, None, extra))
        for i, delta in enumerate(reply.deltas):
            self._event(_chunk(model, {"content": delta}, None, extra))
            if i == 0 and stopping.wait(reply.stall_s):
                self.close_connection = True
                return
        if reply.error_event:
            self._event(_error_body(reply.message))
            return self._end()
        self._event(_chunk(model, {}, reply.finish_reason, extra))
        if wants_usage and reply.usage is not None:
            prompt, completion = reply.usage
            usage = {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
            }
            self._event({**_chunk(model, None, None, extra), "usage": usage})
        self._send_data("[DONE]")
        self._end()

    def _event(self, payload: dict[str, Any]) -> None:
        self._send_data(json.dumps(payload))

    def _send_data(self, data: str) -> None:
        raw = f"data: {data}\n\n".encode()
        self.wfile.write(b"%x\r\n%s\r\n" % (len(raw), raw))

    def _end(self) -> None:
        self.wfile.write(b"0\r\n\r\n")

    def _json(self, status: int, payload: dict[str, Any]) -> None:
        raw = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def log_message(self, *args: Any) -> None:
        pass


_PROMPT_FILTER = {
    "prompt_filter_results": [
        {"prompt_index": 0, "content_filter_results": {"hate": {"filtered": False, "severity": "safe"}}}
    ]
}


def _chunk(
    model: str, delta: dict[str, Any] | None, finish_reason: str | None, extra: dict[str, Any]
) -> dict[str, Any]:
    choices = (
        []
        if delta is None
        else [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}]
    )
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion.chunk",
        "created": 1700000000,
        "model": model,
        "system_fingerprint": "fp_test",
        "choices": choices,
        **extra,
    }


def _error_body(message: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error", "param": None, "code": None}}


def llm_settings(settings: Settings, base_url: str, key: str = "sk-test", **more: Any) -> Settings:
    """`settings` answering through the OpenAI-compatible server at `base_url` (…/v1)."""
    update = {
        "generator": "llm",
        "llm_model": "gpt-4o-mini",
        "llm_api_base": base_url,
        "llm_api_key": SecretStr(key),
    }
    return settings.model_copy(update={**update, **more})
