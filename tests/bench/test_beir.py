"""BEIR-format sets: reading, graded nDCG@10 and Recall@100, and benchmarks/beir.py end to end."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pytest

from evidenceqa.bench.beir import evaluate, ndcg, parse_published, ranked_documents, read_beir, recall
from tests.bench.test_performance_benchmarks import script

CORPUS = {
    "d1": (
        "Chlorhexidine and mucous membranes",
        "Chlorhexidine gluconate must not be used on mucous membranes or the eyes.",
    ),
    "d2": (
        "Hair removal before surgery",
        "Clipping hair rather than shaving reduces surgical site infection after spinal surgery.",
    ),
    "d3": (
        "Tranexamic acid in hip arthroplasty",
        "Tranexamic acid reduced blood loss and transfusion after total hip arthroplasty.",
    ),
    "d4": (
        "Postoperative nausea",
        "Ondansetron and dexamethasone prevent postoperative nausea and vomiting.",
    ),
    "d5": (
        "Malignant hyperthermia",
        "Dantrolene is the treatment of malignant hyperthermia under anaesthesia.",
    ),
    "d6": (
        "Fasting before anaesthesia",
        "Clear fluids may be drunk up to two hours before elective anaesthesia.",
    ),
}
QUERIES = {
    "q1": "Can chlorhexidine gluconate be used on mucous membranes?",
    "q2": "Should hair be clipped or shaved before a back operation?",
    "q3": "drug for malignant hyperthermia",
    "q4": "a query whose only judgement is not relevant",
}
QRELS = [("q1", "d1", 2), ("q2", "d2", 1), ("q2", "d6", 0), ("q3", "d5", 1), ("q4", "d4", 0)]


def write_beir(folder: Path) -> Path:
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": d, "title": t, "text": x}) + "\n" for d, (t, x) in CORPUS.items())
    )
    (folder / "queries.jsonl").write_text(
        "".join(json.dumps({"_id": q, "text": t}) + "\n" for q, t in QUERIES.items())
    )
    (folder / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t{g}\n" for q, d, g in QRELS)
    )
    return folder


def test_reading_keeps_queries_with_a_relevant_document(tmp_path: Path) -> None:
    beir = read_beir(write_beir(tmp_path / "tiny"))
    assert beir.name == "tiny" and len(beir.corpus) == 6
    assert set(beir.queries) == {"q1", "q2", "q3"}  # q4 has no document graded above 0
    assert beir.qrels["q2"] == {"d2": 1, "d6": 0}


def test_a_missing_file_or_a_bad_qrels_line_is_named(tmp_path: Path) -> None:
    folder = write_beir(tmp_path / "tiny")
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\n")
    with pytest.raises(ValueError, match=r"test.tsv:2: expected query-id, corpus-id and an integer score"):
        read_beir(folder)
    with pytest.raises(ValueError, match=r"qrels/dev.tsv: not found"):
        read_beir(folder, "dev")


def test_graded_ndcg_and_recall_match_hand_computed_values() -> None:
    grades = {"a": 2, "b": 1, "c": 0}
    assert ndcg(["a", "b"], grades) == pytest.approx(1.0)
    # b first, a second: (1/log2 2 + 2/log2 3) / (2/log2 2 + 1/log2 3)
    expected = (1 + 2 / math.log2(3)) / (2 + 1 / math.log2(3))
    assert ndcg(["b", "x"], grades) == pytest.approx(1 / (2 + 1 / math.log2(3)))  # a missed
    assert ndcg(["b", "a"], grades) == pytest.approx(expected)
    assert ndcg(["c", "x"], grades) == 0.0
    assert recall(["x", "b"], grades) == 0.5 and recall([], grades) == 0.0
    assert ranked_documents(["d2", "d2", "d1", "d2", "d3"]) == ["d2", "d1", "d3"]


def test_evaluate_scores_a_missing_ranking_as_zero(tmp_path: Path) -> None:
    beir = read_beir(write_beir(tmp_path / "tiny"))
    scores = evaluate({"q1": ["d1"], "q2": ["d6", "d2"]}, beir)
    assert scores.queries == 3
    assert scores.ndcg_10 == pytest.approx((1.0 + 1 / math.log2(3) + 0.0) / 3)
    assert scores.recall_100 == pytest.approx(2 / 3)


def test_published_figures_are_name_value_pairs() -> None:
    assert parse_published(["BM25=0.325", "BGE-base=0.374"]) == [("BM25", 0.325), ("BGE-base", 0.374)]
    with pytest.raises(ValueError, match="expected NAME=nDCG@10"):
        parse_published(["BM25:0.3"])


def test_the_script_runs_a_beir_folder_through_the_pipeline(tmp_path: Path, models_dir: Path) -> None:
    folder = write_beir(tmp_path / "tiny")
    env = {**os.environ, "EVIDENCEQA_MODELS_DIR": str(models_dir)}
    work = tmp_path / "work"
    out = script("beir.py", "run", str(folder), "--work", str(work), "--published", "BM25=0.5", env=env)
    rows = {
        line.split("|")[1].strip(): line.split("|")[2:4] for line in out.splitlines() if line.startswith("| ")
    }
    assert "**tiny** (6 documents, 3 queries with a relevant document)" in out
    hybrid_ndcg, hybrid_recall = (float(v) for v in rows["evidenceqa hybrid (default pipeline)"])
    assert (
        hybrid_recall == 1.0 and hybrid_ndcg > 0.9
    )  # six documents: every relevant one is found, near the top
    assert rows["published: BM25"][0].strip() == "0.500"
    again = script("beir.py", "run", str(folder), "--work", str(work), env=env)  # a kept home: same figures
    assert "evidenceqa hybrid (default pipeline) | " + f"{hybrid_ndcg:.3f}" in again


def test_export_writes_a_shared_benchmark_in_beir_format(tmp_path: Path) -> None:
    library = tmp_path / "lib.jsonl"
    docs = [{"doc_id": f"p{i}", "collection": "pubmedqa", "title": None,
             "sections": [{"heading": "Results", "paragraphs": [f"Finding number {i}."]}]} for i in range(3)]  # fmt: skip
    library.write_text("".join(json.dumps(d) + "\n" for d in docs))
    bench = tmp_path / "bench.jsonl"
    rows = [{"query_id": "a", "question": "finding one?", "gold_doc_ids": ["p1"], "meta": {"collection": "pubmedqa"}},
            {"query_id": "b", "question": "nothing here?", "gold_doc_ids": [], "meta": {"collection": "pubmedqa"}}]  # fmt: skip
    bench.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = script(
        "beir.py",
        "export",
        "--benchmark",
        str(bench),
        "--library",
        str(library),
        "--out",
        str(tmp_path / "b"),
    )
    assert "3 documents, 1 queries" in out
    beir = read_beir(tmp_path / "b")
    assert beir.queries == {"a": "finding one?"} and beir.qrels == {"a": {"p1": 1}}
    assert beir.corpus["p2"] == ("", "Finding number 2.")
