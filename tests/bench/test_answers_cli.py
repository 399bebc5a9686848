"""`bench abstention` and `bench answers` on a tiny real library, through the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evidenceqa.answer.abstain import CALIBRATION_FILE, FEATURES, Abstainer
from tests.cli.test_cli import run
from tests.conftest import write_library

TOPICS = [
    ("chlorhexidine", "Chlorhexidine gluconate skin antisepsis lowered surgical site infection."),
    ("clipping", "Clipping hair instead of shaving reduced wound infection after hernia repair."),
    ("tranexamic", "Tranexamic acid reduced blood loss in total knee arthroplasty."),
    ("warming", "Forced-air warming prevented perioperative hypothermia in colorectal surgery."),
    ("fasting", "Clear fluids until two hours before anaesthesia did not raise aspiration risk."),
    ("glucose", "Tight glucose control after cardiac surgery reduced sternal wound infection."),
    ("gloves", "Double gloving reduced glove perforation during orthopaedic operations."),
    ("drains", "Routine drains after thyroidectomy did not reduce haematoma."),
]


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("tiny")
    docs = [(name, 2010 + i, text) for i, (name, text) in enumerate(TOPICS)]
    questions = [
        {
            "query_id": f"{name}-{k}",
            "question": question,
            "gold_doc_ids": [name],
            "gold_passages": [text.split()[0]],
        }
        for name, text in TOPICS
        for k, question in enumerate(
            (text.rstrip(".") + "?", "What does the evidence say about " + name + "?")
        )
    ]
    bench = folder / "tiny.jsonl"
    bench.write_text("".join(json.dumps(q) + "\n" for q in questions), encoding="utf-8")
    home = folder / "home"
    assert run(home, "ingest", str(write_library(folder / "lib.jsonl", docs))).returncode == 0
    return home, bench


def test_abstention_is_fitted_on_one_half_reported_on_the_other_and_saved(setup: tuple[Path, Path]) -> None:
    home, bench = setup
    result = run(home, "bench", "abstention", "--benchmark", str(bench), "--write", "--markdown")
    assert result.returncode == 0, result.stderr
    assert (
        "| uncalibrated floor |" in result.stdout
        and "| calibrated (≤ 10% false on the fit half) |" in result.stdout
    )
    saved = json.loads((home / CALIBRATION_FILE).read_text())
    assert saved["features"] == list(FEATURES) and len(saved["weights"]) == len(FEATURES)
    assert saved["fitted_on"] == "tiny.jsonl (even questions), seed 13"
    assert "| – |" in result.stdout  # the floor has no probabilities to rank by
    # Verified labels (the evidence states the answer or not), both ways round, and what they leave out.
    assert "| calibrated (≤ 10% false on the fit half) | verified |" in result.stdout
    assert "| the same, fitted on the odd half, reported on the even | verified |" in result.stdout
    assert "| answerable, but the evidence misses the answer |" in result.stdout
    assert "| gap, but the evidence states the answer elsewhere |" in result.stdout


def test_a_review_that_is_not_one_is_named_and_nothing_is_saved(setup: tuple[Path, Path]) -> None:
    home, bench = setup
    review = bench.with_name("review.jsonl")
    review.write_text('{"query_id": "clipping-0", "verdict": "yes"}\n', encoding="utf-8")
    (home / CALIBRATION_FILE).unlink(missing_ok=True)
    result = run(home, "bench", "abstention", "--benchmark", str(bench), "--review", str(review), "--write")
    assert result.returncode == 2
    assert f"{review}:1: not a review verdict (verdict 'yes' is not one of" in result.stderr
    assert not (home / CALIBRATION_FILE).exists()


def test_answers_reports_a_benchmark_and_both_halves_of_its_gap_set(setup: tuple[Path, Path]) -> None:
    home, bench = setup
    (home / CALIBRATION_FILE).unlink(missing_ok=True)  # the uncalibrated floor: answers everything found
    result = run(home, "bench", "answers", "--benchmark", str(bench), "--gaps", str(bench), "--markdown")
    assert result.returncode == 0, result.stderr
    rows = {
        line.split(" | ")[0].lstrip("| "): line
        for line in result.stdout.splitlines()
        if line.startswith("| tiny")
    }
    assert set(rows) == {"tiny", "tiny gap set (answerable)", "tiny gap set (content gaps)"}
    assert "| extractive | 16 |" in rows["tiny"]
    assert "| 0.0% |" in rows["tiny gap set (content gaps)"]  # their gold is held out: no hit possible


def test_answers_reports_a_benchmarks_unanswerable_questions_apart(setup: tuple[Path, Path]) -> None:
    """A benchmark whose rows say whether they are answerable (clinician-dev) is reported as a
    clinician meets it: the answerable questions and the unanswerable ones, each with its abstentions."""
    home, bench = setup
    (home / CALIBRATION_FILE).unlink(missing_ok=True)
    answerable = [
        {**json.loads(line), "meta": {"answerable": True}} for line in bench.read_text().splitlines()[:4]
    ]
    unanswerable = {"query_id": "u-1", "question": "Which sugammadex dose reverses a deep block?",
                    "gold_doc_ids": [], "gold_passages": [], "meta": {"answerable": False}}  # fmt: skip
    mixed = bench.with_name("mixed.jsonl")
    mixed.write_text("".join(json.dumps(row) + "\n" for row in [*answerable, unanswerable]), encoding="utf-8")
    result = run(home, "bench", "answers", "--benchmark", str(mixed), "--markdown")
    assert result.returncode == 0, result.stderr
    assert _cells(result.stdout, "mixed (answerable)")[1:3] == ["extractive", "4"]
    assert _cells(result.stdout, "mixed (content gaps)")[1:3] == ["extractive", "1"]
    assert not any(line.startswith("| mixed |") for line in result.stdout.splitlines())


def _cells(stdout: str, name: str) -> list[str]:
    line = next(line for line in stdout.splitlines() if line.startswith(f"| {name} |"))
    return [cell.strip() for cell in line.strip("|").split("|")]


def test_answers_says_which_abstentions_cost_a_hit(setup: tuple[Path, Path]) -> None:
    """Every question abstained on (a calibration that never answers): each abstention costs a hit
    exactly where the answer without the check hits."""
    home, bench = setup
    # A calibration that always answers: what `answers` compares each abstention with.
    Abstainer([0.0] * len(FEATURES), 50.0, 0.5, "always answers").save(home)
    floor = _cells(run(home, "bench", "answers", "--benchmark", str(bench), "--markdown").stdout, "tiny")
    never = Abstainer([0.0] * len(FEATURES), -50.0, 0.5, "never answers")
    never.save(home)
    try:
        result = run(home, "bench", "answers", "--benchmark", str(bench), "--markdown")
    finally:
        (home / CALIBRATION_FILE).unlink()
    assert result.returncode == 0, result.stderr
    headers = [cell.strip() for cell in result.stdout.splitlines()[0].strip("|").split("|")]
    row = dict(zip(headers, _cells(result.stdout, "tiny"), strict=True))
    assert row["Answer hit rate"] == "0.0%" and row["Abstained"] == "100.0%"
    floor_row = dict(zip(headers, floor, strict=True))
    assert floor_row["Answer hit rate"] not in ("0.0%", "100.0%")  # some hits, some misses: a real test
    assert row["Abstentions that cost a hit"] == floor_row["Answer hit rate"]


def test_answers_needs_something_to_answer(setup: tuple[Path, Path]) -> None:
    result = run(setup[0], "bench", "answers")
    assert result.returncode == 2 and "give --benchmark FILE and/or --gaps FILE" in result.stderr
