"""The CLI as a user runs it: a real process, real files, exit codes and messages."""

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.conftest import SAMPLE

MODELS = Path(tempfile.gettempdir()) / "evidenceqa-test-models"  # one ONNX export for every test home


def run(home: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "evidenceqa", "--home", str(home), *args],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "200", "EVIDENCEQA_MODELS_DIR": str(MODELS), **(env or {})},
        timeout=600,
    )


@pytest.fixture(scope="module")
def first_ingest(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    home = tmp_path_factory.mktemp("home")
    return home, run(home, "ingest", str(SAMPLE / "library"))


@pytest.fixture(scope="module")
def sample_home(first_ingest) -> Path:
    return first_ingest[0]


def test_ingest_sample_then_again_does_no_work(first_ingest, sample_home):
    result = first_ingest[1]
    assert result.returncode == 0, result.stderr
    assert "3 read, 0 unchanged, 0 failed" in result.stdout and "362 added" in result.stdout
    written = re.search(r"(\d+) chunks written", result.stdout).group(1)
    assert f"index: {written} chunks embedded and written for 362 documents" in result.stdout
    # What `make run` ends with: the sample library calibrated on its own questions.
    assert "calibration: 200 questions from the library" in result.stdout
    assert (sample_home / "abstention.json").is_file()
    again = run(sample_home, "ingest", str(SAMPLE / "library"))
    assert again.returncode == 0
    assert "0 read, 3 unchanged, 0 failed" in again.stdout
    assert "0 added, 0 updated" in again.stdout
    assert "index: 0 chunks embedded" in again.stdout
    assert "calibration: still fits the library" in again.stdout


def test_library_lists_collections_and_documents(sample_home):
    result = run(sample_home, "library", "--documents", "--collection", "covidqa", "--limit", "3")
    assert result.returncode == 0
    assert "covidqa" in result.stdout and "pubmedqa" not in result.stdout
    assert result.stdout.count("covidqa-") == 3


def test_chunk_stats_prints_all_five_strategies(sample_home):
    result = run(sample_home, "chunk-stats")
    assert result.returncode == 0, result.stderr
    for name in ["fixed-size", "section", "hybrid", "hierarchical", "hierarchical-paragraphs"]:
        assert f"│ {name} " in result.stdout
    assert "Context loss" in result.stdout


def test_chunk_stats_on_files_for_one_strategy(tmp_path):
    doc = {"doc_id": "a", "title": "T", "sections": [{"heading": "H", "paragraphs": ["One. Two."]}]}
    (tmp_path / "a.jsonl").write_text(json.dumps(doc) + "\n")
    result = run(tmp_path / "home", "chunk-stats", "--strategy", "section", str(tmp_path / "a.jsonl"))
    assert result.returncode == 0
    assert "│ section " in result.stdout and "hybrid" not in result.stdout


def test_bad_files_are_named_with_a_reason_and_the_rest_is_ingested(tmp_path):
    good = tmp_path / "good.md"
    good.write_text("# Gloves\n\nDouble gloving reduces perforation.\n")
    bad = tmp_path / "scan.pdf"
    bad.write_bytes(b"")
    home = tmp_path / "home"
    result = run(home, "ingest", "--no-index", str(good), str(bad))
    assert result.returncode == 0
    assert f"{bad}: empty file" in result.stderr
    assert "Traceback" not in result.stderr
    assert "1 added" in result.stdout


def test_ingest_tells_what_it_skipped_from_what_it_only_notes(tmp_path):
    library = tmp_path / "lib.jsonl"
    record = {"doc_id": "a", "title": "Gloves", "sections": [{"heading": "Body", "paragraphs": ["Double."]}]}
    library.write_text(json.dumps(record) + "\n" + json.dumps(record | {"title": "Gowns"}) + "\n")
    bad = tmp_path / "scan.pdf"
    bad.write_bytes(b"")
    result = run(tmp_path / "home", "ingest", "--no-index", str(library), str(bad))
    assert f"skipped: {bad}: empty file" in result.stderr
    # Both documents are kept: the second under a new id, which is worth saying but skips nothing.
    assert f"note: {library}: doc_id 'a' appears again; stored as 'a~2'" in result.stderr
    assert "2 added" in result.stdout


def test_square_brackets_in_the_library_are_printed_as_written(tmp_path):
    # Rich read "[see below]" or "[e.g. at induction]" as style tags and dropped them from the output.
    library = tmp_path / "brackets"
    library.mkdir()
    (library / "cefazolin.md").write_text(
        "# Cefazolin [draft] prophylaxis\n\n## Timing\n\nGive cefazolin 2 g [see below] within 60 minutes "
        "before the incision [e.g. at induction of anaesthesia].\n"
    )
    (library / "scan [copy].pdf").write_bytes(b"")
    home = tmp_path / "home"
    ingested = run(home, "ingest", str(library))
    assert f"skipped: {library / 'scan [copy].pdf'}: empty file" in ingested.stderr
    listed = run(home, "library", "--documents")
    assert "Cefazolin [draft] prophylaxis" in listed.stdout
    found = run(home, "search", "cefazolin before incision", "--mode", "bm25", "--k", "1")
    assert "[see below]" in found.stdout and "[e.g. at induction of" in found.stdout, found.stdout
    removed = run(home, "remove", "no-such [doc]")
    assert "not in the library: no-such [doc]" in removed.stderr


def test_a_document_without_a_title_is_named_as_in_the_web_app(tmp_path):
    # PubMed abstracts come without titles: search printed "pubmed-1" where the chat says what it is.
    record = {"doc_id": "pubmed-1", "title": None, "doc_type": "journal-abstract", "year": 2015,
              "topics": ["Chlorhexidine", "Mucous Membrane"],
              "sections": [{"heading": "Results", "paragraphs": ["Chlorhexidine irritated the oral mucosa."]}]}  # fmt: skip
    (tmp_path / "abstracts.jsonl").write_text(json.dumps(record) + "\n")
    home = tmp_path / "home"
    run(home, "ingest", str(tmp_path / "abstracts.jsonl"))
    found = run(home, "search", "chlorhexidine mucosa", "--mode", "bm25", "--k", "1")
    assert "Journal abstract on Chlorhexidine; Mucous Membrane" in found.stdout, found.stdout
    assert "pubmed-1" not in found.stdout
    listed = run(home, "library", "--documents")  # not a blank title beside its id
    assert "Journal abstract on Chlorhexidine; Mucous Membrane" in listed.stdout, listed.stdout


def test_exit_code_is_non_zero_only_when_nothing_was_ingested(tmp_path):
    bad = tmp_path / "x.pdf"
    bad.write_bytes(b"not a pdf at all")
    result = run(tmp_path / "home", "ingest", "--no-index", str(bad))
    assert result.returncode == 1
    assert "wrong extension: '.pdf' but the content is TEXT" in result.stderr
    assert "Traceback" not in result.stderr


def test_remove_document(tmp_path):
    source = tmp_path / "a.md"
    source.write_text("# Masks\n\nSurgical masks reduce droplet spread.\n")
    home = tmp_path / "home"
    run(home, "ingest", "--no-index", str(source))
    removed = run(home, "remove", "--no-index", "file:a", "file:nope")
    assert removed.returncode == 0
    assert "removed 1 document(s)" in removed.stdout and "not in the library: file:nope" in removed.stderr
    assert run(home, "remove", "--no-index", "file:a").returncode == 1


def test_bad_settings_are_a_clear_error(tmp_path):
    result = run(tmp_path, "library", env={"EVIDENCEQA_CHUNK_MAX_WORDS": "3"})
    assert result.returncode == 2
    assert "invalid setting chunk_max_words" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_malformed_shorthand_file_is_a_clear_error(tmp_path):
    (tmp_path / "shorthand.tsv").write_text("NELA national emergency laparotomy audit\n", encoding="utf-8")
    result = run(tmp_path, "search", "NELA outcomes")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "shorthand.tsv:1: expected a shorthand, a tab and its long form" in result.stderr


def test_unknown_strategy_is_a_clear_error(tmp_path):
    result = run(tmp_path, "chunk-stats", "--strategy", "sentences")
    assert result.returncode == 2
    assert "unknown strategy 'sentences'" in result.stderr


def test_search_json_reports_filters_and_results(sample_home):
    result = run(
        sample_home, "search", "studies since 2005 on shaving before spinal surgery", "--json", "--k", "3"
    )
    assert result.returncode == 0, result.stderr
    response = json.loads(result.stdout)
    assert response["filters"] == {"year_min": 2005}
    assert response["query_text"] == "studies on shaving before spinal surgery"
    assert len(response["results"]) == 3
    top = response["results"][0]
    assert top["doc_id"] == "pubmed-17621202" and "shav" in top["text"].lower()
    assert all(r["year"] >= 2005 and r["hierarchy_level"] != "document" for r in response["results"])
    assert set(top) >= {
        "rank",
        "chunk_id",
        "doc_id",
        "title",
        "section",
        "hierarchy_level",
        "year",
        "evidence_type",
        "text",
        "score",
    }


def test_search_and_ask_filter_by_evidence_type_and_name_a_wrong_one(sample_home):
    result = run(sample_home, "search", "shaving before spinal surgery", "--json", "--evidence-type", "patient-information",
                 "--prefer-evidence")  # fmt: skip
    assert result.returncode == 0, result.stderr
    response = json.loads(result.stdout)
    assert response["filters"] == {"evidence_types": ["patient-information"], "prefer_evidence": True}
    assert response["results"] and {r["evidence_type"] for r in response["results"]} == {
        "patient-information"
    }
    question = "Does shaving the incision site increase infection after spinal surgery?"
    asked = run(sample_home, "ask", question, "--evidence-type", "rct")
    assert asked.returncode == 0, asked.stderr
    # The abstract has no title: it is named by its kind and topics, as in the chat.
    assert (
        "[1] Journal abstract on Anti-Bacterial Agents; Dermatologic Surgical Procedures; Neurosurgical "
        "Procedures; Preoperative Care — 2007 — Randomised controlled trial"
    ) in asked.stdout
    wrong = run(sample_home, "search", "shaving", "--evidence-type", "level-1a")
    assert wrong.returncode == 2 and wrong.stdout == ""
    assert wrong.stderr.strip() == (
        "error: --evidence-type: unknown evidence type 'level-1a'; the types are guideline, systematic-review, "
        "rct, observational, case-report, narrative-review, patient-information, other"
    )


def test_an_abstention_shows_the_closest_passages_as_the_chat_does(sample_home):
    # The CLI said only "I don't have adequate information…"; the chat also shows what lies nearby.
    asked = run(sample_home, "ask", "What humidity should an operating room have?")
    assert asked.returncode == 0, asked.stderr
    assert asked.stdout.startswith("I don't have adequate information to answer this question.")
    after = asked.stdout.split("The closest passages the library holds. They do not answer the question.")[1]
    assert re.search(r'^- .+\n    (?:.+: )?".+"$', after, re.MULTILINE), after
    assert "[1]" not in asked.stdout  # unnumbered: nothing cites them


def test_search_document_level_returns_overviews_only(sample_home):
    result = run(sample_home, "search", "MRSA infection", "--json", "--level", "document", "--k", "5")
    levels = {r["hierarchy_level"] for r in json.loads(result.stdout)["results"]}
    assert levels == {"document"}


def test_batch_search_writes_one_row_per_question(sample_home, tmp_path):
    queries = tmp_path / "q.jsonl"
    queries.write_text(
        json.dumps({"query_id": "q1", "question": "Does shaving increase infection after spinal surgery?"})
        + "\n"
        + json.dumps({"query_id": "q2", "question": "guidelines on deep vein thrombosis prevention in 2016"})
        + "\n"
    )
    out = tmp_path / "r.jsonl"
    result = run(
        sample_home, "search", "--queries", str(queries), "--out", str(out), "--k", "4", "--mode", "bm25"
    )
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["query_id"] for r in rows] == ["q1", "q2"]
    assert all(len(r["results"]) <= 4 for r in rows)
    assert rows[1]["filters"] == {"year_min": 2016, "year_max": 2016}
    assert all(x["year"] == 2016 for x in rows[1]["results"])


def test_bad_batch_file_is_a_clear_error(sample_home, tmp_path):
    queries = tmp_path / "q.jsonl"
    queries.write_text('{"id": 1}\n')
    result = run(sample_home, "search", "--queries", str(queries), "--out", str(tmp_path / "r.jsonl"))
    assert result.returncode == 2
    assert f"{queries}:1: each line must be a JSON object with 'query_id' and 'question'" in result.stderr


def test_an_unknown_embedder_is_a_clear_error(tmp_path):
    result = run(tmp_path, "search", "masks", env={"EVIDENCEQA_EMBEDDER": str(tmp_path / "no-such-model")})
    assert result.returncode == 2
    assert "is not a known name, and no model folder exists" in result.stderr
    assert "Traceback" not in result.stderr


def test_learned_alpha_without_its_table_is_a_clear_error(sample_home):
    result = run(sample_home, "search", "masks", env={"EVIDENCEQA_ALPHA": "learned"})
    assert result.returncode == 2
    assert "alpha = 'learned' needs the per-class table" in result.stderr
    assert "Traceback" not in result.stderr
