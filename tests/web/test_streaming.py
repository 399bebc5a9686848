"""Streaming with a real token-by-token generator: the app over an OpenAI-compatible server (the test
server of tests/answer, speaking the real wire protocol), on SQLite."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from evidenceqa.settings import Settings
from evidenceqa.store import conversations_of, create_user, list_users
from evidenceqa.web.app import create_app
from tests.answer.openai_server import OpenAIServer, Reply, answer, failure, llm_settings
from tests.web.conftest import PASSWORD, SHAVE, Client, logged_in, server_events, store_of


@pytest.fixture(scope="module")
def app(
    web_settings: Settings, llm: OpenAIServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[FastAPI]:
    database = f"sqlite:///{tmp_path_factory.mktemp('db') / 'app.sqlite3'}"
    settings = llm_settings(web_settings, f"{llm.url}/v1", database_url=database)
    application = create_app(settings)
    with TestClient(application):
        create_user(store_of(application), "alice@example.org", "Alice", PASSWORD)
        yield application


@pytest.fixture(scope="module")
def alice(app: FastAPI) -> Client:
    return logged_in(app, "alice@example.org")


def _stream(client: Client, question: str) -> list[tuple[str, dict]]:
    headers = {"X-CSRF-Token": client.csrf, "Accept": "text/event-stream"}
    with client.stream("POST", "/api/ask", json={"question": question}, headers=headers) as response:
        assert response.status_code == 200
        response.read()
    return server_events(response.text)


def _conversations(app: FastAPI) -> int:
    user = next(u for u in list_users(store_of(app)) if u.email == "alice@example.org")
    return len(conversations_of(store_of(app), user))


def test_each_token_is_a_delta_event_in_order(app: FastAPI, llm: OpenAIServer, alice: Client) -> None:
    pieces = (
        "Shaving the incision site ",
        "before spinal surgery increased ",
        "postoperative infection [1].",
    )
    llm.script(answer(*pieces))
    events = _stream(alice, SHAVE)
    assert [name for name, _ in events] == ["delta", "delta", "delta", "answer"]
    # Each piece as it came, but that a trailing space waits for the next (a citation marker may
    # follow it, and is renumbered with it: answer.citations.SourceNumbers).
    assert tuple(data["text"] for _, data in events[:3]) == (
        "Shaving the incision site",
        " before spinal surgery increased",
        " postoperative infection [1].",
    )
    record = events[-1][1]
    assert record["answer"] == "".join(pieces) and record["generator"].startswith("llm")
    assert [c["doc_id"] for c in record["citations"]] == ["shave"]


def test_a_failed_generation_is_an_error_event_and_stores_nothing(
    app: FastAPI, llm: OpenAIServer, alice: Client
) -> None:
    before = _conversations(app)
    llm.script(failure(401, "bad key"))
    events = _stream(alice, "Is chlorhexidine safe on mucous membranes?")
    assert [name for name, _ in events] == ["error"]
    assert "401" in events[0][1]["detail"]
    llm.script(failure(401, "bad key"))
    response = alice.post("/api/ask", json={"question": "Does tranexamic acid reduce blood loss?"},
                          headers={"X-CSRF-Token": alice.csrf})  # fmt: skip
    assert response.status_code == 502 and "401" in response.json()["detail"]
    assert _conversations(app) == before  # no empty conversation left behind


def test_answers_wait_on_the_llm_at_the_same_time(llm: OpenAIServer, alice: Client) -> None:
    """Two clinicians' answers both reach the LLM before either is back: none queues behind another."""
    held = len(llm.held)
    text = ("Shaving the incision site increased infection after spinal surgery [1].",)
    llm.script(
        Reply(deltas=text, usage=(120, 30), together=2), Reply(deltas=text, usage=(120, 30), together=2)
    )
    questions = [  # not asked before in this module: a cached answer would not reach the LLM
        "Does shaving the skin before spinal surgery raise the infection rate?",
        "Does shaving before spinal surgery raise the rate of postoperative infection?",
    ]

    def ask(question: str) -> int:
        return alice.post(
            "/api/ask", json={"question": question}, headers={"X-CSRF-Token": alice.csrf}
        ).status_code

    with ThreadPoolExecutor(2) as pool:
        assert list(pool.map(ask, questions)) == [200, 200]
    assert llm.held[held:] == [True, True]


def test_follow_ups_wait_on_the_llms_rewrite_at_the_same_time(llm: OpenAIServer, alice: Client) -> None:
    """A rewrite waits on the LLM off the engine's thread, so two follow-ups' rewrites reach it
    together, and neither holds up the other's search."""
    text = ("Shaving the incision site increased infection after spinal surgery [1].",)
    headers = {"X-CSRF-Token": alice.csrf}
    started = []
    for question in ("Does shaving before back surgery matter?", "Is shaving before spine surgery harmful?"):
        llm.script(answer(*text))
        started.append(alice.post("/api/ask", json={"question": question}, headers=headers).json())
    held = len(llm.held)
    llm.script(
        Reply(deltas=("Does shaving before spinal surgery raise infection in children?",), together=2),
        Reply(deltas=("Does shaving before spinal surgery raise infection in the elderly?",), together=2),
        answer(*text),
        answer(*text),
    )

    def follow_up(first: dict) -> dict:
        body = {"question": "And in kids?", "conversation_id": first["conversation_id"]}
        return alice.post("/api/ask", json=body, headers=headers).json()

    with ThreadPoolExecutor(2) as pool:
        followed = list(pool.map(follow_up, started))
    assert llm.held[held:] == [True, True]
    assert {a["searched_for"] for a in followed} == {
        "Does shaving before spinal surgery raise infection in children?",
        "Does shaving before spinal surgery raise infection in the elderly?",
    }


def test_a_fallback_after_partial_text_discards_it_in_the_stream(
    web_settings: Settings, llm: OpenAIServer, tmp_path_factory: pytest.TempPathFactory
) -> None:
    database = f"sqlite:///{tmp_path_factory.mktemp('db') / 'app.sqlite3'}"
    settings = llm_settings(
        web_settings, f"{llm.url}/v1", database_url=database, llm_fallback_extractive=True
    )
    application = create_app(settings)
    with TestClient(application):
        create_user(store_of(application), "bob@example.org", "Bob", PASSWORD)
        bob = logged_in(application, "bob@example.org")
        llm.script(Reply(deltas=("Shaving is ", "always safe"), error_event=True, message="engine crashed"))
        events = _stream(bob, SHAVE)
    names = [name for name, _ in events]
    assert names[:3] == ["delta", "delta", "discard"] and names[-1] == "answer"
    after = "".join(data["text"] for name, data in events[3:] if name == "delta")
    record = events[-1][1]
    assert after == record["answer"] and "always safe" not in record["answer"]
    assert record["generator"].startswith("extractive (fallback from llm")
