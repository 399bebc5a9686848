"""A running app finds documents ingested by another process, without a restart."""

from __future__ import annotations

import json
from pathlib import Path

from fastapi.testclient import TestClient

from evidenceqa.answer.engine import Engine
from evidenceqa.chunking import ChunkingConfig
from evidenceqa.library.ingest import Ingestor
from evidenceqa.settings import Settings
from evidenceqa.store import create_user
from evidenceqa.web.app import create_app
from tests.web.conftest import PASSWORD, logged_in, store_of, write_documents

LATER = {"doc_id": "warming", "title": "Forced-air warming", "year": 2021, "sections": [
    {"heading": "Results", "paragraphs": ["Forced-air warming kept core temperature above 36 degrees during laparotomy."]}
]}  # fmt: skip


def _ingest(settings: Settings, path: Path) -> None:
    with Engine.open(settings) as engine:  # its own connections, as `evidenceqa ingest` has
        Ingestor(engine.catalogue, ChunkingConfig()).ingest_file(path)
        engine.sync()


def _found(client: TestClient, question: str) -> list[str]:
    response = client.get("/api/search", params={"q": question})
    assert response.status_code == 200, response.text
    return [hit["doc_id"] for hit in response.json()["results"]]


def test_a_document_ingested_while_the_app_runs_is_found(tmp_path: Path, models_dir: Path) -> None:
    settings = Settings(home=tmp_path / "data", models_dir=models_dir, index_refresh_seconds=0,
                        database_url=f"sqlite:///{tmp_path / 'app.sqlite3'}")  # fmt: skip
    _ingest(settings, write_documents(tmp_path / "lib.jsonl"))
    application = create_app(settings)
    with TestClient(application):
        create_user(store_of(application), "alice@example.org", "Alice", PASSWORD, False)
        alice = logged_in(application, "alice@example.org")
        assert "warming" not in _found(alice, "forced-air warming core temperature")
        later = tmp_path / "later.jsonl"
        later.write_text(json.dumps(LATER) + "\n", encoding="utf-8")
        _ingest(settings, later)
        assert _found(alice, "forced-air warming core temperature")[0] == "warming"
