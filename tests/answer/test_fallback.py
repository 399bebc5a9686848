"""The LLM down, slow or refusing: a clear error by default; with llm_fallback_extractive, an extractive
answer marked in its record (and never cached as the LLM's answer)."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from evidenceqa.answer import GenerationError, load_generator
from evidenceqa.answer.base import DISCARD_STREAMED
from evidenceqa.answer.cache import MemoryCache
from evidenceqa.answer.engine import Engine
from evidenceqa.answer.fallback import FallbackGenerator
from evidenceqa.answer.llm import LLMGenerator
from evidenceqa.answer.pipeline import Answerer
from tests.answer.openai_server import OpenAIServer, Reply, answer, failure, llm_settings
from tests.answer.test_llm import closed_port
from tests.conftest import indexed_engine

KEY = "sk-fallback-secret-42"
QUESTION = "Does shaving the incision site increase infection after spinal surgery?"
DOCS = [
    ("shave", 2007, "Shaving the incision site before spinal surgery increased the rate of infection."),
    ("chg", 2015, "Chlorhexidine gluconate should not be used on mucous membranes."),
]
MARK = "extractive (fallback from llm:gpt-4o-mini)"


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory, models_dir: Path) -> Iterator[Engine]:
    with indexed_engine(tmp_path_factory.mktemp("fallback"), DOCS, models_dir) as opened:
        yield opened


@pytest.fixture
def server() -> Iterator[OpenAIServer]:
    with OpenAIServer() as running:
        yield running


def answerer(engine: Engine, base_url: str, fallback: bool, timeout_s: float = 5) -> Answerer:
    settings = llm_settings(
        engine.settings, base_url, KEY, llm_timeout_s=timeout_s, llm_fallback_extractive=fallback
    )
    return Answerer(settings, engine.retriever(), load_generator(settings, engine.embedder), MemoryCache(10))


def test_the_setting_wraps_the_llm_in_the_fallback(engine: Engine, server: OpenAIServer) -> None:
    assert isinstance(answerer(engine, server.url, fallback=True).generator, FallbackGenerator)
    assert isinstance(answerer(engine, server.url, fallback=False).generator, LLMGenerator)


@pytest.mark.parametrize(
    ("replies", "reason"),
    [((failure(500, "overloaded"), failure(500, "overloaded")), "500 overloaded"),
     ((failure(401, f"Incorrect API key provided: {KEY}"),), "401 unauthorized")],
)  # fmt: skip
def test_an_llm_error_is_clear_without_the_fallback(
    engine: Engine, server: OpenAIServer, replies: tuple[Reply, ...], reason: str
) -> None:
    server.script(*replies)
    with pytest.raises(GenerationError, match=reason) as error:
        answerer(engine, f"{server.url}/v1", fallback=False).ask(QUESTION)
    assert KEY not in str(error.value)


def test_a_failed_llm_gives_a_marked_extractive_answer_that_is_not_cached(
    engine: Engine, server: OpenAIServer, caplog: pytest.LogCaptureFixture
) -> None:
    asker = answerer(engine, f"{server.url}/v1", fallback=True)
    server.script(failure(500, f"upstream echoed {KEY}"), failure(500, f"upstream echoed {KEY}"))
    with caplog.at_level(logging.WARNING):
        stand_in = asker.ask(QUESTION)
    assert stand_in.generator == MARK and not stand_in.abstained
    assert [c.doc_id for c in stand_in.citations] == ["shave"]
    assert "Shaving the incision site" in stand_in.answer
    [warning] = [r for r in caplog.records if r.name == "evidenceqa.answer.fallback"]
    assert "500" in warning.getMessage() and "answered extractively" in warning.getMessage()
    assert KEY not in caplog.text
    server.script(answer("Shaving increased infection [1]."))  # back: its own answer, not the stand-in
    again = asker.ask(QUESTION)
    assert (again.generator, again.cache_hit, again.answer) == (
        "llm:gpt-4o-mini",
        False,
        "Shaving increased infection [1].",
    )
    assert asker.ask(QUESTION).cache_hit


def test_text_streamed_before_a_failure_is_withdrawn_before_the_stand_in_streams(
    engine: Engine, server: OpenAIServer
) -> None:
    asker = answerer(engine, f"{server.url}/v1", fallback=True)
    server.script(Reply(deltas=("Shaving is ", "always safe"), error_event=True, message="engine crashed"))
    streamed: list[str] = []
    stand_in = asker.ask(QUESTION, on_delta=streamed.append, use_cache=False)
    assert stand_in.generator == MARK
    cut = streamed.index(DISCARD_STREAMED)
    assert "".join(streamed[:cut]) == "Shaving is always safe"
    assert "".join(streamed[cut + 1 :]) == stand_in.answer  # what a reader is left with is the answer


def test_an_extractive_answer_from_the_start_withdraws_nothing(engine: Engine, server: OpenAIServer) -> None:
    asker = answerer(engine, f"{server.url}/v1", fallback=True)
    server.script(failure(400, "bad request"))
    streamed: list[str] = []
    asker.ask(QUESTION, on_delta=streamed.append, use_cache=False)
    assert DISCARD_STREAMED not in streamed and streamed


def test_a_slow_llm_times_out_into_the_fallback(engine: Engine, server: OpenAIServer) -> None:
    server.script(Reply(deltas=("late",), delay_s=10))
    started = time.perf_counter()
    stand_in = answerer(engine, f"{server.url}/v1", fallback=True, timeout_s=0.5).ask(QUESTION)
    assert stand_in.generator == MARK
    assert time.perf_counter() - started < 8  # the timeout, not the server's 10 s


def test_an_unreachable_llm_falls_back_or_says_it_cannot_connect(engine: Engine) -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    assert answerer(engine, url, fallback=True).ask(QUESTION).generator == MARK
    with pytest.raises(GenerationError, match="cannot connect"):
        answerer(engine, url, fallback=False).ask(QUESTION)
