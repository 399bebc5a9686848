import gzip
import json
import math
import re
from pathlib import Path

import pytest

from evidenceqa.bench.gaps import auc, build, read_review, separation
from evidenceqa.bench.retrieval import Question, read_questions

REVIEW = Path(__file__).resolve().parents[2] / "benchmarks" / "reviews" / "covidqa-dev-gaps.jsonl"


def _questions():
    return [Question(f"q{i}", f"question {i}", [f"d{i % 8}"], [], {"n": i}) for i in range(40)] + [
        Question("both", "two gold docs", ["d0", "d1"], [], {})
    ]


def test_build_holds_out_a_seeded_share_and_labels_questions():
    rows = build(_questions(), 0.25, seed=5)
    assert rows == build(_questions(), 0.25, seed=5)
    held_out = set(rows[0]["meta"]["exclude_doc_ids"])
    assert len(held_out) == 2 and held_out <= {f"d{i}" for i in range(8)}
    for row in rows:
        inside = {d in held_out for d in row["gold_doc_ids"]}
        assert len(inside) == 1  # never gold on both sides
        assert row["meta"]["answerable"] is not inside.pop()
    assert sum(not r["meta"]["answerable"] for r in rows) == 10
    assert rows[0]["meta"]["n"] == 0  # the source meta is kept


def test_auc():
    assert auc([0.9, 0.8], [0.1, 0.2]) == 1.0
    assert auc([0.1], [0.9]) == 0.0
    assert auc([0.5], [0.5]) == 0.5
    assert math.isnan(auc([], [0.1]))


def test_separation_reports_quartiles_gold_found_and_auc():
    rows = [{"meta": {"answerable": i < 6}, "score": 0.5 + i / 10 if i < 6 else i / 100} for i in range(10)]
    table, separability = separation(rows, lambda row: (row["score"], row["meta"]["answerable"]))
    assert separability == pytest.approx(1.0)
    assert table[0][:3] == ["answerable", "6", "100.0%"] and table[1][:3] == ["content gap", "4", "0.0%"]


def test_a_review_gives_the_chunks_that_answer_gap_questions(tmp_path):
    path = tmp_path / "review.jsonl"
    verdicts = [
        {"query_id": "1", "verdict": "answered", "chunk_id": "a#1", "quote": "It is.", "reason": ""},
        {"query_id": 2, "verdict": "partly", "chunk_id": "b#1", "quote": "Near.", "reason": ""},
        {"query_id": "3", "verdict": "ill_posed", "chunk_id": None, "quote": None, "reason": ""},
    ]
    path.write_text("\n".join(json.dumps(v) for v in verdicts) + "\n\n", encoding="utf-8")
    assert read_review(path) == {"1": "a#1"}  # only "answered" changes a label


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("not json", "Expecting value"),
        ('{"query_id": "1"}', "'verdict'"),
        ('{"query_id": "1", "verdict": "maybe"}', "verdict 'maybe' is not one of answered, partly"),
        ('{"query_id": "1", "verdict": "answered", "chunk_id": "a#1"}', "names the chunk_id and quotes"),
        ("[1, 2]", "list indices"),
    ],
)
def test_a_malformed_review_line_is_named(tmp_path, line, reason):
    path = tmp_path / "review.jsonl"
    path.write_text('{"query_id": "0", "verdict": "not_answered"}\n' + line + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=rf"review\.jsonl:2: not a review verdict \(.*{re.escape(reason)}"):
        read_review(path)


def test_the_checked_in_review_covers_the_default_gap_set_and_quotes_the_library(shared_data):
    """The review in benchmarks/reviews judges every gap question of covidqa-dev's default gap set
    (and no other), and each answered verdict quotes its document word for word."""
    questions = read_questions(shared_data / "benchmarks" / "covidqa-dev.jsonl")
    gaps = [row["query_id"] for row in build(questions) if not row["meta"]["answerable"]]
    rows = [json.loads(line) for line in REVIEW.read_text(encoding="utf-8").splitlines()]
    assert [row["query_id"] for row in rows] == gaps
    answering = read_review(REVIEW)
    documents = _documents(shared_data / "library" / "covidqa_articles.jsonl",
                           shared_data / "library" / "medquad_nih.jsonl.gz",
                           shared_data / "library" / "pubmedqa_abstracts.jsonl")  # fmt: skip
    quotes = {row["query_id"]: row["quote"] for row in rows if row["verdict"] == "answered"}
    assert len(answering) == len(quotes) > 0
    for query_id, chunk_id in answering.items():
        text = documents[chunk_id.split("#")[0]]
        assert " ".join(quotes[query_id].split()) in text, f"{query_id}: the quote is not in {chunk_id}"


def _documents(*paths):
    """doc_id → its title and paragraphs as one whitespace-normalised text."""
    found = {}
    for path in paths:
        with (
            gzip.open(path, "rt", encoding="utf-8") if path.suffix == ".gz" else path.open(encoding="utf-8")
        ) as f:
            for line in f:
                doc = json.loads(line)
                parts = [doc.get("title") or ""] + [
                    p for s in doc["sections"] for p in [s.get("heading") or "", *s["paragraphs"]]
                ]
                found[doc["doc_id"]] = " ".join(" ".join(parts).split())
    return found
