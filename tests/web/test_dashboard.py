"""The admin's pilot dashboard over a simulated pilot: the same numbers as `evidenceqa report pilot`,
admins only, label corrections with CSRF that later re-labelling keeps, charts, escaping."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from markupsafe import escape
from typer.testing import CliRunner

from evidenceqa.cli import app as cli
from evidenceqa.settings import Settings
from evidenceqa.store import create_user
from evidenceqa.web.app import create_app
from tests.analytics.home import OTITIS, build_home, run_pilot
from tests.web.conftest import PASSWORD, Client, logged_in, store_of

SCRIPT = "<script>alert(1)</script>"


@pytest.fixture(scope="module")
def pilot_settings(tmp_path_factory: pytest.TempPathFactory, models_dir: Path) -> Settings:
    root = tmp_path_factory.mktemp("dashboard")
    return run_pilot(build_home(root, models_dir), root / "app.sqlite3")[0]


@pytest.fixture(scope="module")
def pilot_app(pilot_settings: Settings) -> Iterator[FastAPI]:
    application = create_app(pilot_settings)
    with TestClient(application):
        create_user(store_of(application), "boss@example.org", "Boss", PASSWORD, is_admin=True)
        create_user(store_of(application), "carol@example.org", "Carol", PASSWORD)
        yield application


@pytest.fixture(scope="module")
def boss(pilot_app: FastAPI) -> Client:
    return logged_in(pilot_app, "boss@example.org")


def cli_report(settings: Settings, out: Path, *args: str) -> tuple[dict, str]:
    """report.json and the printed Markdown of `evidenceqa report pilot`."""
    result = CliRunner().invoke(
        cli, ["--home", str(settings.home), "report", "pilot", "--out", str(out), *args],
        env={"EVIDENCEQA_DATABASE_URL": settings.database_url, "EVIDENCEQA_MODELS_DIR": str(settings.models_dir)},
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return json.loads((out / "report.json").read_text(encoding="utf-8")), result.stdout


def figures_table(markdown: str) -> list[tuple[str, str]]:
    """The (figure, value) rows of the report's first table, unescaped."""
    table = markdown.split("\n\n")[0].split("| --- | --- |\n")[1]
    return [
        tuple(cell.replace("\\|", "|") for cell in line[2:-2].split(" | ")) for line in table.splitlines()
    ]


def test_the_dashboard_shows_the_numbers_of_the_cli_report(
    pilot_app: FastAPI, pilot_settings: Settings, boss: Client, tmp_path: Path
) -> None:
    from_cli, markdown = cli_report(pilot_settings, tmp_path)
    assert from_cli["summary"]["answers"] > 0 and from_cli["failures"] and from_cli["gaps"]
    assert boss.get("/api/admin/pilot").json() == from_cli
    period = boss.get("/api/admin/pilot", params={"since": "2025-03-10", "until": "2025-03-16"}).json()
    assert period["weeks"] == [w for w in from_cli["weeks"] if w["week"] == "2025-03-10"]

    page = boss.get("/admin/pilot")
    assert page.status_code == 200
    rows = figures_table(markdown)
    assert len(rows) > 20 and ("Feedback responses", str(from_cli["summary"]["feedback_responses"])) in rows
    for name, value in rows:
        assert f'<th scope="row">{escape(name)}</th><td>{escape(value)}</td>' in page.text
    for f in from_cli["failures"]:
        assert f'id="failure-{f["answer_id"]}"' in page.text and escape(f["reason"]) in page.text


def test_for_admins_only(pilot_app: FastAPI) -> None:
    carol = logged_in(pilot_app, "carol@example.org")
    assert carol.get("/api/admin/pilot").status_code == 403
    assert carol.get("/admin/pilot").status_code == 403
    assert carol.get("/admin/pilot/charts/weekly.png").status_code == 403
    assert (
        carol.post("/admin/failures/1", data={"category": "temporal", "csrf_token": carol.csrf}).status_code
        == 403
    )
    anonymous = TestClient(pilot_app, follow_redirects=False)
    assert anonymous.get("/api/admin/pilot").status_code == 401
    assert anonymous.get("/admin/pilot").headers["location"] == "/login?next=/admin/pilot"


def test_charts_are_png(boss: Client) -> None:
    for name in ("satisfaction", "weekly", "latency", "cost", "categories"):
        response = boss.get(f"/admin/pilot/charts/{name}.png", params={"since": "2025-03-03"})
        assert response.headers["content-type"] == "image/png"
        assert response.content.startswith(b"\x89PNG\r\n\x1a\n")
    assert boss.get("/admin/pilot/charts/secrets.png").status_code == 404
    assert (
        'src="/admin/pilot/charts/weekly.png?since=2025-03-03"'
        in boss.get("/admin/pilot", params={"since": "2025-03-03"}).text
    )


def test_a_correction_needs_csrf_and_is_kept(pilot_settings: Settings, boss: Client, tmp_path: Path) -> None:
    failures = boss.get("/api/admin/pilot").json()["failures"]
    otitis = next(f for f in failures if f["question"] == OTITIS)
    assert otitis["category"] == "missing_content"
    path = f"/admin/failures/{otitis['answer_id']}"
    assert boss.post(path, data={"category": "edge_case"}).status_code == 403  # no CSRF token
    assert boss.post(path, data={"category": "nonsense", "csrf_token": boss.csrf}).status_code == 400
    done = boss.post(
        path, data={"category": "edge_case", "csrf_token": boss.csrf, "back": "since=2025-03-03"}
    )
    assert done.status_code == 303
    assert done.headers["location"] == f"/admin/pilot?since=2025-03-03#failure-{otitis['answer_id']}"
    again, _ = cli_report(pilot_settings, tmp_path, "--relabel")  # categorised again from scratch
    label = next(f for f in again["failures"] if f["answer_id"] == otitis["answer_id"])
    assert (label["category"], label["automatic_category"], label["corrected"]) == (
        "edge_case", "missing_content", True
    )  # fmt: skip
    assert "(corrected; found: Missing content)" in boss.get("/admin/pilot").text
    assert (
        boss.post(
            "/admin/failures/999999", data={"category": "temporal", "csrf_token": boss.csrf}
        ).status_code
        == 404
    )


def test_questions_are_escaped(pilot_app: FastAPI, boss: Client) -> None:
    carol = logged_in(pilot_app, "carol@example.org")
    asked = carol.post("/api/ask", json={"question": f"{SCRIPT} otitis media antibiotics?"},
                       headers={"X-CSRF-Token": carol.csrf})  # fmt: skip
    assert asked.json()["abstained"]
    page = boss.get("/admin/pilot").text
    assert SCRIPT not in page and escape(SCRIPT) in page
