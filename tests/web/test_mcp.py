"""The MCP server through the official `mcp` SDK's own client, over streamable HTTP against the app
served by uvicorn (SQLite and PostgreSQL): tools and their schemas, each tool on the small library,
the document resource, tokens refused, and bad input answered as tool errors with nothing stored."""

from __future__ import annotations

import logging
import os
import re
import subprocess
import sys
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

import anyio
import httpx
import httpx2
import pytest
from mcp.client import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, TextResourceContents
from mcp_types.jsonrpc import INVALID_PARAMS

from evidenceqa.cli.agents import TOKEN_VARIABLE
from evidenceqa.library.catalogue import Catalogue
from evidenceqa.settings import Settings
from evidenceqa.store import answers_between, create_user, list_users, lookups_between, open_store
from evidenceqa.web.mcp import build_server
from tests.web.conftest import CEFAZOLIN, DOCS, PASSWORD, SHAVE, Live

T = TypeVar("T")
ALICE = "alice@example.org"


@asynccontextmanager
async def mcp_session(live: Live, token: str) -> AsyncIterator[ClientSession]:
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=120) as http,
        streamable_http_client(f"{live.url}/mcp", http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


def with_session(live: Live, work: Callable[[ClientSession], Awaitable[T]], token: str | None = None) -> T:
    async def run() -> T:
        async with mcp_session(live, token or live.tokens[ALICE]) as session:
            return await work(session)

    return anyio.run(run)


def raised(call: Callable[[], object]) -> BaseException:
    """What `call` raised, out of the task groups the client wraps it in."""
    try:
        call()
    except BaseException as exc:
        while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
            exc = exc.exceptions[0]
        return exc
    raise AssertionError("nothing was raised")


def structured(result: Any) -> dict[str, Any]:
    assert isinstance(result, CallToolResult) and not result.is_error, result
    return result.structured_content


def answers_of(live: Live) -> list[Any]:
    now = datetime.now(UTC)
    return answers_between(live.store, now - timedelta(days=1), now + timedelta(days=1))


def test_each_tool_is_registered_once(caplog: pytest.LogCaptureFixture) -> None:
    # A second registration is dropped by the SDK with a warning in the server's log at every start.
    with caplog.at_level(logging.WARNING):
        build_server(lambda: None, lambda ctx: None)  # type: ignore[arg-type,return-value]
    assert not [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


def test_the_tools_are_listed_with_schemas_an_llm_can_act_on(live: Live) -> None:
    async def work(session: ClientSession) -> Any:
        return (await session.list_tools()).tools, (
            await session.list_resource_templates()
        ).resource_templates

    tools, templates = with_session(live, work)
    by_name = {tool.name: tool for tool in tools}
    assert set(by_name) == {"search_evidence", "answer_question", "get_passage", "list_collections"}
    search = by_name["search_evidence"].input_schema
    assert set(search["properties"]) == {"question", "k", "year_min", "year_max", "collection", "doc_type",
                                         "evidence_type", "prefer_evidence"}  # fmt: skip
    assert search["required"] == ["question"]
    assert all(tool.description and len(tool.description) > 40 for tool in tools)
    assert by_name["search_evidence"].output_schema["properties"]["passages"]
    assert [t.uri_template for t in templates] == ["evidenceqa://document/{+doc_id}"]


def lookups_of(live: Live) -> Counter[tuple[str, str]]:
    now = datetime.now(UTC)
    return lookups_between(live.store, now - timedelta(days=1), now + timedelta(days=1))


def test_search_read_around_and_answer_with_citations_to_real_passages(live: Live) -> None:
    before, looked_up = len(answers_of(live)), lookups_of(live)

    async def work(session: ClientSession) -> Any:
        found = structured(await session.call_tool("search_evidence", {"question": SHAVE, "k": 3}))
        passage = structured(
            await session.call_tool(
                "get_passage", {"chunk_id": found["passages"][0]["chunk_id"], "context": 2}
            )
        )
        answer = structured(await session.call_tool("answer_question", {"question": CEFAZOLIN}))
        holdings = structured(await session.call_tool("list_collections", {}))
        guidelines = structured(
            await session.call_tool("search_evidence", {"question": SHAVE, "evidence_type": "guideline"})
        )
        return found, passage, answer, holdings, guidelines

    found, passage, answer, holdings, guidelines = with_session(live, work)
    assert guidelines["passages"] and {p["doc_id"] for p in guidelines["passages"]} == {"ponv"}
    assert guidelines["passages"][0]["evidence_type"] == "guideline"
    assert guidelines["filters"]["evidence_types"] == ["guideline"]
    top = found["passages"][0]
    assert top["doc_id"] == "shave" and top["rank"] == 1 and "Shaving" in top["text"]
    assert top["url"] == "https://example.org/shave" and top["year"] == 2007
    assert top["cite"] == "Hair removal before spinal surgery. 2007. https://example.org/shave"
    assert passage["chunk_id"] == top["chunk_id"] and passage["text"] == top["text"]
    assert passage["doc_id"] == "shave" and isinstance(passage["before"], list)

    assert not answer["abstained"] and answer["citations"]
    with Catalogue(live.app.state.services.settings.catalogue_path) as catalogue:
        chunks = catalogue.get_chunks([c["chunk_id"] for c in answer["citations"]])
    for citation in answer["citations"]:  # each cites a real chunk, quoting text it holds
        assert citation["text"] in chunks[citation["chunk_id"]].body
    assert {c["doc_id"] for c in answer["citations"]} == {"xss"}
    assert holdings["documents"] == len(DOCS) and holdings["collections"][0]["updated_at"]

    stored = answers_of(live)
    assert len(stored) == before + 1  # the answer is a record; the searches and reads are counted
    counted = lookups_of(live) - looked_up
    assert counted == {("mcp", "search"): 2, ("mcp", "passage"): 1, ("mcp", "collections"): 1}
    assert stored[-1].channel == "mcp" and stored[-1].answer.question == CEFAZOLIN
    assert stored[-1].user_id == next(u.id for u in list_users(live.store) if u.email == ALICE)


def test_a_follow_up_is_answered_against_the_earlier_questions_an_agent_passes(live: Live) -> None:
    async def work(session: ClientSession) -> Any:
        arguments = {
            "question": "Is it safe after knee arthroplasty?",
            "earlier_questions": ["Does tranexamic acid reduce blood loss after knee arthroplasty?"],
        }
        return structured(await session.call_tool("answer_question", arguments))

    answer = with_session(live, work)
    assert answer["searched_for"] == "Is tranexamic acid safe after knee arthroplasty?"
    assert answer["citations"][0]["doc_id"] == "txa"
    assert answers_of(live)[-1].answer.searched_for == answer["searched_for"]


def test_a_document_reads_as_a_resource(live: Live) -> None:
    async def work(session: ClientSession) -> Any:
        return await session.read_resource("evidenceqa://document/shave")

    looked_up = lookups_of(live)
    [content] = with_session(live, work).contents
    assert lookups_of(live) - looked_up == {("mcp", "document"): 1}
    assert isinstance(content, TextResourceContents) and content.mime_type == "text/markdown"
    assert content.text.startswith("# Hair removal before spinal surgery\n")
    assert "## Results" in content.text and "Clipping did not." in content.text


def test_bad_input_is_a_tool_error_naming_the_reason_and_stores_nothing(
    live: Live, caplog: pytest.LogCaptureFixture
) -> None:
    before = len(answers_of(live))
    caplog.set_level(logging.INFO)  # what a deployment logs: the SDK's failures included

    async def work(session: ClientSession) -> list[Any]:
        return [
            await session.call_tool("answer_question", {"question": "why? " * 2000}),
            await session.call_tool("search_evidence", {"question": SHAVE, "k": 500}),
            await session.call_tool("get_passage", {"chunk_id": "no-such-chunk"}),
            await session.call_tool(
                "answer_question", {"question": SHAVE, "year_min": 2022, "year_max": 2019}
            ),
            await session.call_tool("search_evidence", {"question": SHAVE, "evidence_type": "level-1a"}),
        ]

    async def unknown_argument(session: ClientSession) -> Any:
        return await session.call_tool("answer_question", {"question": SHAVE, "dose": "high"})

    too_long, too_many, missing, no_years, no_type = with_session(live, work)
    assert no_type.is_error and "unknown evidence type 'level-1a'" in no_type.content[0].text
    assert (
        no_years.is_error
        and "the earliest year (2022) is after the latest (2019)" in no_years.content[0].text
    )
    assert too_long.is_error and "the limit is 2,000 (setting max_question_chars)" in too_long.content[0].text
    assert too_many.is_error and "k" in too_many.content[0].text
    assert missing.is_error and "no passage 'no-such-chunk' in the library" in missing.content[0].text
    refused = raised(lambda: with_session(live, unknown_argument))  # the protocol's own error
    assert isinstance(refused, MCPError) and refused.code == INVALID_PARAMS
    assert refused.message == (
        "answer_question takes no argument 'dose'; it takes question, year_min, year_max, collection, doc_type, "
        "evidence_type, prefer_evidence, earlier_questions"
    )
    assert len(answers_of(live)) == before
    # The SDK logs each failure, by field name and our message only: never the question or a value.
    assert "Tool 'search_evidence' rejected arguments: ['k']" in caplog.text
    assert SHAVE not in caplog.text and "why?" not in caplog.text and "high" not in caplog.text


@pytest.mark.parametrize("token", ["", "not-a-token"])
def test_a_missing_or_wrong_token_is_refused(live: Live, token: str) -> None:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    response = httpx.post(
        f"{live.url}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, headers=headers
    )
    assert response.status_code == 401 and response.headers["www-authenticate"] == "Bearer"
    assert "API token" in response.json()["error"]
    # The SDK's client cannot even start a session.
    refused = raised(lambda: with_session(live, lambda session: session.send_ping(), token=token or "-"))
    assert isinstance(refused, MCPError) and refused.message == "Server returned an error response"


# ---- over stdio: `evidenceqa mcp`, as a desktop assistant starts it ---------------------------------


def cli(settings: Settings, *args: str, token: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **environment(settings)}
    if token is not None:
        env[TOKEN_VARIABLE] = token
    command = [sys.executable, "-m", "evidenceqa", "--home", str(settings.home), *args]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)


def environment(settings: Settings) -> dict[str, str]:
    # The stdio client starts the server with a minimal environment: it gets this one's import path.
    path = {"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else {}
    return {"EVIDENCEQA_MODELS_DIR": str(settings.models_path), "EVIDENCEQA_DATABASE_URL": settings.database_url,
            **path}  # fmt: skip


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def stdio_settings(
    web_settings: Settings, tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Settings:
    """The small home with its own new database of each kind, holding one clinician."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path_factory.mktemp('stdio') / 'app.sqlite3'}"
    else:
        url = request.getfixturevalue("postgres").create_database()
    settings = web_settings.model_copy(update={"database_url": url})
    with open_store(settings) as store:
        create_user(store, ALICE, "Alice", PASSWORD)
    return settings


def test_tokens_are_made_listed_and_revoked_from_the_shell(stdio_settings: Settings) -> None:
    made = cli(stdio_settings, "token", "create", "--user", ALICE, "--name", "ward chatbot")
    assert made.returncode == 0, made.stderr
    token = made.stdout.strip()
    assert token.startswith("eqa_") and "shown only now" in made.stderr and token not in made.stderr
    listed = cli(stdio_settings, "token", "list", "--user", ALICE)
    assert "ward chatbot" in listed.stdout and token not in listed.stdout
    token_id = re.search(r"token (\d+) ", made.stderr).group(1)
    assert cli(stdio_settings, "token", "revoke", token_id, "--user", ALICE).returncode == 0
    again = cli(stdio_settings, "token", "revoke", token_id, "--user", ALICE)
    assert again.returncode == 2 and again.stderr.strip().endswith(f"{ALICE} has no token {token_id}")
    nobody = cli(stdio_settings, "token", "create", "--user", "nobody@example.org", "--name", "x")
    assert nobody.returncode == 2 and "no account with the email 'nobody@example.org'" in nobody.stderr


def test_the_stdio_server_answers_the_official_client_for_the_tokens_owner(stdio_settings: Settings) -> None:
    token = cli(stdio_settings, "token", "create", "--user", ALICE, "--name", "desktop").stdout.strip()
    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "evidenceqa", "--home", str(stdio_settings.home), "mcp"],
        env={**environment(stdio_settings), TOKEN_VARIABLE: token},
    )

    async def run() -> tuple[Any, Any, Any]:
        async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            tools = (await session.list_tools()).tools
            found = await session.call_tool("search_evidence", {"question": SHAVE, "k": 2})
            answer = await session.call_tool("answer_question", {"question": SHAVE})
            return tools, found, answer

    tools, found, answer = anyio.run(run)
    assert len(tools) == 4
    assert structured(found)["passages"][0]["doc_id"] == "shave"
    assert structured(answer)["citations"][0]["doc_id"] == "shave"
    with open_store(stdio_settings) as store:
        now = datetime.now(UTC)
        [record] = answers_between(store, now - timedelta(days=1), now + timedelta(days=1))
    assert record.channel == "mcp" and record.answer.question == SHAVE


@pytest.mark.parametrize("token", [None, "eqa_not-a-token"])
def test_the_stdio_server_refuses_to_start_without_a_valid_token(
    stdio_settings: Settings, token: str | None
) -> None:
    started = cli(stdio_settings, "mcp", token=token)
    assert started.returncode == 2 and started.stdout == ""
    assert TOKEN_VARIABLE in started.stderr and len(started.stderr.strip().splitlines()) == 1
