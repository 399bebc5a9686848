"""Pairs mined from a document's own structure."""

from __future__ import annotations

from evidenceqa.adapt.pairs import abstract_pairs, heading_pairs, mine_pairs, question_pairs
from evidenceqa.documents import Document, Paragraph, Section

LONG = "Tranexamic acid reduced blood loss and transfusion after total hip arthroplasty in this randomised trial of adults. "


def _para(text: str) -> Paragraph:
    return Paragraph(text)


def _article() -> Document:
    return Document(
        doc_id="a1",
        title="Tranexamic acid in hip arthroplasty",
        collection="covidqa",
        sections=[
            Section(
                "Abstract",
                [_para("Tranexamic acid lowers transfusion rates after hip arthroplasty in adults.")],
                kind="abstract",
            ),
            Section("Methods", [_para("We enrolled 200 adults " + "undergoing elective surgery " * 5)]),
            Section(
                "Wound infection", [_para("Wound infection was rare " + "in both groups of patients " * 5)]
            ),
            Section("Results", [_para(LONG * 2)]),
        ],
    )


def _medquad(doc_id: str = "medquad-1") -> Document:
    answer = "Signs and symptoms of the condition include fever, fatigue and bruising " * 2
    return Document(
        doc_id=doc_id,
        title="Adult Acute Lymphoblastic Leukemia",
        collection="medquad",
        sections=[Section("Symptoms", [_para(answer)]), Section("Support groups", [_para(answer)])],
    )


def test_heading_pairs_name_the_title_and_only_topical_headings() -> None:
    queries = [p.query for p in heading_pairs(_article())]
    assert "Tranexamic acid in hip arthroplasty — Wound infection" in queries
    assert "Tranexamic acid in hip arthroplasty" in queries  # "Methods" says nothing, so the title alone
    assert not any("Methods" in q or "Results" in q for q in queries)


def test_short_paragraphs_are_not_passages() -> None:
    # The abstract's one sentence is under 20 words: it can be a query, never a positive.
    assert all(p.positive != _article().sections[0].paragraphs[0].text for p in mine_pairs([_article()]))


def test_abstract_sentence_pairs_with_the_body_paragraph_sharing_most_terms() -> None:
    (pair,) = abstract_pairs(_article())
    assert pair.query.startswith("Tranexamic acid lowers transfusion")
    assert pair.positive == LONG * 2


def test_medquad_question_pairs_use_the_collections_question_for_the_section_type() -> None:
    (pair,) = question_pairs(_medquad())  # "Support groups" has no MedQuAD question
    assert pair.query == "What are the symptoms of Adult Acute Lymphoblastic Leukemia ?"
    assert pair.positive.startswith("Signs and symptoms")
    assert not list(heading_pairs(_medquad()))  # its headings are question types, covered above


def test_question_pairs_are_skipped_for_held_out_documents() -> None:
    pairs = list(mine_pairs([_medquad("medquad-1"), _medquad("medquad-2")], frozenset({"medquad-1"})))
    assert [p.doc_id for p in pairs] == ["medquad-2"]
