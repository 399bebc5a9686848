"""The document model: what a reader calls a document, whatever its data holds."""

from __future__ import annotations

import json

from evidenceqa.documents import Document, doc_type_name, sha256_text


def test_a_document_is_called_by_its_title_else_by_its_kind_and_topics_or_opening_words() -> None:
    assert Document("d", title="  Hair removal\nbefore surgery ").label() == "Hair removal before surgery"
    pubmed = Document("pubmed-17621202", doc_type="journal-abstract", topics=["Apoptosis", "Mitochondria"])
    assert pubmed.label("ignored") == "Journal abstract on Apoptosis; Mitochondria"
    untitled = Document("scan-7", title=" ")
    opening = "Shaving the incision site immediately before spinal surgery increased the rate of infection."
    assert (
        untitled.label(opening)
        == "Document: “Shaving the incision site immediately before spinal surgery increased the rate of…”"
    )
    assert Document("scan-8").label() == "scan-8"  # nothing else to go by


def test_an_untitled_abstract_is_named_by_what_it_is_about_not_by_who_was_studied_or_how() -> None:
    # PubMed's topics run alphabetically from "Adult", "Aged"; MeSH headings hold commas.
    topics = ["Adult", "Aged", "Antifibrinolytic Agents", "Blood Loss, Surgical", "Double-Blind Method",
              "Humans", "Tranexamic Acid", "Cardiopulmonary Bypass", "Male"]  # fmt: skip
    abstract = Document("pubmed-1", doc_type="journal-abstract", topics=topics)
    assert abstract.label() == (
        "Journal abstract on Antifibrinolytic Agents; Blood Loss, Surgical; Tranexamic Acid; Cardiopulmonary Bypass"
    )
    only_who = Document("pubmed-2", doc_type="journal-abstract", topics=["Humans", "Aged, 80 and over"])
    assert only_who.label() == "Journal abstract on Humans; Aged, 80 and over"  # better than nothing


def test_a_document_type_reads_as_words_and_the_default_as_nothing() -> None:
    assert doc_type_name("journal-abstract") == "Journal abstract"
    assert doc_type_name("patient_information") == "Patient information"
    assert doc_type_name("document") is None and doc_type_name(None) is None


def test_a_document_without_supersessions_hashes_as_before_the_field_existed():
    doc = Document(doc_id="d", title="T")
    payload = doc.to_dict()
    del payload["supersedes"], payload["source"]
    assert doc.content_hash() == sha256_text(json.dumps(payload, sort_keys=True, ensure_ascii=False))
