"""Against a small OpenAI-compatible server started here (stdlib http.server on 127.0.0.1)."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np
import pytest

from evidenceqa.embeddings import EmbeddingError, OpenAIEmbedder
from tests.answer.openai_server import Request, recorded
from tests.embeddings.protocol import assert_embedder

KEY = "sk-test-secret-123"
DIM = 8


def raw_vector(text: str) -> list[float]:
    """Deterministic and deliberately not unit length, so normalisation is visible."""
    return [float(len(text) + 1), *[float(ord(c) % 7) for c in text.ljust(DIM - 1)[: DIM - 1]]]


@dataclass
class FakeServer:
    url: str
    mode: str = "ok"  # ok | error500 | unauthorised | slow | short
    requests: list[Request] = field(default_factory=list)
    max_inputs: int | None = None  # more inputs in one request: 413, as text-embeddings-inference answers
    busy: int = 0  # answer this many requests 429 with Retry-After: 0 before serving
    delay: float = 0.0  # seconds per request, so requests overlap
    in_flight: int = 0
    peak: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


class Handler(BaseHTTPRequestHandler):
    server: Any

    def do_POST(self) -> None:
        fake: FakeServer = self.server.fake
        fake.requests.append(recorded(self))
        body = fake.requests[-1].body
        with fake.lock:
            fake.in_flight += 1
            fake.peak = max(fake.peak, fake.in_flight)
            refuse = fake.busy > 0
            fake.busy -= refuse
        self.counted = True
        try:
            time.sleep(fake.delay)
            if refuse:
                return self._send(429, {"error": {"message": "model is overloaded"}}, {"Retry-After": "0"})
            if fake.max_inputs is not None and len(body["input"]) > fake.max_inputs:
                message = f"batch size {len(body['input'])} > maximum allowed batch size {fake.max_inputs}"
                return self._send(413, {"error": {"message": message}})
            self._answer(fake, body)
        finally:
            self._finished(fake)

    def _finished(self, fake: FakeServer) -> None:
        """Out of flight once answered, before the answer is written: the client may send its next
        request as soon as it has read this one, before this thread runs again."""
        if getattr(self, "counted", False):
            self.counted = False
            with fake.lock:
                fake.in_flight -= 1

    def _answer(self, fake: FakeServer, body: dict[str, Any]) -> None:
        if fake.mode == "slow":
            time.sleep(2)
        if fake.mode == "error500":
            return self._send(500, {"error": {"message": f"backend failure for key {KEY}"}})
        if fake.mode == "unauthorised":
            return self._send(401, {"error": {"message": f"Incorrect API key provided: {KEY}"}})
        inputs = body["input"][:-1] if fake.mode == "short" else body["input"]
        data = [{"object": "embedding", "index": i, "embedding": raw_vector(t)} for i, t in enumerate(inputs)]
        # Served in reverse: the client must order by "index", not by position.
        self._send(200, {"object": "list", "model": body["model"], "data": data[::-1], "usage": {}})

    def _send(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        raw = json.dumps(payload).encode()
        self._finished(self.server.fake)
        try:
            self.send_response(status)
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)
        except OSError:  # the client gave up (timeout test)
            pass

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def server() -> Iterator[FakeServer]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.fake = FakeServer(f"http://127.0.0.1:{httpd.server_address[1]}")  # type: ignore[attr-defined]
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield httpd.fake  # type: ignore[attr-defined]
    httpd.shutdown()
    httpd.server_close()


def expected(texts: list[str]) -> np.ndarray:
    vectors = np.array([raw_vector(t) for t in texts], dtype=np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_openai_compatible_request_and_vectors(server: FakeServer) -> None:
    embedder = OpenAIEmbedder("nomic-embed-text", f"{server.url}/v1", KEY, batch_size=2)
    assert_embedder(embedder)
    texts = ["a longer text here", "b", "middle one", "cc", "the longest text of all five"]
    vectors = embedder.embed(texts)
    np.testing.assert_allclose(vectors, expected(texts), atol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)
    assert len(server.requests) == 3  # batches of 2, 2, 1
    first = server.requests[0]
    assert first.path == "/v1/embeddings"
    assert first.body["model"] == "nomic-embed-text"
    assert isinstance(first.body["input"], list)
    assert first.headers["authorization"] == f"Bearer {KEY}"
    assert sorted(t for r in server.requests for t in r.body["input"]) == sorted(texts)
    assert embedder.dim == DIM
    assert embedder.model_id == "openai:nomic-embed-text"


def test_query_and_dimension_probe(server: FakeServer) -> None:
    embedder = OpenAIEmbedder("m", f"{server.url}/v1", None)
    assert embedder.dim == DIM  # learned by one probe request
    assert len(server.requests) == 1
    assert server.requests[0].headers["authorization"] == "Bearer not-needed"
    np.testing.assert_allclose(
        embedder.embed_query("what is ERAS?"), expected(["what is ERAS?"])[0], atol=1e-6
    )
    assert embedder.embed([]).shape == (0, DIM)


def test_azure_routing(server: FakeServer) -> None:
    embedder = OpenAIEmbedder("my-deployment", server.url, KEY, api_version="2024-06-01")
    np.testing.assert_allclose(embedder.embed(["x", "yy"]), expected(["x", "yy"]), atol=1e-6)
    (request,) = server.requests
    assert request.path == "/openai/deployments/my-deployment/embeddings"
    assert request.query["api-version"] == ["2024-06-01"]
    assert request.headers["api-key"] == KEY
    assert request.body["input"] == ["x", "yy"]


def test_azure_needs_an_endpoint() -> None:
    with pytest.raises(EmbeddingError, match="embedding_api_base"):
        OpenAIEmbedder("dep", None, KEY, api_version="2024-06-01")


def test_server_error_names_endpoint_not_key(server: FakeServer) -> None:
    server.mode = "error500"
    embedder = OpenAIEmbedder("m", f"{server.url}/v1", KEY, max_retries=1)
    with pytest.raises(EmbeddingError) as error:
        embedder.embed(["x"])
    message = str(error.value)
    assert "HTTP 500" in message
    assert f"{server.url}/v1" in message
    assert KEY not in message
    assert len(server.requests) == 2  # the retry is configured on the client


def test_rejected_key_is_not_echoed(server: FakeServer) -> None:
    server.mode = "unauthorised"
    with pytest.raises(EmbeddingError, match="refused the API key") as error:
        OpenAIEmbedder("m", f"{server.url}/v1", KEY).embed(["x"])
    assert KEY not in str(error.value)
    assert server.url in str(error.value)


def test_unreachable_server() -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    with pytest.raises(EmbeddingError, match="cannot connect") as error:
        OpenAIEmbedder("m", url, KEY, max_retries=0).embed(["x"])
    assert url in str(error.value)
    assert KEY not in str(error.value)


def test_slow_server_times_out(server: FakeServer) -> None:
    server.mode = "slow"
    embedder = OpenAIEmbedder("m", f"{server.url}/v1", KEY, timeout=0.3, max_retries=0)
    start = time.perf_counter()
    with pytest.raises(EmbeddingError, match="timed out") as error:
        embedder.embed(["x"])
    assert time.perf_counter() - start < 1.5
    assert server.url in str(error.value)
    assert KEY not in str(error.value)


def test_wrong_number_of_vectors(server: FakeServer) -> None:
    server.mode = "short"
    with pytest.raises(EmbeddingError, match=r"bad response.*: 1 vectors for 2 texts"):
        OpenAIEmbedder("m", f"{server.url}/v1", KEY).embed(["x", "y"])


def test_unexpected_dimension(server: FakeServer) -> None:
    with pytest.raises(EmbeddingError, match="returned 8 dimensions, expected 16"):
        OpenAIEmbedder("m", f"{server.url}/v1", KEY, dim=16).embed(["x"])


def texts_of(n: int) -> list[str]:
    return [f"passage {i} " + "word " * (i % 13) for i in range(n)]


def test_batches_are_sent_concurrently_within_the_limit(server: FakeServer) -> None:
    server.delay = 0.1
    embedder = OpenAIEmbedder("m", f"{server.url}/v1", KEY, batch_size=2, concurrency=3)
    texts = texts_of(12)
    np.testing.assert_allclose(embedder.embed(texts), expected(texts), atol=1e-6)
    assert len(server.requests) == 6
    assert server.peak == 3  # more than one at a time, never more than asked
    assert embedder.stats.peak_in_flight == 3


def test_one_request_at_a_time_when_concurrency_is_one(server: FakeServer) -> None:
    server.delay = 0.05
    embedder = OpenAIEmbedder("m", f"{server.url}/v1", KEY, batch_size=2, concurrency=1)
    texts = texts_of(6)
    np.testing.assert_allclose(embedder.embed(texts), expected(texts), atol=1e-6)
    assert server.peak == 1


def test_overloaded_server_is_retried_and_narrows_the_window(server: FakeServer) -> None:
    server.busy = 3
    embedder = OpenAIEmbedder("m", f"{server.url}/v1", KEY, batch_size=2, concurrency=4)
    texts = texts_of(8)
    np.testing.assert_allclose(embedder.embed(texts), expected(texts), atol=1e-6)
    assert embedder.stats.overloaded == 3
    assert embedder.stats.retries == 3
    assert len(server.requests) == 4 + 3
    # Three halvings from 4 leave one request in flight; four successes widen it by less than one each.
    assert 1 <= embedder._window.limit < 4


def test_batch_over_the_server_limit_is_split_and_the_size_kept(server: FakeServer) -> None:
    server.max_inputs = 3
    embedder = OpenAIEmbedder("m", f"{server.url}/v1", KEY, batch_size=8, concurrency=1)
    texts = texts_of(16)
    np.testing.assert_allclose(embedder.embed(texts), expected(texts), atol=1e-6)
    assert embedder.batch_size == 2  # 8 refused, then 4 refused: halves of 2 fit
    refused = [r for r in server.requests if len(r.body["input"]) > 3]
    assert [len(r.body["input"]) for r in refused] == [8, 4]  # later batches are cut to size first
    assert embedder.stats.splits == 2
    assert sorted(t for r in server.requests if len(r.body["input"]) <= 3 for t in r.body["input"]) == sorted(
        texts
    )


def test_single_text_over_the_limit_is_a_clear_error(server: FakeServer) -> None:
    server.max_inputs = 0
    with pytest.raises(
        EmbeddingError, match=r"HTTP 413 even for a single text: .*maximum allowed batch size 0"
    ):
        OpenAIEmbedder("m", f"{server.url}/v1", KEY, batch_size=4).embed(["a", "b"])


def test_overload_that_lasts_fails_after_the_retries(server: FakeServer) -> None:
    server.busy = 100
    embedder = OpenAIEmbedder("m", f"{server.url}/v1", KEY, max_retries=2)
    with pytest.raises(EmbeddingError, match=r"answered HTTP 429: .*overloaded"):
        embedder.embed(["x"])
    assert len(server.requests) == 3


def test_concurrency_must_be_positive() -> None:
    with pytest.raises(EmbeddingError, match="concurrency must be at least 1, not 0"):
        OpenAIEmbedder("m", "http://127.0.0.1:9/v1", KEY, concurrency=0)
