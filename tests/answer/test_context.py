"""The chunks an answer hears beside the ranked evidence, read from the catalogue."""

from __future__ import annotations

from pathlib import Path

import pytest

from evidenceqa.answer.context import announced_list, first_conclusion
from evidenceqa.chunking import ChunkingConfig, chunk_document
from evidenceqa.documents import Chunk, Document, Paragraph, Section
from evidenceqa.library.catalogue import Catalogue
from evidenceqa.retrieval.retriever import SearchResult


def stored(tmp_path: Path, page: Document) -> tuple[Catalogue, list[Chunk]]:
    """A catalogue holding `page`, and its content chunks (one per paragraph, in order)."""
    chunks = chunk_document(page, ChunkingConfig(max_words=40))
    catalogue = Catalogue(tmp_path / "c.sqlite3")
    with catalogue.transaction():
        catalogue.put_document(page, chunks, page.content_hash(), "sig")
    return catalogue, [c for c in chunks if c.hierarchy_level != "document"]


def ranked(chunks: list[Chunk]) -> list[SearchResult]:
    return [SearchResult(rank, chunk, 1.0 / rank, {}) for rank, chunk in enumerate(chunks, 1)]


BACKGROUND = "Trigeminal neuralgia is a chronic pain of the face that radiosurgery can relieve."
AIM = "To test whether treating a longer length of the nerve improves pain relief after radiosurgery."
METHOD = "Eighty-seven patients with trigeminal neuralgia were randomised to one or two isocentres."
RESULT = "Pain relief was complete in 64% of patients with one isocentre and in 60% with two."
CONCLUSION = "A longer length of nerve treated does not improve pain relief but adds numbness."
PARTS = [("Background", BACKGROUND), ("Objective", AIM), ("Methods", METHOD), ("Results", RESULT),
         ("Conclusions", CONCLUSION)]  # fmt: skip
STUDY = Document(doc_id="pubmed-5", title="", sections=[
    Section(heading, [Paragraph(text)]) for heading, text in PARTS])  # fmt: skip


@pytest.mark.parametrize(
    ("found", "yes_or_no", "heard"),
    [
        ([2], False, True),  # its methods only: nothing of it may answer, so its conclusion is heard
        ([1, 2], False, True),  # its aim and methods
        ([0], False, True),  # its background, which says nothing of what it found
        ([3], False, False),  # its results answer a question that is not yes/no
        ([3], True, True),  # a yes/no question hears what the study found as a whole
        ([2, 4], True, False),  # the conclusion was found
    ],
)
def test_the_first_sources_conclusion_is_heard_where_the_answer_needs_it(
    tmp_path: Path, found: list[int], yes_or_no: bool, heard: bool
) -> None:
    catalogue, content = stored(tmp_path, STUDY)
    with catalogue:
        assert [c.body for c in content] == [text for _, text in PARTS]
        context = first_conclusion(ranked([content[i] for i in found]), catalogue, yes_or_no)

    assert [c.body for c in context] == ([CONCLUSION] if heard else [])


def test_a_source_without_a_conclusion_adds_nothing(tmp_path: Path) -> None:
    study = Document(doc_id="pubmed-6", title="", sections=STUDY.sections[:4])
    catalogue, content = stored(tmp_path, study)
    with catalogue:
        assert first_conclusion(ranked(content[2:3]), catalogue, yes_or_no=True) == []


LEAD_IN = (
    "What are the signs and symptoms of Kerion celsi? The Human Phenotype Ontology provides the "
    "following list of signs and symptoms for Kerion celsi."
)
TABLE = (
    "Signs and Symptoms Approximate number of patients (when available) Painful boggy scalp swelling 90% "
    "Hair loss over the swelling 90% Pustules 50% Enlarged neck lymph nodes 50% Fever 7.5% -"
)


FUNGAL = (
    "Kerion celsi is a fungal infection of the scalp that causes a painful boggy swelling with pus and "
    "hair loss, mostly in children, and it is treated with an antifungal medicine by mouth for weeks."
)


@pytest.mark.parametrize(
    ("sections", "ranked_at", "read"),
    [
        ([[LEAD_IN, TABLE]], [0], [1]),  # the lead-in ranked first: the table after it is read
        ([[LEAD_IN, TABLE]], [0, 1], []),  # already ranked
        ([[FUNGAL, TABLE]], [0], []),  # the first announces nothing
        ([[LEAD_IN], [TABLE]], [0], []),  # what follows is another section
    ],
)
def test_a_list_the_first_chunk_announces_is_read_when_the_search_did_not_rank_it(
    tmp_path: Path, sections: list[list[str]], ranked_at: list[int], read: list[int]
) -> None:
    page = Document(doc_id="gard-kerion", title="Kerion celsi", sections=[
        Section(f"Part {n}", [Paragraph(p) for p in paragraphs]) for n, paragraphs in enumerate(sections)])  # fmt: skip
    catalogue, content = stored(tmp_path, page)
    bodies = [p for paragraphs in sections for p in paragraphs]
    with catalogue:
        assert [c.body for c in content] == bodies  # one chunk per paragraph
        listed = announced_list(ranked([content[i] for i in ranked_at]), catalogue)

    assert [c.body for c in listed] == [bodies[i] for i in read]
