"""The review page in a real headless Chromium against `evidenceqa serve` as a real process: pairs
built from real publisher files are accepted, edited and rejected by a clinician, and the validated
set downloads in the shared benchmark format, the same as `evidenceqa benchmark export` writes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from evidenceqa.bench.retrieval import read_questions
from evidenceqa.curation import review_store
from evidenceqa.curation.build import build_candidates
from evidenceqa.store import open_store
from tests.curation.conftest import DVT_PAGE, MDR_TB, load_one
from tests.web.test_browser import (  # noqa: F401 — fixtures, found by name
    ADMIN,
    Server,
    _keep,
    artifacts,
    browser,
    server,
)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def under_review(server: Server, formats_dir: Path) -> list[str]:  # noqa: F811 — the imported fixture
    """Candidates from a real MedQuAD page and a real PLOS article, put up for review as "formats"."""
    built = list(build_candidates([load_one(formats_dir / DVT_PAGE), load_one(formats_dir / MDR_TB)]))
    with open_store(server.settings) as store:
        review_store.load_candidates(store, "formats", built)
    return [c.question for c in built]


def test_accept_edit_reject_and_download(
    server: Server,  # noqa: F811 — the imported fixtures
    browser: Any,  # noqa: F811
    artifacts: Path,  # noqa: F811
    under_review: list[str],
    tmp_path: Path,
) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 900}, accept_downloads=True)
    page = context.new_page()
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))

    page.goto(server.url + "review")
    page.get_by_label("Email").fill(ADMIN)
    page.get_by_label("Password").fill(server.password)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(server.url + "review")
    page.get_by_role("link", name="formats").click()
    assert "0 of 10 pairs reviewed" in page.locator("#progress").inner_text()

    page.get_by_role("link", name="Review the next pair").click()
    assert page.get_by_role("heading", level=2).first.inner_text() == under_review[0]
    assert "Deep vein thrombosis (throm-BO-sis), or DVT" in page.locator("#answer").inner_text()
    page.get_by_role("button", name="Accept").click()

    page.wait_for_selector(f"h2:text-is('{under_review[1]}')")
    page.get_by_label("Question", exact=True).fill("What causes a deep vein thrombosis?")
    page.get_by_label("Question type").select_option("context-dependent")
    page.get_by_label("Expected precision").select_option("medium")
    page.get_by_role("button", name="Save edits").click()

    page.wait_for_selector(f"h2:text-is('{under_review[2]}')")
    page.get_by_label("Comment (optional)").fill("Too broad for the benchmark.")
    shot = artifacts / "review-pair.png"
    page.screenshot(path=str(shot), full_page=True)
    _keep(shot)
    page.get_by_role("button", name="Reject").click()

    page.wait_for_selector(f"h2:text-is('{under_review[3]}')")
    page.get_by_role("link", name="formats: all pairs").click()
    progress = page.locator("#progress").inner_text()
    assert progress == "3 of 10 pairs reviewed: 1 accepted, 1 edited, 1 rejected."
    with page.expect_download() as download:
        page.get_by_role("link", name="Download the validated set").click()
    downloaded = tmp_path / "downloaded.jsonl"
    download.value.save_as(str(downloaded))
    assert dialogs == []
    context.close()

    questions = read_questions(downloaded)
    assert [q.question for q in questions] == [under_review[0], "What causes a deep vein thrombosis?"]
    assert questions[0].gold_doc_ids == ["medquad-8_0000051"] and questions[0].gold_passages
    edited = questions[1].meta
    assert (edited["question_type"], edited["expected_precision"], edited["decision"]) == (
        "context-dependent", "medium", "edit")  # fmt: skip
    assert edited["reviewer"] == ADMIN and edited["reviewed_at"]
    assert edited["source_location"]["section_path"] == ["What causes Deep Vein Thrombosis?"]
    # The command line exports the same set from the same decisions.
    exported = tmp_path / "exported.jsonl"
    env = {**os.environ, "EVIDENCEQA_DATABASE_URL": server.settings.database_url}
    subprocess.run([sys.executable, "-m", "evidenceqa", "--home", str(server.settings.home), "benchmark",
                    "export", "--name", "formats", "--out", str(exported)], env=env, check=True, timeout=120)  # fmt: skip
    assert [json.loads(line) for line in exported.read_text().splitlines()] == [
        json.loads(line) for line in downloaded.read_text().splitlines()
    ]
