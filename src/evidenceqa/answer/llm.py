"""Answers from any OpenAI-compatible chat API: OpenAI, Azure OpenAI, vLLM, Ollama, llama.cpp server.

The answer is always streamed, so a clinician sees it as it is written; token usage comes from the
final chunk the server sends when asked (`stream_options.include_usage`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from pydantic import BaseModel, Field, SecretStr

from evidenceqa.answer.base import ABSTAIN_MESSAGE, Draft, Evidence, GenerationError, abstention
from evidenceqa.answer.prompt import messages, rewrite_messages
from evidenceqa.embeddings.base import Embedder
from evidenceqa.records import Usage

# Local servers (vLLM, Ollama, llama.cpp) ignore the key, but the SDK refuses to start without one.
_NO_KEY = "not-needed"
# Longest server message quoted in an error; enough for "model X not found", short enough for a log line.
_MAX_DETAIL = 200
# One retry after a short pause rides out a restarting server or a passing 5xx without keeping a
# clinician waiting long.
_RETRY_PAUSE_S = 0.5
# A rewritten question is one line; this bounds what a rambling model costs.
REWRITE_TOKENS = 80
# Models sometimes wrap the abstain sentence in quotes, or write a typographic apostrophe.
_QUOTES = "\"'`“”‘’"


@dataclass
class _Streamed:
    text: str
    usage: Usage
    finish_reason: str | None


class LLMGenerator:
    """`model` is the model name, or the deployment name on Azure (when `api_version` is set)."""

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        api_version: str | None = None,
        timeout_s: float = 30.0,
        max_tokens: int = 400,
        temperature: float = 0.0,
    ) -> None:
        if not model:
            raise GenerationError(
                "no LLM model named (set EVIDENCEQA_LLM_MODEL: the model or Azure deployment)"
            )
        self.model = model
        self.name = f"llm:{model}"
        self.timeout_s = timeout_s
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.endpoint = _endpoint(model, base_url, api_version)
        self._key = api_key or _NO_KEY
        self.client = self._client(base_url, api_version)

    def generate(
        self, question: str, evidence: Sequence[Evidence], on_delta: Callable[[str], None] | None = None
    ) -> Draft:
        if not evidence:  # nothing to answer from: the model could only guess, so it is not asked
            if on_delta:
                on_delta(ABSTAIN_MESSAGE)
            return abstention(self.model)
        stream = self._open(messages(question, evidence))
        streamed = self._read(stream, on_delta or _ignore)
        return self._draft(streamed)

    def rewrite_followup(self, question: str, previous: Sequence[str]) -> str:
        """The follow-up rewritten by the model to stand alone (one line; GenerationError if none)."""
        streamed = self._read(self._open(rewrite_messages(question, previous), REWRITE_TOKENS), _ignore)
        line = " ".join(streamed.text.strip().strip(_QUOTES).split())
        if not line:
            raise GenerationError(f"LLM at {self.endpoint}: empty rewrite of a follow-up question")
        return line

    def _client(self, base_url: str | None, api_version: str | None) -> Any:
        import openai  # on use: it takes a moment to load, and the extractive generator never needs it

        # Retries are decided here (`_open`), not by the SDK, which would also retry 408/409/429 and
        # timeouts and may wait up to a minute on Retry-After.
        common: dict[str, Any] = {"api_key": self._key, "timeout": self.timeout_s, "max_retries": 0}
        try:
            if api_version:
                if not base_url:
                    raise GenerationError(
                        "Azure OpenAI needs the resource endpoint (EVIDENCEQA_LLM_API_BASE)"
                    )
                return openai.AzureOpenAI(azure_endpoint=base_url, api_version=api_version, **common)
            return openai.OpenAI(base_url=base_url, **common)
        except openai.OpenAIError as e:
            raise GenerationError(
                f"cannot set up the LLM client for {self.endpoint}: {self._clean(str(e))}"
            ) from e

    def _open(self, prompt: list[dict[str, str]], max_tokens: int | None = None) -> Any:
        """The response stream, once the server has accepted the request; one retry if it is transient."""
        import openai

        try:
            return self._request(prompt, max_tokens)
        except openai.OpenAIError as e:
            if not _transient(e):
                raise self._error(e) from e
        time.sleep(_RETRY_PAUSE_S)
        try:
            return self._request(prompt, max_tokens)
        except openai.OpenAIError as e:
            raise self._error(e) from e

    def _request(self, prompt: list[dict[str, str]], max_tokens: int | None) -> Any:
        return self.client.chat.completions.create(
            model=self.model,
            messages=prompt,
            max_tokens=max_tokens or self.max_tokens,
            temperature=self.temperature,
            stream=True,
            stream_options={"include_usage": True},
        )

    def _read(self, stream: Any, on_delta: Callable[[str], None]) -> _Streamed:
        """Pass each piece of text on as it arrives. Not retried: the reader has already seen part of it."""
        import openai

        parts: list[str] = []
        usage = Usage()
        finish_reason = None
        try:
            for chunk in stream:
                usage = _usage(chunk) or usage
                for choice in _choices(chunk):
                    finish_reason = choice.finish_reason or finish_reason
                    piece = getattr(getattr(choice, "delta", None), "content", None)
                    if piece:
                        parts.append(piece)
                        on_delta(piece)
        except openai.OpenAIError as e:  # a timeout or dropped connection mid-answer, an error event
            raise self._error(e) from e
        finally:
            stream.close()
        return _Streamed("".join(parts), usage, finish_reason)

    def _draft(self, streamed: _Streamed) -> Draft:
        text = streamed.text.strip()
        if not text:
            raise GenerationError(
                f"LLM at {self.endpoint}: empty answer (finish reason: {streamed.finish_reason or 'none'})"
            )
        if is_abstention(text):
            # The exact words, whatever quoting the model added: abstentions are recognised by them.
            return replace(abstention(self.model), usage=streamed.usage)
        from evidenceqa.answer.citations import split_answer  # on use: loading a generator stays light

        return Draft(text, split_answer(text), abstained=False, model=self.model, usage=streamed.usage)

    def _error(self, error: Exception) -> GenerationError:
        return GenerationError(f"LLM at {self.endpoint}: {self._reason(error)}")

    def _reason(self, error: Exception) -> str:
        import openai

        if isinstance(error, openai.APITimeoutError):
            return f"timed out after {self.timeout_s:g} s"
        if isinstance(error, openai.APIConnectionError):
            cause = error.__cause__
            return f"cannot connect ({self._clean(str(cause))})" if cause else "cannot connect"
        if isinstance(error, openai.AuthenticationError | openai.PermissionDeniedError):
            # The body may quote part of the key, so it is left out.
            word = "unauthorized" if error.status_code == 401 else "forbidden"
            return f"{error.status_code} {word} — check EVIDENCEQA_LLM_API_KEY"
        if isinstance(error, openai.NotFoundError):
            return f"404 not found — check EVIDENCEQA_LLM_MODEL and EVIDENCEQA_LLM_API_BASE: {self._detail(error)}"
        if isinstance(error, openai.APIStatusError):
            return f"{error.status_code} {self._detail(error)}"
        return self._detail(error)

    def _detail(self, error: Exception) -> str:
        """The server's own message when it sent one ({"error": {"message": …}}), else the SDK's."""
        body = getattr(error, "body", None)
        message = body.get("message") if isinstance(body, dict) else None
        return self._clean(message if isinstance(message, str) else str(error))

    def _clean(self, text: str) -> str:
        """One short line with the key masked, in case the server echoes it."""
        line = " ".join(text.split())
        if self._key != _NO_KEY:
            line = line.replace(self._key, "***")  # before truncating, so no fragment of the key survives
        return line[:_MAX_DETAIL]


class LLMOptions(BaseModel):
    llm_model: str | None = None  # the model name, or the deployment name on Azure
    llm_api_base: str | None = None  # e.g. http://localhost:11434/v1 or https://<resource>.openai.azure.com
    llm_api_key: SecretStr | None = None
    llm_api_version: str | None = None  # set for Azure OpenAI
    # Bounds the wait for the first token and between tokens, not the whole answer: a slow local
    # model may stream for longer than this and still answer.
    llm_timeout_s: float = Field(30, gt=0)
    llm_max_tokens: int = Field(400, ge=1)


def build_llm_generator(settings: LLMOptions, embedder: Embedder | None = None) -> LLMGenerator:
    """The registered `llm` generator: any OpenAI-compatible endpoint the settings name (the
    embedder is not needed: the model writes the answer)."""
    import openai  # noqa: F401  (the `llm` extra: missing, it is a clear error now, not at the first question)

    key = settings.llm_api_key.get_secret_value() if settings.llm_api_key else None
    return LLMGenerator(
        settings.llm_model or "",
        base_url=settings.llm_api_base,
        api_key=key,
        api_version=settings.llm_api_version,
        timeout_s=settings.llm_timeout_s,
        max_tokens=settings.llm_max_tokens,
    )


def is_abstention(text: str) -> bool:
    """The abstain sentence, allowing for surrounding quotes, a missing final period, a curly apostrophe."""
    core = text.strip().strip(_QUOTES).strip().rstrip(".").replace("’", "'")
    return core == ABSTAIN_MESSAGE.rstrip(".")


def _transient(error: Exception) -> bool:
    """Worth one retry: a failed connection or a 5xx. Not a timeout (the wait was already the limit)
    nor a 4xx (the same request would be refused again)."""
    import openai

    if isinstance(error, openai.APITimeoutError):
        return False
    return isinstance(error, openai.APIConnectionError | openai.InternalServerError)


def _choices(chunk: Any) -> Iterable[Any]:
    # Azure's first chunk carries only content-filter results, and the usage chunk has no choices.
    return getattr(chunk, "choices", None) or []


def _usage(chunk: Any) -> Usage | None:
    usage = getattr(chunk, "usage", None)
    if usage is None:
        return None
    return Usage(getattr(usage, "prompt_tokens", 0) or 0, getattr(usage, "completion_tokens", 0) or 0)


def _endpoint(model: str, base_url: str | None, api_version: str | None) -> str:
    """Where requests go, for error messages (the key is never part of it)."""
    if api_version:
        return f"{(base_url or '').rstrip('/')}/openai/deployments/{model}"
    return (base_url or "https://api.openai.com/v1").rstrip("/")


def _ignore(_: str) -> None:
    pass
