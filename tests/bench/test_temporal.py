import random

from evidenceqa.bench.retrieval import Question
from evidenceqa.bench.temporal import Constraint, Found, build, evaluate, variants


def _q(query_id: str, doc: str) -> Question:
    return Question(query_id, "Does shaving increase infection?", [doc], [], {})


def test_variants_always_admit_the_gold_year():
    rng = random.Random(1)
    for year in range(1990, 2018):
        for constraint, named in variants(year, rng):
            assert constraint.allows(year)
            assert str(named) in {"since": str(constraint.year_min), "in": str(year),
                                  "before": str((constraint.year_max or 0) + 1)}[constraint.kind]  # fmt: skip


def test_constraint_rejects_undated_documents():
    assert not Constraint("since", 2000, None).allows(None)
    assert Constraint("before", None, 2009).allows(2009) and not Constraint("before", None, 2009).allows(2010)


def test_build_keeps_only_variants_that_top_results_break_and_is_reproducible():
    questions = [_q("a", "doc-a"), _q("b", "doc-b"), _q("c", "undated")]
    years = {"doc-a": 2010, "doc-b": 2010, "undated": None}
    tops = {"Does shaving increase infection?": [2010, 2015]}  # 2015 breaks "in 2010" and "before"
    rows = build(questions, years.get, lambda q: tops[q], seed=3)
    assert rows == build(questions, years.get, lambda q: tops[q], seed=3)
    kinds = {r["meta"]["constraint"] for r in rows}
    assert "in" in kinds and all(r["meta"]["source_query_id"] in {"a", "b"} for r in rows)
    for row in rows:
        meta = row["meta"]
        constraint = Constraint(meta["constraint"], meta["year_min"], meta["year_max"])
        assert constraint.allows(meta["gold_year"])
        assert not all(constraint.allows(y) for y in tops["Does shaving increase infection?"])
        assert row["question"].endswith(": Does shaving increase infection?")


def test_evaluate_scores_handling_on_and_off():
    row = {"question": "Studies published in 2010: X?", "gold_doc_ids": ["g"],
           "meta": {"constraint": "in", "year_min": 2010, "year_max": 2010}}  # fmt: skip

    def search(question: str, handling: bool) -> list[Found]:
        return [Found("g", 2010)] if handling else [Found("x", 2016), Found("g", 2010)]

    table = evaluate([row], search)
    by = {(r[0], r[2]): r for r in table}
    assert by[("in", "on")][3:] == ["1.000", "0.0%"]
    assert by[("in", "off")][3:] == ["0.500", "50.0%"]
    assert by[("all", "on")][1] == "1"
