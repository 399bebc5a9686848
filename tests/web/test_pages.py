"""The pieces the templates are built from: citation markers and the highlighted passage."""

from __future__ import annotations

from evidenceqa.web.pages import cite_parts, highlight


def test_citation_markers_are_split_out_of_the_text() -> None:
    assert cite_parts("Clipping is safer [1]. See [12]") == [
        ("Clipping is safer ", None), ("[1]", 1), (". See ", None), ("[12]", 12), ("", None)
    ]  # fmt: skip
    assert cite_parts("No markers [x].") == [("No markers [x].", None)]


def test_the_passage_is_highlighted_where_it_stands_in_the_body() -> None:
    body = "Background. Shaving increased infection. Clipping did not."
    assert highlight(body, "Shaving increased infection.") == (
        "Background. ", "Shaving increased infection.", " Clipping did not."
    )  # fmt: skip
    assert highlight(body, "Not in the body.") is None
    assert highlight(None, "Shaving") is None  # the chunk has left the library
