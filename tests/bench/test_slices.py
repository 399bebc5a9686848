import pytest

from evidenceqa.bench.retrieval import Question
from evidenceqa.bench.slices import labels, shown_values, slice_scores, year_bin

YEARS = {"old": 2003, "new": 2014, "undated": None}


def _question(gold: list[str], **meta) -> Question:
    return Question("q", "question", gold, [], meta)


@pytest.mark.parametrize(
    ("year", "expected"),
    [(2010, "2010–2014"), (2014, "2010–2014"), (2009, "2005–2009"), (None, "unknown")],
)
def test_year_bins_are_five_years(year, expected):
    assert year_bin(year) == expected


def test_labels_come_from_meta_and_the_first_gold_documents_year():
    question = _question(
        ["new", "old"], question_type="treatment", collection="pubmedqa", periop_surgical=False
    )
    assert labels(question, YEARS.get) == {
        "question_type": "treatment",
        "collection": "pubmedqa",
        "periop_surgical": "False",  # False is a value, not a missing key
        "year": "2010–2014",
    }


def test_a_question_without_a_key_is_in_no_slice_of_it_and_unknown_years_are_unknown():
    assert labels(_question(["undated"]), YEARS.get) == {"year": "unknown"}
    assert labels(_question([]), YEARS.get) == {"year": "unknown"}
    assert labels(_question(["not-in-library"]), YEARS.get) == {"year": "unknown"}


def test_slice_scores_count_questions_and_score_from_first_ranks():
    per_query = [
        {"query_id": "1", "first_document": 1, "first_passage": 2},
        {"query_id": "2", "first_document": 2},
        {"query_id": "3", "first_document": None},
        {"query_id": "4", "first_document": 4},
    ]
    found = [
        {"question_type": "a", "year": "unknown"},
        {"question_type": "a", "year": "2010–2014"},
        {"question_type": "a", "year": "2010–2014"},
        {"question_type": "b", "year": "2000–2004"},
    ]
    slices = slice_scores(per_query, found)
    assert list(slices) == ["question_type", "year"]
    a = slices["question_type"]["a"]
    assert a.questions == 3
    assert a.metrics["document"] == pytest.approx(
        {"MRR@10": 0.5, "Success@1": 1 / 3, "Success@3": 2 / 3, "Success@5": 2 / 3}
    )
    assert a.metrics["passage"] == {
        "MRR@10": 0.5,
        "Success@1": 0.0,
        "Success@3": 1.0,
        "Success@5": 1.0,
    }  # one question has passages
    assert "passage" not in slices["question_type"]["b"].metrics
    assert list(slices["year"]) == ["2000–2004", "2010–2014", "unknown"]  # unknown last
    assert [s.questions for s in slices["year"].values()] == [1, 2, 1]


def test_rows_and_labels_must_line_up():
    with pytest.raises(ValueError):
        slice_scores([{"query_id": "1", "first_document": 1}], [])


def test_a_slice_is_shown_only_with_two_values_of_ten_questions():
    per_query = [{"first_document": 1}] * 25
    many = slice_scores(per_query, [{"question_type": t} for t in ["x"] * 12 + ["y"] * 10 + ["z"] * 3])
    assert shown_values(many["question_type"]) == ["x", "y"]
    one = slice_scores(per_query, [{"question_type": t} for t in ["x"] * 20 + ["y"] * 5])
    assert shown_values(one["question_type"]) == []
