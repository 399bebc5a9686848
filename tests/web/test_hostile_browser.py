"""HTML and JavaScript in a document and in a question, in a real Chromium against `evidenceqa serve`:
shown as text, never an element, never run (nor even blocked by the CSP: it never gets that far)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from evidenceqa.answer.engine import Engine
from evidenceqa.chunking import ChunkingConfig
from evidenceqa.library.ingest import Ingestor
from evidenceqa.settings import Settings
from tests.conftest import write_library
from tests.web.test_browser import (
    CHROMIUM,
    _free_port,
    _read_until,
    _require_browser,
    _wait_healthy,
    first_admin_password,
)

pytestmark = pytest.mark.slow
ADMIN = "admin@example.org"
IMG = "<img src=x onerror=\"window.__pwned=1;alert('pwned')\">"
SCRIPT = "<script>window.__pwned=2</script>"
DOCS = [("cefazolin", 2020, f"Cefazolin given within sixty minutes before incision {IMG} reduced surgical "
                            f"site infection after hip replacement {SCRIPT}.")]  # fmt: skip
# Counts what would betray injected markup: elements made from it, and the CSP blocking its handlers.
WATCH = """
window.__violations = [];
document.addEventListener("securitypolicyviolation", (e) => window.__violations.push(e.violatedDirective));
"""


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, models_dir: Path) -> Iterator[tuple[str, str]]:
    """(url, admin password) of `evidenceqa serve` over a home holding the hostile document."""
    root = tmp_path_factory.mktemp("hostile-browser")
    settings = Settings(home=root / "data", models_dir=models_dir)
    with Engine.open(settings) as engine:
        Ingestor(engine.catalogue, ChunkingConfig()).ingest_file(write_library(root / "lib.jsonl", DOCS))
        engine.sync()
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "EVIDENCEQA_MODELS_DIR": str(models_dir),
           "EVIDENCEQA_ADMIN_EMAIL": ADMIN, "EVIDENCEQA_DATABASE_URL": f"sqlite:///{root / 'app.sqlite3'}"}  # fmt: skip
    command = [
        sys.executable,
        "-m",
        "evidenceqa",
        "--home",
        str(settings.home),
        "serve",
        "--port",
        str(_free_port()),
    ]
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        printed = _read_until(process, "password")
        url = re.search(r"evidenceqa: (http://\S+)", printed).group(1)
        _wait_healthy(url, process)
        yield url, first_admin_password(printed, ADMIN)
    finally:
        process.terminate()
        process.wait(timeout=30)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with _require_browser()() as playwright:
        launched = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=["--no-sandbox", "--disable-gpu"]
        )
        yield launched
        launched.close()


def _inert(page: Any) -> None:
    assert page.locator("img, main script").count() == 0  # no element was made from document or question
    assert page.evaluate("window.__pwned") is None
    assert page.evaluate("window.__violations") == []  # the CSP had nothing to block


def test_markup_in_a_document_and_a_question_is_shown_as_text(served: tuple[str, str], browser: Any) -> None:
    url, password = served
    context = browser.new_context()
    page = context.new_page()
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.add_init_script(WATCH)
    page.goto(url)
    page.get_by_label("Email").fill(ADMIN)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(url)

    question = f"Does cefazolin before incision reduce infection? {IMG}"
    page.get_by_label("Your question").fill(question)
    page.get_by_role("button", name="Ask").click()
    answer = page.locator("article.answer[data-answer-id]").first
    answer.wait_for()
    answer.locator(".cite-ref").first.click()  # the cited passage, streamed in by the script
    assert IMG in answer.locator(".citations li").first.inner_text()
    _inert(page)

    page.reload()  # the same conversation rendered by the server
    page.locator("article.answer").first.wait_for()
    page.locator("article.answer summary").first.click()
    text = page.locator("main").inner_text()
    assert question in text and IMG in text and SCRIPT in text
    _inert(page)
    assert dialogs == []
    context.close()
