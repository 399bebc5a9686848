"""Embeddings from an OpenAI-compatible API: OpenAI, Azure OpenAI, and GPU embedding servers
(text-embeddings-inference, vLLM, Ollama's /v1 server) for libraries too big to embed on the CPU.

A big ingest sends many batches; three things keep it going against a busy server:
- concurrency: up to `concurrency` requests in flight, so the server can batch across them;
- back-pressure: a 429 or 503 halves the window of requests in flight, and each success widens it
  again by a fraction of a request (additive increase, multiplicative decrease, as TCP does), so
  the client settles at the rate the server sustains instead of hammering it;
- retries: 408, 409, 429 and 5xx answers, timeouts and dropped connections are retried with
  exponential backoff and jitter, or after the server's Retry-After; a 413 (a batch over the
  server's limit, as text-embeddings-inference answers past its max-client-batch-size) splits
  the batch in half and keeps the smaller size for the batches after it.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

from evidenceqa.embeddings.base import EmbeddingError, batched_by_length, l2_normalise, no_texts, one_line

# Local servers (vLLM, Ollama) ignore the key, but the SDK refuses to start without one.
_NO_KEY = "not-needed"
# Longest server message quoted in an error; enough for "model X not found", short enough for a log line.
_MAX_DETAIL = 200
# Text embedded to learn the dimension when it was not given and nothing has been embedded yet.
_PROBE = "dimension probe"
# Answers worth another try; 429 and 503 also say the server is overloaded and shrink the window.
_RETRIED = {408, 409, 429, 500, 502, 503, 504}
_OVERLOADED = {429, 503}
_TOO_LARGE = 413
# Backoff before retry n is _FIRST_WAIT·2ⁿ seconds, at most _LONGEST_WAIT, less up to a quarter
# (jitter, so clients that failed together do not retry together); a Retry-After up to
# _LONGEST_WAIT is obeyed as given.
_FIRST_WAIT = 0.5
_LONGEST_WAIT = 30.0


@dataclass
class RequestStats:
    """What the embedder did on the wire; benchmarks/embedding_server.py reports it."""

    requests: int = 0
    retries: int = 0
    splits: int = 0
    overloaded: int = 0
    peak_in_flight: int = 0


class _Window:
    """How many requests may be in flight: halved on overload, widened by 1/limit per success."""

    def __init__(self, most: int) -> None:
        self.most = most
        self.limit = float(most)
        self.active = 0
        self._changed = threading.Condition()

    def __enter__(self) -> int:
        with self._changed:
            while self.active >= int(self.limit):
                self._changed.wait()
            self.active += 1
            return self.active

    def __exit__(self, *exc: object) -> None:
        with self._changed:
            self.active -= 1
            self._changed.notify_all()

    def overloaded(self) -> None:
        with self._changed:
            self.limit = max(1.0, self.limit / 2)

    def succeeded(self) -> None:
        with self._changed:
            self.limit = min(float(self.most), self.limit + 1 / self.limit)
            self._changed.notify_all()


class OpenAIEmbedder:
    """`model` is the model name, or the deployment name on Azure (when `api_version` is set)."""

    # Texts per request when the settings do not say: fewer, larger requests for a server that batches
    # across them (a 413 halves it: text-embeddings-inference's default limit is 32).
    BATCH_SIZE = 64

    def __init__(
        self,
        model: str,
        base_url: str | None,
        api_key: str | None,
        api_version: str | None = None,
        dim: int | None = None,
        batch_size: int | None = None,
        timeout: float = 60.0,
        max_retries: int = 6,
        concurrency: int = 4,
    ) -> None:
        if not model:
            raise EmbeddingError("no embedding model named (use openai:<model or Azure deployment>)")
        if concurrency < 1:
            raise EmbeddingError(f"embedding concurrency must be at least 1, not {concurrency}")
        self.model = model
        self.model_id = f"openai:{model}"
        self.batch_size = batch_size or self.BATCH_SIZE
        self.timeout = timeout
        self.max_retries = max_retries
        self.concurrency = concurrency
        self.stats = RequestStats()
        self._window = _Window(concurrency)
        self._lock = threading.Lock()
        self._key = api_key or _NO_KEY
        self._dim = dim
        self.endpoint = _endpoint(model, base_url, api_version)
        self.client = self._client(base_url, api_version)

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = self._request([_PROBE]).shape[1]
        return self._dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return no_texts(self.dim)
        if self.concurrency == 1 or len(texts) <= self.batch_size:
            return batched_by_length(texts, self.batch_size, self._request)
        with ThreadPoolExecutor(self.concurrency, thread_name_prefix="embed") as pool:
            return batched_by_length(texts, self.batch_size, self._request, pool.map)

    def embed_query(self, text: str) -> np.ndarray:
        return self._request([text])[0]

    def _client(self, base_url: str | None, api_version: str | None) -> Any:
        import openai

        # Retries are this class's own (they drive the window), so the SDK makes one try, bounded by
        # the timeout; its connection pool is shared by the threads.
        common: dict[str, Any] = {"api_key": self._key, "timeout": self.timeout, "max_retries": 0}
        try:
            if api_version:
                if not base_url:
                    raise EmbeddingError("Azure OpenAI needs the resource endpoint (embedding_api_base)")
                return openai.AzureOpenAI(azure_endpoint=base_url, api_version=api_version, **common)
            return openai.OpenAI(base_url=base_url, **common)
        except openai.OpenAIError as e:
            raise EmbeddingError(
                f"cannot set up the embedding client for {self.endpoint}: {self._clean(e)}"
            ) from e

    def _request(self, texts: list[str]) -> np.ndarray:
        import openai

        if len(texts) > self.batch_size:  # cut before a 413 lowered the size
            return self._halves(texts)
        for attempt in range(self.max_retries + 1):
            try:
                with self._window as in_flight:
                    self._count(requests=1, peak_in_flight=in_flight)
                    # The raw body, parsed by json: the SDK's own parsing builds an object per float,
                    # which made the client, not the server, the limit (benchmarks/embedding_server.py).
                    response = self.client.embeddings.with_raw_response.create(
                        model=self.model, input=texts, encoding_format="float"
                    ).http_response
                self._window.succeeded()
                return self._vectors(response, len(texts))
            except openai.APIStatusError as e:
                if e.status_code == _TOO_LARGE and len(texts) > 1:
                    return self._split(texts)
                if e.status_code not in _RETRIED or attempt == self.max_retries:
                    raise self._error(e) from e
                if e.status_code in _OVERLOADED:
                    self._window.overloaded()
                    self._count(overloaded=1)
                told = _retry_after(e.response.headers)
                wait = _backoff(attempt) if told is None else told
            except openai.APIConnectionError as e:  # includes timeouts
                if attempt == self.max_retries:
                    raise self._error(e) from e
                wait = _backoff(attempt)
            except openai.OpenAIError as e:
                raise self._error(e) from e
            self._count(retries=1)
            time.sleep(wait)
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _split(self, texts: list[str]) -> np.ndarray:
        """The server refused the batch as too large: embed it in halves and send smaller ones from now on."""
        with self._lock:
            self.batch_size = min(self.batch_size, len(texts) // 2)
        self._count(splits=1)
        return self._halves(texts)

    def _halves(self, texts: list[str]) -> np.ndarray:
        half = len(texts) // 2
        return np.concatenate([self._request(texts[:half]), self._request(texts[half:])])

    def _count(self, **increments: int) -> None:
        with self._lock:
            for name, value in increments.items():
                if name == "peak_in_flight":
                    self.stats.peak_in_flight = max(self.stats.peak_in_flight, value)
                else:
                    setattr(self.stats, name, getattr(self.stats, name) + value)

    def _error(self, e: Exception) -> EmbeddingError:
        """The one-line message for a request that failed for good."""
        import openai

        if isinstance(e, openai.APITimeoutError):
            return EmbeddingError(f"embedding API at {self.endpoint} timed out (after {self.timeout:g} s)")
        if isinstance(e, openai.APIConnectionError):
            return EmbeddingError(f"cannot connect to the embedding API at {self.endpoint}")
        if isinstance(e, openai.AuthenticationError | openai.PermissionDeniedError):
            # The body may quote part of the key, so it is left out.
            return EmbeddingError(
                f"embedding API at {self.endpoint} refused the API key (HTTP {e.status_code})"
            )
        if isinstance(e, openai.APIStatusError):
            too_large = " even for a single text" if e.status_code == _TOO_LARGE else ""
            return EmbeddingError(
                f"embedding API at {self.endpoint} answered HTTP {e.status_code}{too_large}: {self._clean(e)}"
            )
        # e.g. a body that is not an embeddings response
        return EmbeddingError(f"bad response from the embedding API at {self.endpoint}: {self._clean(e)}")

    def _vectors(self, response: Any, expected: int) -> np.ndarray:
        """Vectors in input order from the HTTP response, checked for count and dimension, normalised."""
        try:
            rows = [
                item["embedding"] for item in sorted(response.json()["data"], key=lambda item: item["index"])
            ]
            vectors = np.array(rows, dtype=np.float32)
        except (KeyError, TypeError, ValueError) as e:
            raise EmbeddingError(
                f"bad response from the embedding API at {self.endpoint}: {one_line(e)}"
            ) from e
        if vectors.ndim != 2 or len(vectors) != expected:
            raise EmbeddingError(
                f"bad response from the embedding API at {self.endpoint}: "
                f"{len(rows)} vectors for {expected} texts"
            )
        with self._lock:
            if self._dim is not None and vectors.shape[1] != self._dim:
                raise EmbeddingError(
                    f"embedding API at {self.endpoint} returned {vectors.shape[1]} dimensions, "
                    f"expected {self._dim}"
                )
            self._dim = vectors.shape[1]
        return l2_normalise(vectors)

    def _clean(self, error: BaseException) -> str:
        """A short one-line server message with the key masked, in case the server echoes it."""
        text = " ".join(str(error).split())
        if self._key != _NO_KEY:
            text = text.replace(self._key, "***")  # before truncating, so no fragment of the key survives
        return text[:_MAX_DETAIL]


def _backoff(attempt: int) -> float:
    return min(_FIRST_WAIT * 2**attempt, _LONGEST_WAIT) * (1 - 0.25 * random.random())


def _retry_after(headers: Any) -> float | None:
    """The server's own wait (Retry-After in seconds, or retry-after-ms), when it gives a usable one."""
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        try:
            seconds = float(headers.get(name, "")) * scale
        except ValueError:  # absent, or an HTTP date: back off instead
            continue
        if 0 <= seconds <= _LONGEST_WAIT:
            return seconds
    return None


def _endpoint(model: str, base_url: str | None, api_version: str | None) -> str:
    """Where requests go, for error messages (the key is never part of it)."""
    if api_version:
        return f"{(base_url or '').rstrip('/')}/openai/deployments/{model}"
    return (base_url or "https://api.openai.com/v1").rstrip("/")
