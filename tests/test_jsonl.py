"""JSONL rows read through a parser: blank lines skipped, a bad line named with the reason."""

import re
from pathlib import Path

import pytest

from evidenceqa.jsonl import json_fingerprint, read_rows


def _year(row: dict) -> int:
    if row["year"] < 1900:
        raise ValueError(f"year {row['year']} is too early")
    return int(row["year"])


def test_rows_are_parsed_in_order_and_blank_lines_skipped(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text('{"year": 2001}\n\n   \n{"year": 2019}\n', encoding="utf-8")
    assert list(read_rows(path, _year, "a year row")) == [2001, 2019]


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("{not json", "Expecting property name"),
        ('{"month": 3}', "'year'"),
        ('{"year": 1200}', "year 1200 is too early"),
    ],
)
def test_a_bad_line_is_named_with_what_it_should_have_been(tmp_path: Path, line: str, reason: str) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text('{"year": 2001}\n' + line + "\n", encoding="utf-8")
    rows = read_rows(path, _year, "a year row")
    assert next(rows) == 2001  # rows before the bad one are read
    with pytest.raises(ValueError, match=rf"rows\.jsonl:2: not a year row \(.*{reason}"):
        next(rows)


def test_a_json_fingerprint_names_the_value_not_its_key_order() -> None:
    first = json_fingerprint({"TXA": "tranexamic acid", "sux": "suxamethonium"})
    assert first == json_fingerprint({"sux": "suxamethonium", "TXA": "tranexamic acid"})
    assert first != json_fingerprint({"TXA": "texas", "sux": "suxamethonium"})
    assert re.fullmatch(r"[0-9a-f]{16}", first)  # sixteen lower-case hex digits, nothing else
