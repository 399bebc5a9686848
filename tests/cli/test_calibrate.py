"""`evidenceqa calibrate`, and `ingest` calibrating a new library and refitting after a large change."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evidenceqa.answer.abstain import CALIBRATION_FILE
from evidenceqa.answer.calibration import PRIOR_STRENGTH
from tests.answer.library import abstracts
from tests.cli.test_cli import run

FEW = {"EVIDENCEQA_CALIBRATION_QUESTIONS": "50"}  # a quicker fit, as many questions as documents


def _fitted(home: Path) -> dict:
    return json.loads((home / CALIBRATION_FILE).read_text(encoding="utf-8"))


@pytest.mark.slow
def test_ingest_calibrates_a_new_library_and_refits_only_after_a_large_change(tmp_path: Path) -> None:
    home = tmp_path / "home"
    first = run(home, "ingest", str(abstracts(tmp_path / "a.jsonl", 50)), env=FEW)
    assert first.returncode == 0, first.stderr
    assert "calibration: 50 questions from the library" in first.stdout
    fitted = _fitted(home)
    assert fitted["library_chunks"] > 0 and fitted["fitted_on"].startswith("self-calibrated")

    small = run(home, "ingest", str(abstracts(tmp_path / "b.jsonl", 2, start=50)), env=FEW)
    assert "calibration: still fits the library" in small.stdout
    assert _fitted(home) == fitted  # a small change keeps the fit

    large = run(home, "ingest", str(abstracts(tmp_path / "c.jsonl", 30, start=52)), env=FEW)
    assert large.returncode == 0, large.stderr
    assert "calibration: 50 questions from the library" in large.stdout
    assert _fitted(home)["library_chunks"] > fitted["library_chunks"] * 1.2

    report = run(home, "calibrate", "--report", env=FEW)
    assert report.returncode == 0, report.stderr
    assert "| false abstentions (cross-validated) |" in report.stdout
    # What the library's questions refined: the model shipped with the package.
    assert (
        f"| refines the model fitted on (strength {PRIOR_STRENGTH:g}) | the development sets: "
        in report.stdout
    )


def test_calibrate_refuses_bad_input_in_one_line(tmp_path: Path) -> None:
    empty = run(tmp_path / "empty", "calibrate")
    assert empty.returncode == 2 and "run `evidenceqa ingest` first" in empty.stderr
    zero = run(tmp_path / "empty", "calibrate", "--questions", "0")
    assert zero.returncode == 2 and "--questions is at least 1" in zero.stderr
    assert "Traceback" not in empty.stderr + zero.stderr


def test_a_small_library_keeps_the_shipped_default(tmp_path: Path) -> None:
    result = run(tmp_path / "home", "ingest", str(abstracts(tmp_path / "a.jsonl", 5)))
    assert result.returncode == 0, result.stderr
    assert "calibration: kept the shipped default (5 documents; 30 are needed)" in result.stdout
    assert not (tmp_path / "home" / CALIBRATION_FILE).exists()
