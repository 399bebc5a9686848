"""Pairs found in real publisher files (../shared/data/formats) and in each pattern's own shape."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from evidenceqa.curation.build import build_candidates
from evidenceqa.curation.extract import extract_pairs, is_question
from evidenceqa.documents import Document, Paragraph, Section
from evidenceqa.loaders import iter_files, load
from tests.conftest import SAMPLE
from tests.curation.conftest import DVT_PAGE, MDR_TB, load_one


def by_question(doc: Document) -> dict[str, object]:
    return {pair.question: pair for pair in extract_pairs(doc)}


def test_plos_editors_summary_questions_keep_their_place(formats_dir: Path) -> None:
    pairs = by_question(load_one(formats_dir / MDR_TB))
    title = "Multidrug Resistant Pulmonary Tuberculosis Treatment Regimens and Patient Outcomes"
    # The headings point at their article, so each gets the article's short title to stand alone.
    assert list(pairs) == [
        f"Why Was This Study Done? ({title})",
        f"What Did the Researchers Do and Find? ({title})",
        f"What Do These Findings Mean? ({title})",
    ]
    why = pairs[f"Why Was This Study Done? ({title})"]
    assert why.pattern == "summary"
    assert why.location.section_path == ["Editors' Summary", "Why Was This Study Done?"]
    assert why.location.paragraph_index == 0 and why.location.file.endswith("journal.pmed.1001300.xml")
    assert why.answer.startswith("Although multi-drug resistant tuberculosis (MDR-TB) can be cured")


def test_question_heading_and_question_title_in_a_plos_essay(formats_dir: Path) -> None:
    doc = load_one(formats_dir / "jats_xml/allofplos/journal.pmed.0020007.xml")
    pairs = by_question(doc)
    assert set(pairs) == {
        "Can Mental Exercise Prevent Alzheimer Disease?",
        "What Does the Evidence Show? (Educating the Brain to Avoid Dementia)",
    }
    titled = pairs["Can Mental Exercise Prevent Alzheimer Disease?"]
    assert titled.pattern == "question-title" and titled.location.section_path == ["Abstract"]
    evidence = pairs["What Does the Evidence Show? (Educating the Brain to Avoid Dementia)"]
    assert evidence.pattern == "question-heading"
    # The answer is everything under the heading, its subsections' text included.
    assert evidence.answer.startswith("Three types of evidence are cited")
    assert "Having more years of education has been shown" in evidence.answer


def test_a_question_title_is_answered_by_the_abstracts_conclusion(formats_dir: Path) -> None:
    pairs = by_question(load_one(formats_dir / "jats_xml/hindawi_epmc/PMC4736379/fulltext.xml"))
    pair = pairs["Do NSAIDs and ASA Cause More Upper Gastrointestinal Bleeding in Elderly than Adults?"]
    assert pair.answer.startswith("Using NSAIDs without gastroprotective drugs")
    assert "Purpose." not in pair.answer


def test_medquad_page_questions(formats_dir: Path) -> None:
    pairs = by_question(load_one(formats_dir / DVT_PAGE))
    assert len(pairs) == 7 and {p.pattern for p in pairs.values()} == {"medquad"}
    risk = pairs["Who is at risk for Deep Vein Thrombosis?"]
    assert risk.answer.startswith("The risk factors for deep vein thrombosis (DVT) include:")
    assert risk.location.section_path == ["Who is at risk for Deep Vein Thrombosis?"]
    assert risk.location.section_index == 2


def test_repeated_medquad_questions_are_one_pair_with_the_answers_joined(formats_dir: Path) -> None:
    doc = load_one(formats_dir / "medquad_xml/7_SeniorHealth_QA/0000029.xml")
    pairs = by_question(doc)
    assert len(doc.sections) == 19 and len(pairs) == 7
    what = pairs["What is (are) Gum (Periodontal) Disease?"]
    assert what.location.section_index == 0
    assert what.answer.startswith("An Infection of the Gums") and "Gingivitis is inflammation" in what.answer


def test_a_medquad_page_without_focus_keeps_its_own_questions_only(formats_dir: Path) -> None:
    # No Focus: the loader titles the page by its first question, so no template can be filled.
    pairs = by_question(load_one(formats_dir / "medquad_xml/9_CDC_QA/0000199.xml"))
    assert set(pairs) == {"How vaccines prevent disease", "What diseases are vaccine preventable"}


@pytest.mark.slow
def test_the_whole_formats_folder(formats_dir: Path) -> None:
    docs = [d for f in iter_files([formats_dir]) for d in load(f) if isinstance(d, Document)]
    built = list(build_candidates(docs))
    assert Counter(c.pattern for c in built) == {
        "medquad": 69, "summary": 3, "question-title": 2, "question-heading": 1,
    }  # fmt: skip
    # The Hindawi article is there as JATS and as PDF (same doc_id): its question is asked once.
    nsaids = [c for c in built if c.question.startswith("Do NSAIDs and ASA")]
    assert len(nsaids) == 1 and nsaids[0].location.file.endswith("PMC4736379/fulltext.xml")
    # BMC trial protocols and research articles have no question headings: nothing is invented.
    assert not [c for c in built if c.doc_id.startswith("doi:10.1186/")]
    assert all(c.sources[0].doc_id == c.doc_id and c.sources[0].in_library is None for c in built)


def test_medquad_library_pages_get_medquads_own_question_templates() -> None:
    row = json.loads(
        (SAMPLE / "library" / "medquad_periop.jsonl").read_text(encoding="utf-8").splitlines()[0]
    )
    doc = Document.from_dict(row)
    assert doc.title == "Abdominal aortic aneurysm" and doc.sections[0].heading == "Information"
    pairs = by_question(doc)
    assert "What is (are) Abdominal aortic aneurysm?" in pairs
    assert {p.pattern for p in pairs.values()} == {"medquad-qtype"}


def test_q_and_a_paragraphs_in_a_markdown_faq(tmp_path: Path) -> None:
    faq = tmp_path / "faq.md"
    faq.write_text(
        "# Wound care after surgery\n\n## Frequently asked questions\n\n"
        "Q: When can I shower after surgery?\n\nA: You can shower 48 hours after surgery.\n\n"
        "Keep the dressing dry while you do.\n\n"
        "Question: Should I remove the dressing myself? Answer: No, the nurse removes it on day five.\n\n"
        "Q: Is this paragraph a question without an answer\n\n"
        "It is followed by plain text, so it is not a Q&A.\n",
        encoding="utf-8",
    )
    pairs = by_question(load_one(faq))
    assert set(pairs) == {"When can I shower after surgery?", "Should I remove the dressing myself?"}
    shower = pairs["When can I shower after surgery?"]
    assert shower.pattern == "qa-text"
    assert shower.answer == "You can shower 48 hours after surgery.\n\nKeep the dressing dry while you do."
    assert shower.location.section_path == ["Frequently asked questions"]
    assert shower.location.paragraph_index == 0
    assert pairs["Should I remove the dressing myself?"].answer == "No, the nurse removes it on day five."
    assert pairs["Should I remove the dressing myself?"].location.paragraph_index == 3


def test_a_box_with_a_question_title_in_jats(tmp_path: Path) -> None:
    article = tmp_path / "box.xml"
    article.write_text(
        """<?xml version="1.0"?><article article-type="research-article"><front><article-meta>
        <title-group><article-title>Chlorhexidine skin preparation</article-title></title-group>
        </article-meta></front><body><sec><title>Background</title><p>Skin antisepsis matters.</p>
        <boxed-text><caption><title>Is chlorhexidine safe on mucous membranes?</title></caption>
        <p>No. Chlorhexidine gluconate should not be used on mucous membranes.</p></boxed-text>
        </sec></body></article>""",
        encoding="utf-8",
    )
    (pair,) = extract_pairs(load_one(article))
    assert (pair.question, pair.pattern) == ("Is chlorhexidine safe on mucous membranes?", "box")
    assert pair.location.section_path == ["Background", "Is chlorhexidine safe on mucous membranes?"]
    assert pair.answer == "No. Chlorhexidine gluconate should not be used on mucous membranes."


def test_headings_that_are_not_questions_give_nothing() -> None:
    doc = Document(doc_id="d", title="Results of a trial", sections=[
        Section("Methods", [Paragraph("We randomised 40 patients to two dressings.")]),
        Section("How we did it", [Paragraph("Blinded assessors measured infection at day 30.")]),
    ])  # fmt: skip
    assert extract_pairs(doc) == []


@pytest.mark.parametrize(
    ("text", "lenient", "expected"),
    [
        ("Why Was This Study Done?", False, True),
        ("How we did it", False, False),
        ("How vaccines prevent disease", True, True),
        ("Susceptibility", True, False),
        ("?", False, False),
    ],
)
def test_is_question(text: str, lenient: bool, expected: bool) -> None:
    assert is_question(text, lenient) is expected
