"""Typed text made safe to store and show: what `visible` removes, what it keeps, and `is_plain`."""

from __future__ import annotations

import pytest

from evidenceqa.text.characters import is_plain, visible


@pytest.mark.parametrize(
    ("typed", "stored"),
    [
        ("Ward\u200b round", "Ward round"),  # zero-width space
        ("invoice \u202egnp.exe", "invoice gnp.exe"),  # right-to-left override
        ("a\u2066b\u2069c\u200ed\u200f", "abcd"),  # isolates and marks
        ("\ufeffBOM first", "BOM first"),
        ("NUL\x00 and bell\x07", "NUL  and bell "),  # controls become spaces
        ("tab\tand\nnewline", "tab\tand\nnewline"),  # kept
        ("lone \ud800 surrogate", "lone  surrogate"),
        ("می\u200cخواهم", "می\u200cخواهم"),  # Persian needs the zero-width non-joiner
        ("👩\u200d⚕️ health worker", "👩\u200d⚕️ health worker"),  # an emoji sequence needs the joiner
    ],
)
def test_visible_removes_only_what_hides_or_spoofs(typed: str, stored: str) -> None:
    assert visible(typed) == stored


@pytest.mark.parametrize(
    ("text", "plain"),
    [("ann@example.org", True), ("ánn@exämple.org", True), ("nul\x00@example.org", False),
     ("rlo\u202e@example.org", False), ("zw\u200b@example.org", False), ("two\u2028lines", False)],
)  # fmt: skip
def test_is_plain_refuses_control_format_and_line_characters(text: str, plain: bool) -> None:
    assert is_plain(text) is plain
