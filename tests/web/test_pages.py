"""The pieces the templates are built from: citation markers, the highlighted passage, source cards."""

from __future__ import annotations

import re
from types import SimpleNamespace

from evidenceqa.web.library import cited_table
from evidenceqa.web.pages import cite_parts, highlight, templates
from evidenceqa.web.schemas import CitationOut


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


def test_a_source_card_holds_every_cited_passage_of_its_document() -> None:
    def cited(n: int, chunk: str, section: str, text: str) -> CitationOut:
        return CitationOut(n=n, doc_id="pubmed-1", chunk_id=chunk, title=None, year=2011, section=section,
                           text=text, body=f"Before. {text} After.", url="https://pubmed.example/1",
                           label="Journal abstract on Apoptosis", journal=None,
                           doc_type="journal-abstract", doi=None, reference="Apoptosis. 2011. [pubmed-1]")  # fmt: skip

    answer = SimpleNamespace(
        answer_id=7, question="Why do cells die?", filters={}, abstained=False, searched_for=None,
        applied_filters=[], unsupported_sentences=[],
        answer="Cells die [1]. Leaves perforate [2]. Mitochondria move [1].", nearest=[], rating=None,
        feedback_comment=None,
        citations=[cited(1, "p#1", "Background", "Cells die."),
                   cited(1, "p#3", "Results", "Mitochondria move."),
                   cited(2, "q#1", "Results", "Leaves perforate.").model_copy(update={"doc_id": "q", "label": "Leaves"})],
    )  # fmt: skip
    html = templates.env.get_template("_answer.html").module.answer_block(answer)  # type: ignore[attr-defined]
    cards = re.findall(r'<li class="source" id="cite-7-(\d+)"[^>]*>(.*?)</li>', str(html), re.DOTALL)
    assert [n for n, _ in cards] == ["1", "2"]
    first = cards[0][1]
    assert "Journal abstract on Apoptosis" in first and "pubmed-1" not in first
    assert first.count("<blockquote") == 2 and "Background" in first and "Results" in first
    assert "<mark>Mitochondria move.</mark>" in first


def test_an_abstentions_closest_passages_of_one_document_share_a_card() -> None:
    def near(n: int, doc_id: str, text: str) -> CitationOut:
        return CitationOut(n=n, doc_id=doc_id, chunk_id=f"{doc_id}#{text[:4]}", title=doc_id, year=2011,
                           section="Results", text=text, body=text, url=None, label=doc_id.title(),
                           reference=doc_id)  # fmt: skip

    answer = SimpleNamespace(
        answer_id=8, question="OR humidity?", filters={}, abstained=True, searched_for=None, applied_filters=[],
        unsupported_sentences=[], answer="I don't have adequate information.", citations=[], rating=None,
        feedback_comment=None,
        nearest=[near(1, "review", "Humidity was 40%."), near(2, "trial", "Air changes."), near(1, "review", "Dry air.")],
    )  # fmt: skip
    html = str(templates.env.get_template("_answer.html").module.answer_block(answer))  # type: ignore[attr-defined]
    cards = re.findall(r'<li class="source" id="near-8-(\d+)"[^>]*>(.*?)</li>', html, re.DOTALL)
    assert [n for n, _ in cards] == ["1", "2"]
    assert cards[0][1].count("<blockquote") == 2 and "Review" in cards[0][1]


def test_a_cited_table_is_drawn_as_rows_and_columns_with_the_quoted_row_marked() -> None:
    body = "Table 2. Antiemetic doses.\n| Drug | Dose |\n| --- | --- |\n| Ondansetron | 4 mg |\n| Droperidol | 1 mg |"
    table = cited_table(body, "| Droperidol | 1 mg |")
    assert table is not None and table.cited == [1] and table.header == ["Drug", "Dose"]
    assert cited_table("Plain text.", "Plain text.") is None
    citation = CitationOut(n=1, doc_id="d", chunk_id="d#2", title="PONV", year=2020, section="Results",
                           text="| Droperidol | 1 mg |", body=body, url=None, label="PONV", reference="PONV. 2020.",
                           table=table)  # fmt: skip
    answer = SimpleNamespace(
        answer_id=3, question="Droperidol dose?", filters={}, abstained=False, searched_for=None, applied_filters=[],
        unsupported_sentences=[], answer="Droperidol 1 mg [1].", nearest=[], rating=None, feedback_comment=None,
        citations=[citation],
    )  # fmt: skip
    html = str(templates.env.get_template("_answer.html").module.answer_block(answer))  # type: ignore[attr-defined]
    assert (
        '<th scope="col">Drug</th>' in html and "<figcaption>Table 2. Antiemetic doses.</figcaption>" in html
    )
    assert '<tr class="cited"><td><mark>Droperidol</mark></td><td><mark>1 mg</mark></td></tr>' in html
    assert "<tr><td>Ondansetron</td><td>4 mg</td></tr>" in html and "<blockquote" not in html
