"""Mapping questions to the library documents that answer them, in a small real home."""

from __future__ import annotations

from pathlib import Path

from evidenceqa.answer.engine import Engine
from evidenceqa.curation.build import build_candidates
from evidenceqa.curation.extract import Pair, extract_pairs
from evidenceqa.curation.mapping import Mapper
from evidenceqa.documents import Document, Paragraph, Section
from tests.curation.conftest import DVT_PAGE, MDR_TB, load_one


def pair_of(doc: Document, question: str) -> Pair:
    return next(p for p in extract_pairs(doc) if p.question.startswith(question))


def test_the_source_and_another_document_that_answers(engine: Engine, formats_dir: Path) -> None:
    dvt = load_one(formats_dir / DVT_PAGE)
    sources = Mapper(engine.retriever()).sources(pair_of(dvt, "What is (are) Deep Vein Thrombosis?"), dvt)
    own, *others = sources
    assert (own.doc_id, own.relation, own.confidence, own.in_library) == (
        "medquad-8_0000051",
        "source",
        1.0,
        True,
    )
    # The page's own answer opens with the definition: that sentence is the gold passage.
    assert own.passage == (
        "Deep vein thrombosis (throm-BO-sis), or DVT, is a blood clot that forms in a vein deep in the body."
    )
    # MedlinePlus's page on DVT answers it too; the TB and endocarditis pages do not.
    assert [s.doc_id for s in others] == ["medquad-4_0000256"]
    medlineplus = others[0]
    assert medlineplus.relation == "answers" and 0.6 <= medlineplus.confidence < 1
    assert medlineplus.title == "Deep Vein Thrombosis" and medlineplus.section == "Information"
    chunk_bodies = [c.body for c in engine.catalogue.chunks("medquad-4_0000256")]
    assert any(medlineplus.passage in body for body in chunk_bodies)  # exact text: the harness finds it


def test_an_editors_summary_is_answered_from_the_articles_body(engine: Engine, formats_dir: Path) -> None:
    article = load_one(formats_dir / MDR_TB)
    pair = pair_of(article, "Why Was This Study Done?")
    own = Mapper(engine.retriever()).sources(pair, article)[0]
    assert own.doc_id == "doi:10.1371/journal.pmed.1001300" and own.passage
    assert not own.section.startswith("Editors' Summary")  # the evidence, not the summary quoting it
    assert own.passage not in pair.answer


def test_a_cited_doi_and_a_source_outside_the_library(engine: Engine) -> None:
    review = Document(
        doc_id="file:tb-faq",
        title="Tuberculosis questions",
        sections=[Section("Are the regimens for MDR-TB known to work?", [Paragraph(
            "Treatment success was associated with later generation quinolones and ethionamide in a "
            "meta-analysis of 9,153 patients (doi:10.1371/journal.pmed.1001300).")])],
    )  # fmt: skip
    own, cited, *_ = Mapper(engine.retriever()).sources(extract_pairs(review)[0], review)
    assert (own.doc_id, own.in_library, own.passage) == ("file:tb-faq", False, None)
    assert (cited.doc_id, cited.relation, cited.confidence) == (
        "doi:10.1371/journal.pmed.1001300",
        "cited",
        0.9,
    )


def test_build_with_mapping_labels_every_pair(engine: Engine, formats_dir: Path) -> None:
    built = list(build_candidates([load_one(formats_dir / DVT_PAGE)], Mapper(engine.retriever())))
    assert len(built) == 7
    assert all(c.sources[0].doc_id == "medquad-8_0000051" and c.sources[0].passage for c in built)
    symptoms = next(c for c in built if c.question == "What are the symptoms of Deep Vein Thrombosis?")
    assert "medquad-4_0000256" in symptoms.gold_doc_ids
    assert (symptoms.metadata.question_type, symptoms.metadata.topic) == (
        "comprehensive", "cardiovascular and thrombosis")  # fmt: skip
