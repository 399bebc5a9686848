"""A small real home (real LanceDB, the real MiniLM ONNX embedder), the web app over it on SQLite and
on a real PostgreSQL, and clients logged in as different people."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
import uvicorn
from argon2 import PasswordHasher
from fastapi import FastAPI
from fastapi.testclient import TestClient

from evidenceqa.answer.engine import Engine
from evidenceqa.chunking import ChunkingConfig
from evidenceqa.library.ingest import Ingestor
from evidenceqa.settings import Settings
from evidenceqa.store import Store, accounts, create_user
from evidenceqa.web.app import create_app
from evidenceqa.web.simulate import log_in
from tests.answer.openai_server import OpenAIServer
from tests.store.postgres import PostgresServer, start_postgres
from tests.store.redis_server import free_port

SCRIPT = "<script>alert(1)</script>"
DOCS = [
    {"doc_id": "shave", "title": "Hair removal before spinal surgery", "year": 2007,
     "url": "https://example.org/shave",
     "text": "Shaving the incision site immediately before spinal surgery increased the rate of postoperative "
             "infection. Clipping did not."},
    {"doc_id": "chg", "title": "Chlorhexidine and mucous membranes", "year": 2015,
     "text": "Chlorhexidine gluconate should not be used on mucous membranes. It is safe on intact skin before "
             "surgery."},
    {"doc_id": "txa", "title": "Tranexamic acid in knee arthroplasty", "year": 2019,
     "text": "Tranexamic acid reduced blood loss after total knee arthroplasty without more thrombosis."},
    # Untrusted document text and metadata: must show as text, and never become a script or a link.
    {"doc_id": "xss", "title": f"{SCRIPT} Cefazolin prophylaxis", "year": 2020, "url": "javascript:alert(1)",
     "text": f"Cefazolin given within sixty minutes before incision {SCRIPT} reduced surgical site infection "
             "after hip replacement."},
    # Another collection and document type: the chat's filters offer a choice.
    {"doc_id": "ponv", "title": "Postoperative nausea and vomiting", "year": 2020, "collection": "guidelines",
     "doc_type": "guideline",
     "text": "Ondansetron 4 mg at the end of surgery reduced postoperative nausea and vomiting after "
             "laparoscopic cholecystectomy."},
]  # fmt: skip
SHAVE = "Does shaving the incision site increase infection after spinal surgery?"
CEFAZOLIN = "Does cefazolin before incision reduce surgical site infection after hip replacement?"
PASSWORD = "correct horse battery"
PEOPLE = {"admin@example.org": True, "alice@example.org": False, "bob@example.org": False}


def write_documents(path: Path) -> Path:
    rows = [
        {"doc_id": d["doc_id"], "title": d["title"], "year": d["year"], "url": d.get("url"),
         "collection": d.get("collection", "default"), "doc_type": d.get("doc_type", "journal-article"),
         "sections": [{"heading": "Results", "paragraphs": [d["text"]]}]}
        for d in DOCS
    ]  # fmt: skip
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def web_settings(tmp_path_factory: pytest.TempPathFactory, models_dir: Path) -> Settings:
    """Settings of a data home holding DOCS, ingested and indexed (then closed: the app opens it)."""
    root = tmp_path_factory.mktemp("web")
    settings = Settings(home=root / "data", models_dir=models_dir)
    with Engine.open(settings) as engine:
        Ingestor(engine.catalogue, ChunkingConfig()).ingest_file(write_documents(root / "lib.jsonl"))
        engine.sync()
    return settings


@pytest.fixture(scope="session", autouse=True)
def cheap_hashing() -> Iterator[None]:
    # Real argon2 with the smallest parameters: the suite logs in many times on a busy machine.
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(accounts, "password_hasher", PasswordHasher(time_cost=1, memory_cost=8, parallelism=1))
        yield


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    server = start_postgres()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def llm() -> Iterator[OpenAIServer]:
    """A local OpenAI-compatible server for a module's app that answers through an LLM."""
    with OpenAIServer() as server:
        yield server


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> str:
    """A fresh, empty database of each kind for each test module."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path_factory.mktemp('db') / 'app.sqlite3'}"
    server: PostgresServer = request.getfixturevalue("postgres")
    return server.create_database()


@pytest.fixture(scope="module")
def app(web_settings: Settings, database_url: str) -> Iterator[FastAPI]:
    """The app, started (its lifespan runs for the whole module), with one admin and two clinicians."""
    application = create_app(web_settings.model_copy(update={"database_url": database_url}))
    with TestClient(application):
        for email, is_admin in PEOPLE.items():
            create_user(store_of(application), email, email.split("@")[0].title(), PASSWORD, is_admin)
        yield application


def store_of(app: FastAPI) -> Store:
    return app.state.services.store


class Client(TestClient):
    """A client with its own cookie jar; `csrf` is the token the chat page hands its scripts."""

    csrf: str = ""


def logged_in(app: FastAPI, email: str, base_url: str = "http://testserver") -> Client:
    client = Client(app, base_url=base_url, follow_redirects=False)
    response = log_in(client, email, PASSWORD)
    assert response.status_code == 303, response.text
    page = client.get("/")
    client.csrf = re.search(r'<meta name="csrf-token" content="([^"]+)">', page.text).group(1)
    return client


@pytest.fixture(scope="module")
def alice(app: FastAPI) -> Client:
    return logged_in(app, "alice@example.org")


@pytest.fixture(scope="module")
def bob(app: FastAPI) -> Client:
    return logged_in(app, "bob@example.org")


@pytest.fixture(scope="module")
def admin(app: FastAPI) -> Client:
    return logged_in(app, "admin@example.org")


@pytest.fixture
def anonymous(app: FastAPI) -> TestClient:
    return TestClient(app, follow_redirects=False)


def server_events(text: str) -> list[tuple[str, dict]]:
    """An SSE body as (event name, parsed data) pairs."""
    events = []
    for block in text.split("\n\n"):
        if block.strip():
            name = re.search(r"^event: (.+)$", block, re.M).group(1)
            events.append((name, json.loads(re.search(r"^data: (.+)$", block, re.M).group(1))))
    return events


@dataclass
class Live:
    """The app served over real HTTP by uvicorn (in this process), and API tokens of its users."""

    url: str
    app: FastAPI
    tokens: dict[str, str]  # email → a raw API token of that user's

    @property
    def store(self) -> Store:
        return store_of(self.app)


@contextmanager
def served(application: FastAPI) -> Iterator[str]:
    """`application` served by uvicorn in this process on a free loopback port: its address."""
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(application, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the app did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(30)


def with_people(application: FastAPI) -> dict[str, str]:
    """PEOPLE's accounts in a started app: email → a raw API token of theirs."""
    tokens = {}
    for email, is_admin in PEOPLE.items():
        user = create_user(store_of(application), email, email.split("@")[0].title(), PASSWORD, is_admin)
        tokens[email] = accounts.create_api_token(store_of(application), user, "agent")[1]
    return tokens


@pytest.fixture(scope="module")
def live(web_settings: Settings, database_url: str) -> Iterator[Live]:
    """For the official clients (MCP, OpenAI SDKs), which speak to a real server over the wire."""
    application = create_app(web_settings.model_copy(update={"database_url": database_url}))
    with served(application) as url:
        yield Live(url, application, with_people(application))
