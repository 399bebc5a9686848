"""`evidenceqa benchmark build | review | export` as a user runs them, then the result through
`evidenceqa bench retrieval`, over the small real home."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

from typer.testing import CliRunner, Result

from evidenceqa.bench.retrieval import read_questions
from evidenceqa.cli import app
from evidenceqa.settings import Settings
from tests.curation.conftest import DVT_PAGE, MDR_TB


def run(settings: Settings, database: Path, *args: str) -> Result:
    """The command in this process (a subprocess per step would spend most of the test starting up)."""
    env = {"EVIDENCEQA_MODELS_DIR": str(settings.models_path), "EVIDENCEQA_DATABASE_URL": f"sqlite:///{database}",
           "COLUMNS": "200"}  # fmt: skip
    return CliRunner().invoke(app, ["--home", str(settings.home), *args], env=env)


def decide(path: Path, by_question: dict[str, dict[str, str]]) -> None:
    """An expert fills in the review CSV: a decision on the rows whose question starts with a key."""
    with path.open(encoding="utf-8", newline="") as stream:
        rows = list(csv.DictReader(stream))
    for row in rows:
        for start, values in by_question.items():
            if row["question"].startswith(start):
                row.update(values, reviewer="Dr Reed")
    with path.open("w", encoding="utf-8", newline="") as stream:
        writer = csv.DictWriter(stream, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def test_build_review_export_and_run_in_the_harness(home_settings: Settings, formats_dir: Path,
                                                    tmp_path: Path) -> None:  # fmt: skip
    db = tmp_path / "app.sqlite3"
    built = run(home_settings, db, "benchmark", "build", "--from", str(formats_dir / DVT_PAGE),
                "--from", str(formats_dir / MDR_TB), "--out", str(tmp_path / "candidates.jsonl"))  # fmt: skip
    assert built.exit_code == 0, built.output
    assert "10 candidates from 2 documents" in built.output
    assert "│ medquad" in built.stdout and "│ summary" in built.stdout
    rows = [json.loads(line) for line in (tmp_path / "candidates.jsonl").read_text().splitlines()]
    what = next(r for r in rows if r["question"] == "What is (are) Deep Vein Thrombosis?")
    assert [s["doc_id"] for s in what["sources"]] == ["medquad-8_0000051", "medquad-4_0000256"]

    loaded = run(home_settings, db, "benchmark", "review", "--candidates", str(tmp_path / "candidates.jsonl"),
                 "--name", "periop-v1", "--csv", str(tmp_path / "review.csv"))  # fmt: skip
    assert loaded.exit_code == 0, loaded.output
    assert "periop-v1: 10 candidates added, 0 updated · review them at /review/periop-v1" in loaded.stdout
    decide(tmp_path / "review.csv", {
        "What is (are) Deep Vein Thrombosis?": {"decision": "accept"},
        "What are the symptoms of Deep Vein Thrombosis?": {"decision": "accept"},
        "Who is at risk for Deep Vein Thrombosis?": {
            "decision": "edit", "edited_question": "Who is at risk of a deep vein thrombosis?"},
        "Why Was This Study Done?": {"decision": "reject", "comment": "not a clinical question"},
    })  # fmt: skip
    imported = run(home_settings, db, "benchmark", "review", "--name", "periop-v1",
                   "--import-csv", str(tmp_path / "review.csv"))  # fmt: skip
    assert imported.exit_code == 0, imported.output
    assert "periop-v1: 4 decisions imported" in imported.stdout

    exported = run(home_settings, db, "benchmark", "export", "--name", "periop-v1",
                   "--out", str(tmp_path / "periop.jsonl"))  # fmt: skip
    assert exported.exit_code == 0, exported.output
    assert "3 validated pairs (2 accepted, 1 edited)" in exported.stdout
    assert "1 rejected, 6 not reviewed yet" in exported.stdout
    questions = read_questions(tmp_path / "periop.jsonl")
    assert [q.question for q in questions] == [
        "What is (are) Deep Vein Thrombosis?", "Who is at risk of a deep vein thrombosis?",
        "What are the symptoms of Deep Vein Thrombosis?",
    ]  # fmt: skip
    assert all(q.gold_passages and q.meta["reviewer"] == "Dr Reed" for q in questions)
    assert questions[1].meta["question_type"] == "context-dependent"

    bench = run(home_settings, db, "bench", "retrieval", "--benchmark", str(tmp_path / "periop.jsonl"),
                "--mode", "bm25", "--out", str(tmp_path / "reports"))  # fmt: skip
    assert bench.exit_code == 0, bench.output
    report = json.loads((tmp_path / "reports" / "retrieval-periop.json").read_text())
    assert report["questions"] == 3
    assert report["modes"]["bm25"]["metrics"]["document"]["MRR@10"] >= 0.5


def test_clear_errors(home_settings: Settings, tmp_path: Path) -> None:
    db = tmp_path / "app.sqlite3"
    nothing = run(home_settings, db, "benchmark", "review", "--name", "x")
    assert nothing.exit_code == 2 and "give --candidates, --csv or --import-csv" in nothing.stderr
    missing = run(
        home_settings, db, "benchmark", "export", "--name", "never", "--out", str(tmp_path / "b.jsonl")
    )
    assert missing.exit_code == 2 and "no benchmark 'never' under review" in missing.stderr
    empty = Settings(home=tmp_path / "empty", models_dir=home_settings.models_path)
    unmapped = run(empty, db, "benchmark", "build", "--out", str(tmp_path / "c.jsonl"))
    assert unmapped.exit_code == 2 and "the library is empty" in unmapped.stderr


def test_build_from_the_librarys_own_documents(home_settings: Settings, tmp_path: Path) -> None:
    """Without --from the pairs come from the catalogue: the library JSONL's MedQuAD pages keep only
    question types as headings, so their questions come from MedQuAD's templates."""
    built = run(home_settings, tmp_path / "app.sqlite3", "benchmark", "build", "--collection", "medquad",
                "--list", "--markdown")  # fmt: skip
    assert built.exit_code == 0, built.output
    assert "| medquad | 12 |" in built.stdout  # the NHLBI and CDC pages, ingested from their XML
    assert "| medquad-qtype | 3 |" in built.stdout  # MedlinePlus's DVT, TB and endocarditis pages
    row = next(line for line in built.stdout.splitlines() if line.startswith("| medquad-4_0000256 |"))
    assert row.startswith(
        "| medquad-4_0000256 | What is (are) Deep Vein Thrombosis? | medquad-qtype | Information |"
    )
    assert re.search(
        r"\| medquad-4_0000256 \(1\.00\), medquad-8_0000051 \(0\.\d\d\) \|$", row
    )  # NHLBI answers it
