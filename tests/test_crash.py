"""Crash safety with kill -9: an ingest killed at random moments leaves the catalogue and the index at
a consistent version, searchable, and running it again completes it; a server killed right after a
feedback POST was answered still has the feedback when it starts again."""

from __future__ import annotations

import json
import os
import random
import re
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from evidenceqa.answer.engine import Engine
from evidenceqa.settings import Settings
from evidenceqa.web.simulate import log_in
from tests.web.test_browser import _free_port, _read_until, _wait_healthy, first_admin_password

pytestmark = pytest.mark.slow
KILLS = 5
MAX_RUNS = 12
SEED = 20261129  # fixed: a failure can be replayed; change it to try other moments
VERSION = re.compile(r"version (\d+)")


def _library(folder: Path, files: int, docs: int, version: int = 0) -> list[Path]:
    """`files` JSONL files of `docs` documents, each findable by its own word ("tokenFxD"), all
    saying which `version` of the library they belong to."""
    folder.mkdir(exist_ok=True)
    paths = []
    for f in range(files):
        rows = [
            {"doc_id": f"f{f}-d{d}", "title": f"Perioperative study {f}-{d}", "year": 2000 + d % 25,
             "sections": [{"heading": "Results", "paragraphs": [
                 f"Study token{f}x{d} (version {version}) found that cefazolin before incision lowered "
                 f"surgical site infection in arm {d} of trial {f}."]}]}
            for d in range(docs)
        ]  # fmt: skip
        paths.append(folder / f"part{f}.jsonl")
        paths[-1].write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return paths


def _evidenceqa(home: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "evidenceqa", "--home", str(home), *args]


def _env(models: Path) -> dict[str, str]:
    return {**os.environ, "EVIDENCEQA_MODELS_DIR": str(models), "COLUMNS": "200"}


def _killed(command: list[str], env: dict[str, str], delay_s: float) -> None:
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(delay_s)
    process.kill()  # SIGKILL: no handler, no cleanup
    process.wait()


def _check_catalogue(path: Path, docs_per_file: int) -> dict[str, set[int]]:
    """The catalogue opens whole, and holds each file all or nothing, at one version: the versions
    of the library found in each file's documents."""
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert db.execute("PRAGMA foreign_key_check").fetchall() == []
        for doc_id, expected, found in db.execute(
            "SELECT d.doc_id, d.chunks, COUNT(c.chunk_id) FROM documents d "
            "LEFT JOIN chunks c ON c.doc_id = d.doc_id GROUP BY d.doc_id"
        ):
            assert expected == found > 0, f"{doc_id}: {found} chunks stored of {expected}"
        per_file = dict(db.execute("SELECT source_path, COUNT(*) FROM documents GROUP BY source_path"))
        assert set(per_file.values()) <= {docs_per_file}, f"a file half ingested: {per_file}"
        sources = dict(db.execute("SELECT path, documents FROM sources"))
        assert all(per_file.get(path) == count for path, count in sources.items())
        versions: dict[str, set[int]] = {}
        rows = db.execute("SELECT d.source_path, c.text FROM chunks c JOIN documents d USING (doc_id)")
        for source, text in rows:
            versions.setdefault(source, set()).update(int(v) for v in VERSION.findall(text))
    assert all(len(found) == 1 for found in versions.values()), f"a file mixes versions: {versions}"
    return versions


def test_ingest_killed_at_random_moments_leaves_each_file_at_one_version(
    tmp_path: Path, models_dir: Path
) -> None:
    """Kills land while files are being replaced (each run brings a new version of every file)."""
    files, docs = 30, 100
    home, folder, env = tmp_path / "home", tmp_path / "library", _env(models_dir)
    started = time.perf_counter()
    command = _evidenceqa(home, "ingest", "--no-index", *map(str, _library(folder, files, docs)))
    subprocess.run(command, env=env, check=True, capture_output=True, timeout=600)
    full_s = time.perf_counter() - started  # start-up and the ingest: the kills fall inside it
    moments = random.Random(SEED)
    landed: list[list[int]] = []
    # KILLS runs, and more (up to MAX_RUNS) until one has landed mid-ingest: timing on a busy machine varies.
    while len(landed) < KILLS or (not any(len(v) > 1 for v in landed) and len(landed) < MAX_RUNS):
        _library(folder, files, docs, version=len(landed) + 1)
        _killed(command, env, moments.uniform(0.3, 1.0) * full_s)
        found = _check_catalogue(home / "catalogue.sqlite3", docs)
        landed.append(sorted(set().union(*found.values())))
    final = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    assert final.returncode == 0, final.stderr
    assert set().union(*_check_catalogue(home / "catalogue.sqlite3", docs).values()) == {len(landed)}, landed
    assert any(len(versions) > 1 for versions in landed), f"no kill landed mid-ingest: {landed}"


def _check_searchable(settings: Settings) -> None:
    """The index opens at whatever version it reached, and a search over it works."""
    with Engine.open(settings) as engine:
        assert engine.pending() >= 0
        response = engine.retriever().search("cefazolin before incision", k=5)
        assert all(r.chunk.doc_id.startswith("f") for r in response.results)


def test_indexing_killed_at_random_moments_stays_searchable_and_completes(
    tmp_path: Path, models_dir: Path
) -> None:
    files, docs = 6, 40
    home, env = tmp_path / "home", _env(models_dir)
    paths = _library(tmp_path / "library", files, docs)
    settings = Settings(home=home, models_dir=models_dir)
    command = _evidenceqa(home, "ingest", *map(str, paths))
    for delay in sorted(random.Random(SEED).sample([x / 2 for x in range(4, 20)], 3)):  # 2 … 9.5 s
        _killed(command, env, delay)
        if (home / "catalogue.sqlite3").exists():
            _check_catalogue(home / "catalogue.sqlite3", docs)
            _check_searchable(settings)
    final = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    assert final.returncode == 0, final.stdout + final.stderr
    index = subprocess.run(_evidenceqa(home, "index"), env=env, capture_output=True, text=True, timeout=600)
    assert index.returncode == 0 and "index: 0 chunks embedded" in index.stdout, index.stdout + index.stderr
    found = subprocess.run(_evidenceqa(home, "search", "token5x39", "--json"), env=env,
                           capture_output=True, text=True, timeout=600)  # fmt: skip
    assert json.loads(found.stdout)["results"][0]["doc_id"] == "f5-d39"
    with Engine.open(settings) as engine:
        assert engine.is_current()
        doc_ids = [d.doc_id for d in engine.catalogue.documents()]
        assert len(doc_ids) == files * docs
        assert engine.backend.count() == engine.catalogue.count_chunks(doc_ids)  # nothing indexed twice


def _serve(home: Path, models: Path, port: int) -> subprocess.Popen[str]:
    env = {**_env(models), "PYTHONUNBUFFERED": "1", "EVIDENCEQA_ADMIN_EMAIL": "admin@example.org"}
    return subprocess.Popen(_evidenceqa(home, "serve", "--port", str(port)), env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)  # fmt: skip


def _login(url: str, password: str) -> tuple[httpx.Client, str]:
    client = httpx.Client(base_url=url, timeout=120)
    response = log_in(client, "admin@example.org", password)
    assert response.status_code == 303, response.text
    csrf = re.search(r'<meta name="csrf-token" content="([^"]+)">', client.get("/").text).group(1)
    return client, csrf


def test_feedback_survives_a_server_killed_right_after_answering(tmp_path: Path, models_dir: Path) -> None:
    home = tmp_path / "home"
    library = _library(tmp_path / "library", files=1, docs=40)
    subprocess.run(_evidenceqa(home, "ingest", *map(str, library)), env=_env(models_dir),
                   check=True, capture_output=True, timeout=600)  # fmt: skip
    port = _free_port()
    server = _serve(home, models_dir, port)
    try:
        printed = _read_until(server, "password")
        url = re.search(r"evidenceqa: (http://\S+)", printed).group(1)
        password = first_admin_password(printed, "admin@example.org")
        _wait_healthy(url, server)
        client, csrf = _login(url, password)
        question = "Does cefazolin QZ-9 before incision lower surgical site infection?"
        record = client.post("/api/ask", json={"question": question}, headers={"X-CSRF-Token": csrf}).json()
        assert client.get("/api/search", params={"q": question}).status_code == 200
        sent = client.post(f"/api/answers/{record['answer_id']}/feedback", headers={"X-CSRF-Token": csrf},
                           json={"rating": "excellent", "comment": "Kept after a crash?"})  # fmt: skip
        assert sent.status_code == 200
        server.kill()  # at once: the 200 above is the only promise made
        log = server.communicate()[0]
    finally:
        if server.poll() is None:
            server.kill()
    assert "QZ-9" not in log and client.cookies["evidenceqa_session"] not in log  # the access log too
    server = _serve(home, models_dir, port)
    try:
        _wait_healthy(url, server)
        client, _ = _login(url, password)
        detail = client.get(f"/api/conversations/{record['conversation_id']}").json()
    finally:
        server.kill()
        server.communicate()
    [answer] = [m["answer"] for m in detail["messages"] if m.get("answer")]
    assert answer["rating"] == "excellent"
