"""A restricted collection is read only by the accounts granted it, and by their tokens unless a
token is held to other collections: through the JSON API, MCP (the official client) and the
OpenAI-compatible API (the official SDK), on SQLite and PostgreSQL. Nothing of it leaks to others:
not a passage, a citation, a document, nor its name in what the library holds."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import openai
import pytest
from openai import OpenAI

from evidenceqa.answer.engine import Engine
from evidenceqa.chunking import ChunkingConfig
from evidenceqa.library.ingest import Ingestor
from evidenceqa.settings import Settings
from evidenceqa.store import (
    EntitlementError,
    accounts,
    create_user,
    grant,
    list_users,
    open_store,
    restrict,
    restricted_collections,
    withdraw,
)
from evidenceqa.web.app import create_app
from tests.web.conftest import PASSWORD, Live, logged_in, served, store_of, with_people
from tests.web.test_mcp import cli, mcp_session, structured

WARMING = "Does forced-air warming during surgery reduce hypothermia?"
LICENSED = {"doc_id": "warming", "title": "Licensed guideline: perioperative warming", "year": 2021,
            "collection": "licensed",
            "text": "Forced-air warming during surgery reduced hypothermia and wound infection in adults."}  # fmt: skip
OPEN = {"doc_id": "shave", "title": "Hair removal before spinal surgery", "year": 2007, "collection": "default",
        "text": "Shaving the incision site immediately before spinal surgery increased the rate of "
                "postoperative infection. Clipping did not."}  # fmt: skip
ALICE, BOB = "alice@example.org", "bob@example.org"  # Bob is granted the licensed collection


@pytest.fixture(scope="module")
def licensed(tmp_path_factory: pytest.TempPathFactory, models_dir: Path, database_url: str) -> Iterator[Live]:
    root = tmp_path_factory.mktemp("licensed")
    settings = Settings(home=root / "data", models_dir=models_dir, database_url=database_url)
    library = root / "lib.jsonl"
    library.write_text("".join(
        json.dumps({"doc_id": d["doc_id"], "title": d["title"], "year": d["year"], "collection": d["collection"],
                    "sections": [{"heading": "Results", "paragraphs": [d["text"]]}]}) + "\n"
        for d in (LICENSED, OPEN)
    ), encoding="utf-8")  # fmt: skip
    with Engine.open(settings) as engine:
        Ingestor(engine.catalogue, ChunkingConfig()).ingest_file(library)
        engine.sync()
    application = create_app(settings)
    with served(application) as url:
        tokens = with_people(application)
        store = store_of(application)
        restrict(store, "licensed")
        grant(store, user(store, BOB), "licensed")
        yield Live(url, application, tokens)


def user(store: Any, email: str) -> Any:
    return next(u for u in list_users(store) if u.email == email)


def ask_api(live: Live, token: str, question: str, **body: Any) -> httpx.Response:
    return httpx.post(f"{live.url}/api/ask", json={"question": question, **body},
                      headers={"Authorization": f"Bearer {token}"}, timeout=120)  # fmt: skip


def doc_ids(answer: dict[str, Any]) -> set[str]:
    return {c["doc_id"] for c in answer["citations"]}


def test_the_json_api_searches_and_answers_only_within_what_the_account_may_read(licensed: Live) -> None:
    alice, bob = licensed.tokens[ALICE], licensed.tokens[BOB]
    refused = ask_api(licensed, alice, WARMING).json()
    assert "warming" not in doc_ids(refused) and "licensed" not in json.dumps(refused)
    # Held to what she may read, and not shown that bound as a limit of hers to lift.
    assert refused["filters"] == {"readable": ["default"]} and refused["applied_filters"] == []
    assert doc_ids(ask_api(licensed, bob, WARMING).json()) == {"warming"}
    found = httpx.get(f"{licensed.url}/api/search", params={"q": WARMING},
                      headers={"Authorization": f"Bearer {alice}"}).json()  # fmt: skip
    assert {r["doc_id"] for r in found["results"]} == {"shave"}
    asked_for = ask_api(licensed, alice, WARMING, filters={"collections": ["licensed"]})
    assert asked_for.status_code == 403
    assert asked_for.json()["detail"] == "your account may not read the collection licensed"


def test_the_chats_filters_offer_only_the_collections_the_reader_may_read(licensed: Live) -> None:
    bob = logged_in(licensed.app, BOB).get("/").text
    assert '<option value="licensed">licensed</option>' in bob and '<option value="default">' in bob
    alice = logged_in(licensed.app, ALICE).get("/").text
    assert "licensed" not in alice and 'id="collection"' not in alice  # one collection: nothing to choose


def test_mcp_tools_never_return_a_passage_or_document_of_a_collection_not_granted(licensed: Live) -> None:
    async def work(session: Any) -> dict[str, Any]:
        found = await session.call_tool("search_evidence", {"question": WARMING})
        return {
            "found": found,
            "answer": await session.call_tool("answer_question", {"question": WARMING}),
            "holdings": await session.call_tool("list_collections", {}),
            "filtered": await session.call_tool(
                "search_evidence", {"question": WARMING, "collection": "licensed"}
            ),
        }

    async def run(token: str) -> dict[str, Any]:
        async with mcp_session(licensed, token) as session:
            return await work(session)

    alice, bob = anyio.run(run, licensed.tokens[ALICE]), anyio.run(run, licensed.tokens[BOB])
    assert {p["doc_id"] for p in structured(alice["found"])["passages"]} == {"shave"}
    assert "warming" not in doc_ids(structured(alice["answer"]))
    assert [c["collection"] for c in structured(alice["holdings"])["collections"]] == ["default"]
    assert (
        alice["filtered"].is_error
        and "may not read the collection licensed" in alice["filtered"].content[0].text
    )
    bob_found = structured(bob["found"])["passages"]
    assert bob_found[0]["doc_id"] == "warming"
    assert [c["collection"] for c in structured(bob["holdings"])["collections"]] == ["default", "licensed"]

    async def read_licensed(token: str) -> tuple[Any, Any]:
        async with mcp_session(licensed, token) as session:
            passage = await session.call_tool("get_passage", {"chunk_id": bob_found[0]["chunk_id"]})
            try:
                document: Any = await session.read_resource("evidenceqa://document/warming")
            except Exception as exc:
                document = exc
            return passage, document

    passage, document = anyio.run(read_licensed, licensed.tokens[ALICE])
    assert passage.is_error and "no passage" in passage.content[0].text  # as if it did not exist
    assert isinstance(document, Exception) and "no document 'warming'" in str(document)
    passage, document = anyio.run(read_licensed, licensed.tokens[BOB])
    assert structured(passage)["doc_id"] == "warming" and "Forced-air warming" in document.contents[0].text


def test_the_openai_api_answers_within_what_the_account_may_read(licensed: Live) -> None:
    def completion(token: str) -> Any:
        client = OpenAI(base_url=f"{licensed.url}/v1", api_key=token, max_retries=0, timeout=120)
        return client.chat.completions.create(
            model="evidenceqa", messages=[{"role": "user", "content": WARMING}]
        )

    assert "warming" not in doc_ids(completion(licensed.tokens[ALICE]).model_extra["evidenceqa"])
    assert doc_ids(completion(licensed.tokens[BOB]).model_extra["evidenceqa"]) == {"warming"}
    client = OpenAI(base_url=f"{licensed.url}/v1", api_key=licensed.tokens[ALICE], max_retries=0)
    with pytest.raises(openai.PermissionDeniedError) as refused:
        client.chat.completions.create(model="evidenceqa", messages=[{"role": "user", "content": WARMING}],
                                       extra_body={"filters": {"collection": "licensed"}})  # fmt: skip
    assert refused.value.status_code == 403
    with pytest.raises(openai.PermissionDeniedError):  # streamed: refused before the stream starts
        client.chat.completions.create(model="evidenceqa", messages=[{"role": "user", "content": WARMING}],
                                       extra_body={"filters": {"collection": "licensed"}}, stream=True)  # fmt: skip


def test_a_token_held_to_some_collections_reads_only_those(licensed: Live) -> None:
    store = store_of(licensed.app)
    bob = user(store, BOB)
    _, held = accounts.create_api_token(store, bob, "open only", ["default"])
    assert doc_ids(ask_api(licensed, held, WARMING).json()) <= {"shave"}
    with pytest.raises(EntitlementError, match=r"alice@example\.org may not read licensed"):
        accounts.create_api_token(store, user(store, ALICE), "more than allowed", ["licensed"])


def test_a_withdrawn_grant_ends_at_once_for_every_token(licensed: Live) -> None:
    store = store_of(licensed.app)
    _, token = accounts.create_api_token(store, user(store, BOB), "soon withdrawn")
    assert doc_ids(ask_api(licensed, token, WARMING + " (before)").json()) == {"warming"}
    withdraw(store, user(store, BOB), "licensed")
    try:
        assert "warming" not in doc_ids(ask_api(licensed, token, WARMING + " (after)").json())
    finally:
        grant(store, user(store, BOB), "licensed")


def test_the_admin_page_restricts_a_collection_and_grants_and_withdraws_it(licensed: Live) -> None:
    admin = logged_in(licensed.app, "admin@example.org")
    form = {"csrf_token": admin.csrf}
    page = admin.get("/admin").text
    assert "Restricted collections" in page and "the accounts granted it" in page
    assert (
        admin.post("/admin/collections/restrict", data={**form, "collection": "default"}).status_code == 200
    )
    granted = admin.post("/admin/collections/grant", data={**form, "collection": "default", "email": ALICE})
    assert f"{ALICE} may read default." in granted.text
    unknown = admin.post("/admin/collections/grant", data={**form, "collection": "nothing", "email": ALICE})
    assert unknown.status_code == 400 and "is not a restricted collection" in unknown.text
    assert restricted_collections(store_of(licensed.app)) == {"default": [ALICE], "licensed": [BOB]}
    withdrawn = admin.post(
        "/admin/collections/withdraw", data={**form, "collection": "default", "email": ALICE}
    )
    assert f"{ALICE} may no longer read default" in withdrawn.text
    assert admin.post("/admin/collections/open", data={**form, "collection": "default"}).status_code == 200
    assert restricted_collections(store_of(licensed.app)) == {"licensed": [BOB]}
    clinician = logged_in(licensed.app, ALICE)
    forbidden = clinician.post(
        "/admin/collections/open", data={"csrf_token": clinician.csrf, "collection": "licensed"}
    )
    assert forbidden.status_code == 403 and restricted_collections(store_of(licensed.app)) == {
        "licensed": [BOB]
    }


def test_a_token_made_in_the_app_may_be_held_to_collections_the_account_may_read(licensed: Live) -> None:
    alice, bob = logged_in(licensed.app, ALICE), logged_in(licensed.app, BOB)
    refused = alice.post("/api/tokens", json={"name": "x", "collections": ["licensed"]},
                         headers={"X-CSRF-Token": alice.csrf})  # fmt: skip
    assert refused.status_code == 422 and "may not read licensed" in refused.json()["detail"]
    made = bob.post("/api/tokens", json={"name": "licensed only", "collections": ["licensed"]},
                    headers={"X-CSRF-Token": bob.csrf})  # fmt: skip
    assert made.status_code == 201 and made.json()["collections"] == ["licensed"]
    found = httpx.get(f"{licensed.url}/api/search", params={"q": "spinal surgery shaving"},
                      headers={"Authorization": f"Bearer {made.json()['token']}"}).json()  # fmt: skip
    assert {r["doc_id"] for r in found["results"]} == {"warming"}  # the open collection is not in it


def test_operators_manage_restrictions_from_the_shell(tmp_path: Path, web_settings: Settings) -> None:
    settings = web_settings.model_copy(update={"database_url": f"sqlite:///{tmp_path / 'app.sqlite3'}"})
    with open_store(settings) as store:
        create_user(store, ALICE, "Alice", PASSWORD)
    assert cli(settings, "admin", "restrict", "licensed").stdout.strip() == "licensed: restricted"
    assert cli(settings, "admin", "grant", "licensed", "--user", ALICE).returncode == 0
    listed = cli(settings, "admin", "collections").stdout
    assert "licensed" in listed and ALICE in listed
    made = cli(
        settings, "token", "create", "--user", ALICE, "--name", "bot", "--collections", "licensed,default"
    )
    assert made.returncode == 0, made.stderr
    assert "licensed, default" in cli(settings, "token", "list", "--user", ALICE).stdout
    assert cli(settings, "admin", "withdraw", "licensed", "--user", ALICE).returncode == 0
    refused = cli(settings, "token", "create", "--user", ALICE, "--name", "bot2", "--collections", "licensed")
    assert refused.returncode == 2 and "may not read licensed" in refused.stderr
    assert cli(settings, "admin", "open", "licensed").returncode == 0
    again = cli(settings, "admin", "open", "licensed")
    assert again.returncode == 2 and "'licensed' is not a restricted collection" in again.stderr
