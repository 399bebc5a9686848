"""A simulated pilot through the real app, then `evidenceqa report pilot / export / compare`: every
figure is reported, the categories are explained per question, the charts are real PNGs."""

from __future__ import annotations

import csv
import io
import json
import shutil
from datetime import date
from pathlib import Path

import pytest
from matplotlib.image import imread
from typer.testing import CliRunner

from evidenceqa.analytics.report import build_report, report_markdown
from evidenceqa.cli import app
from evidenceqa.settings import Settings
from evidenceqa.store import create_user, open_store, record_lookup
from evidenceqa.web.simulate import Simulation
from tests.analytics.home import MELATONIN, OTITIS, PILOT, TXA_SINCE, run_pilot

FIGURES = [
    "Conversations", "Answers", "Feedback responses", "Response rate", "Success rate", "Abstentions",
    "Average satisfaction", "Rated Excellent", "Rated Acceptable", "Rated Very poor", "Latency mean / median",
    "Latency p95 / max", "Latency σ", "Answers under 5 s", "Cache hit rate", "Cost per query: embed",
    "Cost per query: search", "Cost per query: generate", "Cost per query: total", "Cost in total",
]  # fmt: skip
CHARTS = ["satisfaction", "weekly", "latency", "cost", "categories"]


@pytest.fixture(scope="module")
def pilot(
    analytics_settings: Settings, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Settings, Simulation]:
    return run_pilot(analytics_settings, tmp_path_factory.mktemp("pilot") / "app.sqlite3")


def report(settings: Settings, *args: str) -> str:
    result = CliRunner().invoke(
        app, ["--home", str(settings.home), "report", *args],
        env={"EVIDENCEQA_DATABASE_URL": settings.database_url, "EVIDENCEQA_MODELS_DIR": str(settings.models_dir)},
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.fixture(scope="module")
def written(pilot: tuple[Settings, Simulation], tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    out = tmp_path_factory.mktemp("report")
    return report(pilot[0], "pilot", "--out", str(out)), out


def test_the_simulated_pilot_went_through_the_app(pilot: tuple[Settings, Simulation]) -> None:
    turns = pilot[1].turns
    assert len(turns) == len(PILOT) + 3  # questions 0, 4 and 8 were asked again by the other user
    assert {t.user for t in turns} == {"clinician1.test@example.org", "clinician2.test@example.org"}
    assert 0 < pilot[1].rated < len(turns)
    assert sum(t.cache_hit for t in turns) == 3  # each repeat came from the answer cache
    assert {t.question for t in turns if t.abstained} >= {OTITIS, MELATONIN, TXA_SINCE}


def test_the_report_shows_every_figure_per_week_too(
    pilot: tuple[Settings, Simulation], written: tuple[str, Path]
) -> None:
    markdown, out = written
    for figure in FIGURES:
        assert f"| {figure}" in markdown, figure
    turns = pilot[1].turns
    data = json.loads((out / "report.json").read_text(encoding="utf-8"))
    summary = data["summary"]
    assert (summary["answers"], summary["feedback_responses"]) == (len(turns), pilot[1].rated)
    assert summary["cache_hits"] == 3 and summary["abstentions"] == sum(t.abstained for t in turns)
    asked = [sum(t.user == user for t in turns) for user in {t.user for t in turns}]
    assert summary["conversations"] == sum((n + 1) // 2 for n in asked)  # two questions a conversation
    ratings = summary["satisfaction"]["counts"]
    assert sum(ratings.values()) == pilot[1].rated
    by_name = {"excellent": "Excellent", "acceptable": "Acceptable", "very_poor": "Very poor"}
    assert ratings == {name: sum(by_name[t.rating] == name for t in turns if t.rating) for name in ratings}
    assert [w["week"] for w in data["weeks"]] == ["2025-03-03", "2025-03-10"]
    assert sum(w["answers"] for w in data["weeks"]) == len(turns)
    assert "### Per week" in markdown and "| 2025-03-10 |" in markdown


def test_every_failure_is_categorised_with_its_reason(written: tuple[str, Path]) -> None:
    markdown, out = written
    failures = {
        f["question"]: f for f in json.loads((out / "report.json").read_text(encoding="utf-8"))["failures"]
    }
    assert failures[OTITIS]["category"] == failures[MELATONIN]["category"] == "missing_content"
    assert failures[TXA_SINCE]["category"] == "temporal"
    assert all(f["reason"] and len(f["evidence"]["probes"]) == 3 for f in failures.values())
    assert f"| {OTITIS} | yes |" in markdown and "Missing content | No search" in markdown


def test_the_gap_list_groups_the_melatonin_questions(written: tuple[str, Path]) -> None:
    gaps = json.loads((written[1] / "report.json").read_text(encoding="utf-8"))["gaps"]
    melatonin = next(g for g in gaps if "melatonin" in g["terms"])
    # Two ways of asking, one of them asked twice (the repeat): three answers, two examples.
    assert melatonin["count"] == 3 and len(melatonin["examples"]) == 2
    assert "### Content gaps" in written[0]


def test_the_charts_are_png_and_the_exports_hold_every_answer(
    pilot: tuple[Settings, Simulation], written: tuple[str, Path]
) -> None:
    out = written[1]
    for name in CHARTS:
        image = imread(out / f"{name}.png")
        assert image.shape[:2] == (360, 700)  # decodes, at the figure's size
    answers = list(csv.DictReader(io.StringIO((out / "conversations.csv").read_text(encoding="utf-8"))))
    assert [int(a["answer_id"]) for a in answers] == [t.answer_id for t in pilot[1].turns]
    feedback = json.loads((out / "feedback.json").read_text(encoding="utf-8"))
    assert len(feedback) == pilot[1].rated and {"question", "answer", "rating"} <= set(feedback[0])


def test_export_alone_and_a_period_with_nothing(pilot: tuple[Settings, Simulation], tmp_path: Path) -> None:
    report(pilot[0], "export", "--since", "2025-03-10", "--out", str(tmp_path))
    rows = json.loads((tmp_path / "conversations.json").read_text(encoding="utf-8"))
    assert rows and all(r["created_at"] >= "2025-03-10" for r in rows)
    empty = report(pilot[0], "pilot", "--since", "2030-01-01", "--out", str(tmp_path / "none"))
    assert "| Answers | 0 |" in empty


def test_compare_reruns_the_questions_on_the_current_library(
    pilot: tuple[Settings, Simulation], tmp_path: Path
) -> None:
    text = report(pilot[0], "compare", "--before", "2025-03-03..2025-03-10", "--out", str(tmp_path))
    assert "## Performance evolution: 2025-03-03 to 2025-03-10 → current library (re-run)" in text
    figures = json.loads((tmp_path / "compare.json").read_text(encoding="utf-8"))
    assert figures["reruns"] == figures["before"]["questions"] > 0
    # Same library, same questions: abstentions do not change.
    assert figures["before"]["abstention_rate"] == figures["after"]["abstention_rate"]


def test_a_simulated_pilot_never_writes_into_the_real_database(
    analytics_settings: Settings, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    shutil.copytree(analytics_settings.home, home)
    real = Settings(home=home, models_dir=analytics_settings.models_dir)
    questions = tmp_path / "questions.jsonl"
    questions.write_text("".join(json.dumps({"question": q}) + "\n" for q, _ in PILOT[:2]), encoding="utf-8")

    report(real, "simulate", "--questions", str(questions), "--users", "1", "--repeat-every", "0",
           "--start", "2025-03-03")  # fmt: skip

    assert not (home / "app.sqlite3").exists()
    assert "| Answers | 2 |" in report(real, "--simulated", "pilot", "--out", str(tmp_path / "sim"))
    assert "| Answers | 0 |" in report(real, "pilot", "--out", str(tmp_path / "real"))
    again = report(
        real, "simulate", "--questions", str(questions), "--users", "1", "--repeat-every", "0", "--fresh"
    )
    assert "2 answers to 2 questions" in again
    assert "| Answers | 2 |" in report(real, "--simulated", "pilot", "--out", str(tmp_path / "sim2"))


def test_searches_and_reads_without_an_answer_are_counted_in_the_period(tmp_path: Path) -> None:
    with open_store(Settings(home=tmp_path / "home")) as store:
        agent = create_user(store, "agent@example.org", "Agent", "correct horse battery")
        for channel, kind in [("mcp", "search"), ("mcp", "search"), ("mcp", "passage"), ("openai", "search")]:
            record_lookup(store, agent, channel, kind, 3)  # type: ignore[arg-type]
        report = build_report(store, None, None, "feedback", 5.0)
        before = build_report(store, None, date(2000, 1, 1), "feedback", 5.0)
    assert report.summary.lookups == {"mcp passage": 1, "mcp search": 2, "openai search": 1}
    assert "| Searches and reads without an answer | mcp passage 1 · mcp search 2 · openai search 1 |" in (
        report_markdown(report)
    )
    assert before.summary.lookups == {}
