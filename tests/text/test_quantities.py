import json
from pathlib import Path

import pytest

from evidenceqa.text.quantities import Quantity, quantities, unmatched
from evidenceqa.text.sentences import split_sentences

SAMPLE_LIBRARY = Path(__file__).resolve().parents[2] / "data" / "sample" / "library"


def parsed(text: str) -> list[tuple[str, str, str | None, str | None]]:
    return [(q.text, q.value, q.unit, q.direction) for q in quantities(text)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Give cefazolin 2 g IV within 60 min of incision.", [("2 g", "2", "g", None), ("60 min", "60", "min", None)]),
        ("For patients ≥ 120 kg use 3 g.", [("≥ 120 kg", "120", "kg", ">"), ("3 g", "3", "g", None)]),
        ("Keep glucose less than 180 mg/dL", [("less than 180 mg/dL", "180", "mg/dL", "<")]),
        ("for 7 days or more", [("7 days or more", "7", "d", ">")]),
        ("5 milligrams per kilogram", [("5 milligrams per kilogram", "5", "mg/kg", None)]),
        ("1,200 patients; 9,5 and 9.50", [("1,200", "1200", None, None), ("9,5", "9.5", None, None),
                                          ("9.50", "9.5", None, None)]),
        ("80 beats per minute, 5 per cent", [("80 beats per minute", "80", "bpm", None), ("5 per cent", "5", "%", None)]),
        ("24h and 2g", [("24h", "24", "h", None), ("2g", "2", "g", None)]),
    ],
)  # fmt: skip
def test_a_quantity_is_its_number_unit_and_comparator(text: str, expected: list) -> None:
    assert parsed(text) == expected


def test_a_unit_written_once_belongs_to_each_number_of_a_range_or_list() -> None:
    units = [q.unit for q in quantities("2–3 g, then 1, 2 or 4 mg/kg")]
    assert units == ["g", "g", "mg/kg", "mg/kg", "mg/kg"]
    # A threshold keeps its own: the p value is not a percentage.
    assert [q.unit for q in quantities("p < 0.05 and 4.2%")] == [None, "%"]


def test_names_years_and_count_nouns_are_not_units() -> None:
    assert parsed("COVID-19 and IL-6 in the 1990s") == []
    assert parsed("3 patients; a setup to 5 beds") == [("3", "3", None, None), ("5", "5", None, None)]
    assert parsed("a 5-minimum stay") == [("5", "5", None, None)]


def test_a_quantity_locates_its_text() -> None:
    text = "Doses above 2 mg/kg were stopped."
    (q,) = quantities(text)
    assert text[q.start : q.end].strip() == q.text == "above 2 mg/kg"


@pytest.mark.parametrize(
    ("claim", "passage", "wrong"),
    [
        ("Give 2 g.", "cefazolin 2 g IV", []),
        ("Give 2 mg.", "cefazolin 2 g IV", [("2 mg", "2 g")]),
        ("Give 4 mg.", "cefazolin 2 g IV", [("4 mg", None)]),
        ("Give 2 mg.", "cefazolin 2 g IV; see table 2", []),  # a bare 2 may be the dose (units in a header)
        ("Give 2.", "cefazolin 2 g IV", []),
        ("Stop below 120 kg.", "use 3 g at ≥ 120 kg", [("below 120 kg", "≥ 120 kg")]),
        ("Stop at over 120 kg.", "use 3 g at 120 kg or more", []),
        ("Use it at least 2 h before.", "apply 2 hours before incision", []),
    ],
)
def test_unmatched_quantities(claim: str, passage: str, wrong: list[tuple[str, str | None]]) -> None:
    found = unmatched(claim, [passage])
    assert [(str(u.claim), str(u.stated) if u.stated else None) for u in found] == wrong


def spans(text: str, sentences: list[str]) -> list[tuple[int, int]]:
    out, cursor = [], 0
    for sentence in sentences:
        start = text.index(sentence, cursor)
        cursor = start + len(sentence)
        out.append((start, cursor))
    return out


def within_one(q: Quantity, bounds: list[tuple[int, int]]) -> bool:
    start = q.start + (len(q.text) - len(q.text.lstrip()))
    return any(s <= start and start + len(q.text) <= e for s, e in bounds)


def test_no_sentence_boundary_cuts_a_quantity_of_the_sample_library() -> None:
    # The extractive answer quotes whole sentences, so a number is never parted from its unit or
    # comparator as long as the splitter never cuts one.
    paragraphs = [
        p
        for path in sorted(SAMPLE_LIBRARY.glob("*.jsonl"))
        for line in path.read_text(encoding="utf-8").splitlines()
        for section in json.loads(line)["sections"]
        for p in section["paragraphs"]
    ]
    checked, cut = 0, []
    for text in paragraphs:
        bounds = spans(text, split_sentences(text))
        for q in quantities(text):
            checked += 1
            if not within_one(q, bounds):
                cut.append(q.text)
    assert checked > 1000
    assert cut == []
