"""The benchmark guard refuses any training query a benchmark holds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evidenceqa.adapt.leakage import Holdout


@pytest.fixture
def holdout(tmp_path: Path) -> Holdout:
    rows = [
        {"query_id": "1", "question": "What are the symptoms of Tourette syndrome ?", "gold_doc_ids": ["mq-1"],
         "gold_passages": ["Tics usually appear in childhood and are sudden repetitive movements."]},
        {"query_id": "2", "question": "Which virus causes influenza-like illness in adolescents?",
         "gold_doc_ids": ["cq-1"], "gold_passages": ["HCoV"]},
    ]  # fmt: skip
    path = tmp_path / "bench.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return Holdout.from_files([path])


def test_exact_question_refused_whatever_the_case_and_punctuation(holdout: Holdout) -> None:
    assert holdout.reason("what are the symptoms of tourette syndrome?") == "is a benchmark question"


def test_near_duplicate_question_refused(holdout: Holdout) -> None:
    assert (
        holdout.reason("Which viruses cause influenza-like illness in adolescents")
        == "nearly a benchmark question"
    )


def test_query_containing_or_inside_a_gold_passage_refused(holdout: Holdout) -> None:
    inside = "sudden repetitive movements Tics usually appear in childhood and are"
    assert holdout.reason("Tics usually appear in childhood and are sudden repetitive movements. More.") == (
        "overlaps a gold passage"
    )
    assert holdout.reason("Tics usually appear in childhood") == "overlaps a gold passage"
    assert holdout.reason(inside) is None  # the words, not the passage


def test_short_gold_spans_do_not_forbid_the_domain(holdout: Holdout) -> None:
    assert holdout.reason("HCoV infections among adults presenting with fever") is None


def test_unrelated_queries_pass_and_refusals_are_counted(holdout: Holdout) -> None:
    assert holdout.allows("What are the treatments for Tourette syndrome ?")
    assert not holdout.allows("What are the symptoms of Tourette syndrome ?")
    assert holdout.refused == {"is a benchmark question": 1}
    assert holdout.gold_doc_ids == {"mq-1", "cq-1"}


def test_a_malformed_benchmark_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"question": "ok"}\n{"no_question": 1}\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad.jsonl:2: not a benchmark row"):
        Holdout.from_files([path])
