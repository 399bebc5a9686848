"""LLMGenerator against a local OpenAI-compatible server speaking the real streaming protocol."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from evidenceqa.answer.base import ABSTAIN_MESSAGE, Draft, Evidence, GenerationError
from evidenceqa.answer.llm import LLMGenerator, build_llm_generator, is_abstention
from evidenceqa.answer.prompt import SYSTEM_PROMPT
from evidenceqa.documents import Chunk
from evidenceqa.records import Usage
from evidenceqa.settings import Settings
from tests.answer.openai_server import OpenAIServer, Reply, answer, failure

KEY = "sk-test-secret-123"
QUESTION = "When should tranexamic acid be given after major trauma?"


def evidence(count: int = 3) -> list[Evidence]:
    topics = [
        ("Tranexamic acid in trauma", 2019, ["Methods", "Dosing"], "Give 1 g intravenously over 10 minutes."),
        (
            "CRASH-2 follow-up",
            2011,
            ["Results"],
            "Benefit was confined to treatment within 3 hours of injury.",
        ),
        ("Bleeding guideline", None, [], "Start tranexamic acid as early as possible."),
    ]
    return [
        Evidence(
            n=i + 1,
            chunk=Chunk(f"c{i}", f"d{i}", body, body, "paragraph", section, 0, title=title, year=year),
            score=1.0 - i / 10,
        )
        for i, (title, year, section, body) in enumerate(topics[:count])
    ]


@pytest.fixture
def server() -> Iterator[OpenAIServer]:
    with OpenAIServer() as running:
        yield running


def generator(server: OpenAIServer, **options: float) -> LLMGenerator:
    return LLMGenerator("llama3.1:8b", f"{server.url}/v1", KEY, **options)  # type: ignore[arg-type]


def cited(draft: Draft) -> set[int]:
    return {n for sentence in draft.sentences for n in sentence.citations}


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_streams_a_cited_answer_delta_by_delta(server: OpenAIServer) -> None:
    pieces = ("Give tranexamic acid ", "within 3 hours of injury [2]", ", 1 g intravenously [1].")
    server.script(answer(*pieces, usage=(812, 24)))
    received: list[str] = []
    draft = generator(server).generate(QUESTION, evidence(), received.append)
    assert received == list(pieces)
    assert draft.text == "".join(pieces)
    assert draft.usage == Usage(prompt_tokens=812, completion_tokens=24)
    assert not draft.abstained
    assert draft.model == "llama3.1:8b"
    assert cited(draft) == {1, 2}
    assert "[" not in " ".join(s.text for s in draft.sentences)  # markers moved into citations


def test_request_carries_the_prompt_and_streaming_options(server: OpenAIServer) -> None:
    server.script(answer("Within 3 hours [2]."))
    LLMGenerator("gpt-4o-mini", f"{server.url}/v1", KEY, timeout_s=5, max_tokens=123).generate(
        QUESTION, evidence()
    )
    (request,) = server.requests
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == f"Bearer {KEY}"
    body = request.body
    assert body["model"] == "gpt-4o-mini"
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert (body["temperature"], body["max_tokens"]) == (0, 123)
    system, user = body["messages"]
    assert system == {"role": "system", "content": SYSTEM_PROMPT}
    assert user["role"] == "user"
    assert (
        "[1] Tranexamic acid in trauma (2019) — Methods › Dosing\nGive 1 g intravenously" in user["content"]
    )
    assert "[2] CRASH-2 follow-up (2011) — Results\nBenefit was confined" in user["content"]
    assert "[3] Bleeding guideline\nStart tranexamic acid" in user["content"]
    assert user["content"].endswith(QUESTION)


def test_usage_is_zero_when_the_server_sends_none(server: OpenAIServer) -> None:
    server.script(answer("Within 3 hours [2].", usage=None))
    assert generator(server).generate(QUESTION, evidence()).usage == Usage(0, 0)


@pytest.mark.parametrize(
    "pieces",
    [
        ("I don't have adequate information ", "to answer this question."),
        ("I don't have adequate information to answer this question",),
        ('"I don’t have adequate information to answer this question."\n',),
    ],
)
def test_abstention_is_detected(server: OpenAIServer, pieces: tuple[str, ...]) -> None:
    server.script(answer(*pieces, usage=(500, 12)))
    draft = generator(server).generate(QUESTION, evidence())
    assert draft.abstained
    assert draft.text == ABSTAIN_MESSAGE  # the exact words, however the model quoted them
    assert draft.usage == Usage(500, 12)


def test_an_answer_that_merely_contains_the_abstain_sentence_is_not_an_abstention(
    server: OpenAIServer,
) -> None:
    server.script(answer(f"{ABSTAIN_MESSAGE} Early tranexamic acid reduces death [2]."))
    draft = generator(server).generate(QUESTION, evidence())
    assert not draft.abstained
    assert 2 in cited(draft)


def test_is_abstention() -> None:
    assert is_abstention(f"  {ABSTAIN_MESSAGE}  ")
    assert is_abstention(f"'{ABSTAIN_MESSAGE}'")
    assert not is_abstention("I don't have adequate information to answer this question about dosing.")
    assert not is_abstention("")


def test_a_citation_of_missing_evidence_survives_for_the_checker(server: OpenAIServer) -> None:
    server.script(answer("Give it within 3 hours [2].", " Repeat the dose after 8 hours [7]."))
    draft = generator(server).generate(QUESTION, evidence(3))
    assert "[7]" in draft.text
    assert 7 in cited(draft)
    assert "[4]" not in server.requests[0].body["messages"][1]["content"]  # only [1]–[3] were offered


def test_no_evidence_abstains_without_asking(server: OpenAIServer) -> None:
    received: list[str] = []
    draft = generator(server).generate(QUESTION, [], received.append)
    assert draft.abstained and draft.text == ABSTAIN_MESSAGE
    assert received == [ABSTAIN_MESSAGE]
    assert server.requests == []


def test_server_error_is_retried_once(server: OpenAIServer) -> None:
    server.script(failure(500, "upstream overloaded"), answer("Within 3 hours [2]."))
    draft = generator(server).generate(QUESTION, evidence())
    assert draft.text == "Within 3 hours [2]."
    assert len(server.requests) == 2


def test_server_error_twice_is_reported(server: OpenAIServer) -> None:
    server.script(failure(500, "upstream overloaded"), failure(502, "bad gateway"), answer("unused [1]."))
    with pytest.raises(GenerationError) as error:
        generator(server).generate(QUESTION, evidence())
    assert str(error.value) == f"LLM at {server.url}/v1: 502 bad gateway"
    assert len(server.requests) == 2


def test_rejected_key_is_reported_not_retried_nor_echoed(server: OpenAIServer) -> None:
    server.script(failure(401, f"Incorrect API key provided: {KEY}"), answer("unused [1]."))
    with pytest.raises(GenerationError) as error:
        generator(server).generate(QUESTION, evidence())
    assert str(error.value) == (f"LLM at {server.url}/v1: 401 unauthorized — check EVIDENCEQA_LLM_API_KEY")
    assert len(server.requests) == 1


@pytest.mark.parametrize(
    ("status", "message", "expected"),
    [
        (404, "model 'llama9' not found", "404 not found — check EVIDENCEQA_LLM_MODEL"),
        (429, f"Rate limit reached for key {KEY}", "429 Rate limit reached for key ***"),
        (400, "maximum context length is 8192 tokens", "400 maximum context length is 8192 tokens"),
    ],
    ids=["404", "429", "400"],
)
def test_client_errors_are_not_retried(
    server: OpenAIServer, status: int, message: str, expected: str
) -> None:
    server.script(failure(status, message), answer("unused [1]."))
    with pytest.raises(GenerationError) as error:
        generator(server).generate(QUESTION, evidence())
    assert str(error.value).startswith(f"LLM at {server.url}/v1: {expected}")
    assert KEY not in str(error.value)
    assert len(server.requests) == 1


def test_slow_server_times_out_quickly(server: OpenAIServer) -> None:
    server.script(Reply(deltas=("too late [1].",), delay_s=5))
    start = time.perf_counter()
    with pytest.raises(GenerationError) as error:
        generator(server, timeout_s=0.5).generate(QUESTION, evidence())
    assert time.perf_counter() - start < 1.5
    assert str(error.value) == f"LLM at {server.url}/v1: timed out after 0.5 s"
    assert len(server.requests) == 1  # a timeout is not retried: the wait was already the limit


def test_stream_stalling_mid_answer_times_out(server: OpenAIServer) -> None:
    server.script(Reply(deltas=("Within 3 hours", " [2]."), stall_s=5))
    received: list[str] = []
    start = time.perf_counter()
    with pytest.raises(GenerationError, match=r"timed out after 0\.5 s"):
        generator(server, timeout_s=0.5).generate(QUESTION, evidence(), received.append)
    assert time.perf_counter() - start < 1.5
    assert received == ["Within 3 hours"]


def test_error_event_inside_the_stream(server: OpenAIServer) -> None:
    server.script(Reply(deltas=("Within",), error_event=True, message="engine crashed"))
    with pytest.raises(GenerationError) as error:
        generator(server).generate(QUESTION, evidence())
    assert str(error.value) == f"LLM at {server.url}/v1: engine crashed"


def test_empty_answer_is_an_error(server: OpenAIServer) -> None:
    server.script(Reply(finish_reason="content_filter", usage=(100, 0)))
    with pytest.raises(GenerationError, match=r"empty answer \(finish reason: content_filter\)"):
        generator(server).generate(QUESTION, evidence())


def test_unreachable_server() -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    with pytest.raises(GenerationError, match="cannot connect") as error:
        LLMGenerator("m", url, KEY, timeout_s=2).generate(QUESTION, evidence())
    assert str(error.value).startswith(f"LLM at {url}: ")


def test_azure_deployment_url_and_headers(server: OpenAIServer) -> None:
    server.script(answer("Within 3 hours [2].", usage=(900, 8)))
    llm = LLMGenerator("gpt4o-prod", server.url, KEY, api_version="2024-10-21")
    draft = llm.generate(QUESTION, evidence())
    assert (draft.text, draft.usage, llm.name) == ("Within 3 hours [2].", Usage(900, 8), "llm:gpt4o-prod")
    (request,) = server.requests
    assert request.path == "/openai/deployments/gpt4o-prod/chat/completions"
    assert request.query["api-version"] == ["2024-10-21"]
    assert request.headers["api-key"] == KEY
    assert "authorization" not in request.headers
    assert request.body["stream_options"] == {"include_usage": True}


def test_azure_errors_name_the_deployment(server: OpenAIServer) -> None:
    server.script(failure(401, "Access denied due to invalid subscription key."))
    with pytest.raises(GenerationError) as error:
        LLMGenerator("gpt4o-prod", server.url, KEY, api_version="2024-10-21").generate(QUESTION, evidence())
    assert str(error.value).startswith(f"LLM at {server.url}/openai/deployments/gpt4o-prod: 401 unauthorized")


def test_misconfiguration_is_reported_up_front() -> None:
    with pytest.raises(GenerationError, match="EVIDENCEQA_LLM_MODEL"):
        LLMGenerator("", "http://127.0.0.1:1/v1")
    with pytest.raises(GenerationError, match="EVIDENCEQA_LLM_API_BASE"):
        LLMGenerator("gpt4o-prod", None, KEY, api_version="2024-10-21")


def test_built_from_settings(server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)  # no evidenceqa.toml of the developer's
    monkeypatch.setenv("EVIDENCEQA_LLM_API_KEY", KEY)
    settings = Settings(
        generator="llm", llm_model="qwen2.5:7b", llm_api_base=f"{server.url}/v1", llm_max_tokens=64
    )
    llm = build_llm_generator(settings)
    assert (llm.name, llm.timeout_s) == ("llm:qwen2.5:7b", 30)
    server.script(answer("Within 3 hours [2]."))
    llm.generate(QUESTION, evidence())
    (request,) = server.requests
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert (request.body["model"], request.body["max_tokens"]) == ("qwen2.5:7b", 64)
