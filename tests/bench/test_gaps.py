import math

import pytest

from evidenceqa.bench.gaps import auc, build, separation
from evidenceqa.bench.retrieval import Question


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
