"""Embeddings from an OpenAI-compatible API: OpenAI, Azure OpenAI, vLLM, Ollama's /v1 server."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from evidenceqa.embeddings.base import EmbeddingError, batched_by_length, l2_normalise, no_texts, one_line

# Local servers (vLLM, Ollama) ignore the key, but the SDK refuses to start without one.
_NO_KEY = "not-needed"
# Longest server message quoted in an error; enough for "model X not found", short enough for a log line.
_MAX_DETAIL = 200
# Text embedded to learn the dimension when it was not given and nothing has been embedded yet.
_PROBE = "dimension probe"


class OpenAIEmbedder:
    """`model` is the model name, or the deployment name on Azure (when `api_version` is set)."""

    def __init__(
        self,
        model: str,
        base_url: str | None,
        api_key: str | None,
        api_version: str | None = None,
        dim: int | None = None,
        batch_size: int = 64,
        timeout: float = 60.0,
        max_retries: int = 3,
    ) -> None:
        if not model:
            raise EmbeddingError("no embedding model named (use openai:<model or Azure deployment>)")
        self.model = model
        self.model_id = f"openai:{model}"
        self.batch_size = batch_size
        self.timeout = timeout
        self._key = api_key or _NO_KEY
        self._dim = dim
        self.endpoint = _endpoint(model, base_url, api_version)
        self.client = self._client(base_url, api_version, max_retries)

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = self._request([_PROBE]).shape[1]
        return self._dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return no_texts(self.dim)
        return batched_by_length(texts, self.batch_size, self._request)

    def embed_query(self, text: str) -> np.ndarray:
        return self._request([text])[0]

    def _client(self, base_url: str | None, api_version: str | None, max_retries: int) -> Any:
        import openai

        # The SDK retries connection errors, 408/429/5xx with backoff; the timeout bounds each try.
        common: dict[str, Any] = {"api_key": self._key, "timeout": self.timeout, "max_retries": max_retries}
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

        try:
            response = self.client.embeddings.create(model=self.model, input=texts, encoding_format="float")
        except openai.APITimeoutError as e:
            raise EmbeddingError(
                f"embedding API at {self.endpoint} timed out (after {self.timeout:g} s)"
            ) from e
        except openai.APIConnectionError as e:
            raise EmbeddingError(f"cannot connect to the embedding API at {self.endpoint}") from e
        except (openai.AuthenticationError, openai.PermissionDeniedError) as e:
            # The body may quote part of the key, so it is left out.
            raise EmbeddingError(
                f"embedding API at {self.endpoint} refused the API key (HTTP {e.status_code})"
            ) from e
        except openai.APIStatusError as e:
            raise EmbeddingError(
                f"embedding API at {self.endpoint} answered HTTP {e.status_code}: {self._clean(e)}"
            ) from e
        except openai.OpenAIError as e:  # e.g. a body that is not an embeddings response
            raise EmbeddingError(
                f"bad response from the embedding API at {self.endpoint}: {self._clean(e)}"
            ) from e
        return self._vectors(response, len(texts))

    def _vectors(self, response: Any, expected: int) -> np.ndarray:
        """Vectors in input order, checked for count and dimension, normalised."""
        try:
            rows = [item.embedding for item in sorted(response.data, key=lambda item: item.index)]
            vectors = np.array(rows, dtype=np.float32)
        except (AttributeError, TypeError, ValueError) as e:
            raise EmbeddingError(
                f"bad response from the embedding API at {self.endpoint}: {one_line(e)}"
            ) from e
        if vectors.ndim != 2 or len(vectors) != expected:
            raise EmbeddingError(
                f"bad response from the embedding API at {self.endpoint}: "
                f"{len(rows)} vectors for {expected} texts"
            )
        if self._dim is not None and vectors.shape[1] != self._dim:
            raise EmbeddingError(
                f"embedding API at {self.endpoint} returned {vectors.shape[1]} dimensions, expected {self._dim}"
            )
        self._dim = vectors.shape[1]
        return l2_normalise(vectors)

    def _clean(self, error: BaseException) -> str:
        """A short one-line server message with the key masked, in case the server echoes it."""
        text = " ".join(str(error).split())
        if self._key != _NO_KEY:
            text = text.replace(self._key, "***")  # before truncating, so no fragment of the key survives
        return text[:_MAX_DETAIL]


def _endpoint(model: str, base_url: str | None, api_version: str | None) -> str:
    """Where requests go, for error messages (the key is never part of it)."""
    if api_version:
        return f"{(base_url or '').rstrip('/')}/openai/deployments/{model}"
    return (base_url or "https://api.openai.com/v1").rstrip("/")
