"""`evidenceqa adapt` as a user runs it, on the sample library."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from evidenceqa.adapt import MANIFEST
from tests.cli.test_cli import run
from tests.conftest import SAMPLE


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("home")
    assert run(home, "ingest", "--no-index", str(SAMPLE / "library")).returncode == 0
    return home


def test_adapt_trains_on_library_pairs_and_keeps_benchmark_questions_out(home: Path, tmp_path: Path) -> None:
    bench = tmp_path / "bench.jsonl"
    bench.write_text(
        json.dumps({"query_id": "1", "question": "What is (are) Fever ?"}) + "\n", encoding="utf-8"
    )
    out = tmp_path / "adapted"
    result = run(
        home, "adapt", "--out", str(out), "--holdout", str(bench), "--max-pairs", "8", "--batch-size", "4"
    )
    assert result.returncode == 0, result.stderr
    assert "training pairs" in result.stdout and f"--embedder onnx:{out}" in result.stdout
    manifest = json.loads((out / MANIFEST).read_text())
    assert manifest["triplets"] == sum(manifest["triplets_by_kind"].values()) > 0
    assert manifest["holdout"] == [str(bench)]
    assert manifest["training"]["steps"] >= 2


def _fails(result: subprocess.CompletedProcess, message: str) -> None:
    assert result.returncode == 2
    assert message in result.stderr


def test_adapt_without_a_library_says_so(tmp_path: Path) -> None:
    _fails(run(tmp_path / "empty", "adapt", "--out", str(tmp_path / "m")), "no library in")


def test_adapt_names_a_malformed_holdout_line(home: Path, tmp_path: Path) -> None:
    bench = tmp_path / "bad.jsonl"
    bench.write_text("not json\n", encoding="utf-8")
    _fails(
        run(home, "adapt", "--out", str(tmp_path / "m"), "--holdout", str(bench)),
        "bad.jsonl:1: not a benchmark row",
    )


def test_adapt_rejects_impossible_settings(home: Path, tmp_path: Path) -> None:
    _fails(run(home, "adapt", "--out", str(tmp_path / "m"), "--max-pairs", "2"), "--max-pairs ≥ --batch-size")


def test_adapt_never_replaces_a_folder_that_is_not_an_adapted_model(home: Path, tmp_path: Path) -> None:
    precious = tmp_path / "notes"
    precious.mkdir()
    (precious / "keep.txt").write_text("mine", encoding="utf-8")
    _fails(run(home, "adapt", "--out", str(precious)), "is not an adapted model")
    assert (precious / "keep.txt").read_text() == "mine"
