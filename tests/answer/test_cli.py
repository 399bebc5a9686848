"""`evidenceqa ask` as a user runs it: one question, JSON, a batch file, and its errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.test_cli import run
from tests.conftest import write_library

DOCS = [
    ("shave", 2007, "Shaving the incision site immediately before spinal surgery increased the rate of "
     "postoperative infection."),
    ("chg", 2015, "Chlorhexidine gluconate should not be used on mucous membranes."),
]  # fmt: skip
SHAVE = "Does shaving the incision site increase infection after spinal surgery?"


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("home")
    assert run(home, "ingest", str(write_library(home.parent / "lib.jsonl", DOCS))).returncode == 0
    return home


def test_ask_prints_a_cited_answer_with_its_source_and_the_disclaimer(home: Path) -> None:
    result = run(home, "ask", SHAVE)
    assert result.returncode == 0, result.stderr
    assert "[1]" in result.stdout and "Study shave" in result.stdout
    assert '"Shaving the incision site immediately before spinal surgery' in result.stdout
    assert "not for real-time clinical decisions" in result.stderr


def test_ask_json_has_the_answer_record(home: Path) -> None:
    row = json.loads(run(home, "ask", SHAVE, "--json").stdout)
    assert row["abstained"] is False and row["citations"][0]["doc_id"] == "shave"
    assert set(row["citations"][0]) == {"n", "doc_id", "chunk_id", "title", "year", "section", "text",
                                        "evidence_type"}  # fmt: skip
    assert row["cost_usd"] == 0.0 and row["timings_ms"]["total"] > 0
    assert {"filters", "query_id", "generator", "index_version"} <= set(row)


def test_a_follow_up_is_asked_after_the_earlier_questions(home: Path) -> None:
    earlier = "Is chlorhexidine gluconate safe to use?"
    result = run(home, "ask", "What about on mucous membranes?", "--after", earlier)
    assert result.returncode == 0, result.stderr
    assert "searched for: Is chlorhexidine gluconate safe to use on mucous membranes?" in result.stderr
    row = json.loads(run(home, "ask", "What about on mucous membranes?", "--after", earlier, "--json").stdout)
    assert row["question"] == "What about on mucous membranes?"
    assert row["searched_for"] == "Is chlorhexidine gluconate safe to use on mucous membranes?"
    assert row["citations"][0]["doc_id"] == "chg"


def test_a_year_range_that_holds_no_year_is_refused_on_one_line(home: Path) -> None:
    result = run(home, "ask", SHAVE, "--year-min", "2022", "--year-max", "2019")
    assert result.returncode == 2
    assert "--year-min/--year-max: the earliest year (2022) is after the latest (2019)" in result.stderr
    assert "Traceback" not in result.stderr


def test_batch_writes_one_row_per_question(home: Path, tmp_path: Path) -> None:
    queries = tmp_path / "q.jsonl"
    rows = [
        {"query_id": "a", "question": SHAVE},
        {"query_id": "b", "question": "Is chlorhexidine safe on mucous membranes?"},
    ]
    queries.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "a.jsonl"
    result = run(home, "ask", "--queries", str(queries), "--out", str(out))
    assert result.returncode == 0, result.stderr
    answers = [json.loads(line) for line in out.read_text().splitlines()]
    assert [a["query_id"] for a in answers] == ["a", "b"]
    assert answers[1]["citations"][0]["doc_id"] == "chg"


def test_an_unreachable_llm_is_a_clear_error(home: Path) -> None:
    env = {
        "EVIDENCEQA_GENERATOR": "llm",
        "EVIDENCEQA_LLM_MODEL": "m",
        "EVIDENCEQA_LLM_API_BASE": "http://127.0.0.1:9/v1",
    }
    result = run(home, "ask", SHAVE, "--no-cache", env=env)
    assert result.returncode == 1
    assert "error:" in result.stderr and "127.0.0.1:9" in result.stderr and "Traceback" not in result.stderr


def test_ask_needs_a_question_or_a_batch(home: Path) -> None:
    result = run(home, "ask")
    assert result.returncode == 2 and "give a question, or --queries FILE" in result.stderr
