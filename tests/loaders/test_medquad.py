"""MedQuAD loader over every file of the shared sample, plus the id scheme and answer splitting."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from evidenceqa.documents import Document
from evidenceqa.loaders import LoadError, load
from evidenceqa.loaders.medquad import LICENSE, NO_ANSWERS, medquad_doc_id

# file → (doc_id, title, sections = answered questions, paragraphs); None: the page has no answers.
PAGES: dict[str, tuple[str, str, int, int] | None] = {
    "10_MPlus_ADAM_QA/0000001.xml": None,  # answers removed for copyright
    "11_MPlusDrugs_QA/0000001.xml": None,  # answers removed for copyright
    "1_CancerGov_QA/0000001_1.xml": ("medquad-1_0000001_1", "Adult Acute Lymphoblastic Leukemia", 7, 23),
    "1_CancerGov_QA/0000005_1.xml": ("medquad-1_0000005_1", "Anal Cancer", 8, 31),
    "2_GARD_QA/0000006.xml": ("medquad-2_0000006", "Abdominal aortic aneurysm", 3, 3),
    "3_GHR_QA/0000001.xml": ("medquad-3_0000001", "Aarskog-Scott syndrome", 5, 5),
    "4_MPlus_Health_Topics_QA/0000001.xml": ("medquad-4_0000001", "A1C", 1, 1),
    "5_NIDDK_QA/0000001.xml": ("medquad-5_0000001", "Acromegaly", 9, 76),
    "5_NIDDK_QA/0000056.xml": None,  # empty <QAPairs>
    "6_NINDS_QA/0000001.xml": ("medquad-6_0000001", "Absence of the Septum Pellucidum", 4, 4),
    "7_SeniorHealth_QA/0000029.xml": ("medquad-7_0000029", "Gum (Periodontal) Disease", 19, 19),
    "8_NHLBI_QA_XML/0000051.xml": ("medquad-8_0000051", "Deep Vein Thrombosis", 7, 112),
    "8_NHLBI_QA_XML/0000056.xml": ("medquad-8_0000056", "Endocarditis", 7, 95),
    "9_CDC_QA/0000003.xml": ("medquad-9_0000003", "Acinetobacter in Healthcare Settings", 5, 6),
    "9_CDC_QA/0000094.xml": ("medquad-9_0000094", "Varicella (Chickenpox) Vaccination", 1, 11),
    "9_CDC_QA/0000199.xml": ("medquad-9_0000199", "How vaccines prevent disease", 4, 4),  # empty <Focus>
    "9_CDC_QA/0000399.xml": ("medquad-9_0000399", "Tuberculosis (TB)", 5, 83),
}


def _one(path: Path) -> Document | LoadError:
    items = list(load(path))
    assert len(items) == 1
    return items[0]


def test_every_sample_file_is_listed(formats_dir: Path) -> None:
    found = {
        str(p.relative_to(formats_dir / "medquad_xml")) for p in (formats_dir / "medquad_xml").rglob("*.xml")
    }
    assert found == set(PAGES)


@pytest.mark.parametrize("name", sorted(PAGES))
def test_page(formats_dir: Path, name: str) -> None:
    path = formats_dir / "medquad_xml" / name
    item = _one(path)
    expected = PAGES[name]
    if expected is None:
        assert item == LoadError(path, NO_ANSWERS)
        return
    assert isinstance(item, Document), item
    doc_id, title, n_sections, n_paragraphs = expected
    assert (item.doc_id, item.title) == (doc_id, title)
    assert (len(item.sections), sum(1 for _ in item.paragraphs())) == (n_sections, n_paragraphs)
    assert (item.collection, item.doc_type, item.license) == ("medquad", "patient-information", LICENSE)
    assert item.authors and item.url and item.url.startswith("http")
    assert all(s.heading and not s.sections and s.paragraphs for s in item.sections)
    assert all(p.text == " ".join(p.text.split()) for p in item.paragraphs())


def test_questions_become_headings(formats_dir: Path) -> None:
    doc = _one(formats_dir / "medquad_xml" / "1_CancerGov_QA" / "0000005_1.xml")
    assert isinstance(doc, Document)
    assert [s.heading for s in doc.sections[:2]] == [
        "What is (are) Anal Cancer?",
        "Who is at risk for Anal Cancer?",
    ]
    assert doc.authors == ["CancerGov"]
    assert doc.topics == ["Disorders"]


def test_empty_focus_page(formats_dir: Path) -> None:
    """0000199 has no Focus: its templated questions lose their subject ("Who is at risk for ? ?")."""
    doc = _one(formats_dir / "medquad_xml" / "9_CDC_QA" / "0000199.xml")
    assert isinstance(doc, Document)
    headings = [
        "How vaccines prevent disease",
        "Susceptibility",
        "Prevention",
        "What diseases are vaccine preventable",
    ]
    assert [s.heading for s in doc.sections] == headings
    assert doc.topics == []  # its <UMLS> block is empty


def test_list_blocks_stay_whole(formats_dir: Path) -> None:
    doc = _one(formats_dir / "medquad_xml" / "5_NIDDK_QA" / "0000001.xml")
    assert isinstance(doc, Document)
    lists = [p.text for p in doc.paragraphs() if p.kind == "list"]
    assert "joint aches - thick, coarse, oily skin - skin tags" in lists[0]
    assert not lists[0].startswith("-")


def test_licence_text_beside_the_pages(formats_dir: Path) -> None:
    """LICENSE.txt is not a MedQuAD page: the dispatcher hands it to the plain-text loader."""
    path = formats_dir / "medquad_xml" / "LICENSE.txt"
    item = _one(path)
    if isinstance(item, LoadError):
        assert item.path == str(path) and item.reason
        return
    assert item.collection != "medquad" and item.doc_id == "file:license"
    assert "Attribution 4.0 International" in " ".join(p.text for p in item.paragraphs())


@pytest.mark.parametrize(
    ("folder", "page_id", "expected"),
    [
        ("1_CancerGov_QA", "0000001_1", "medquad-1_0000001_1"),
        ("9_CDC_QA", "0000003", "medquad-9_0000003"),
        ("medquad", "0000003", "medquad-0000003"),
        ("12_MPlusHerbs_QA", None, "medquad-12_page"),
    ],
)
def test_doc_id_scheme(folder: str, page_id: str | None, expected: str) -> None:
    assert medquad_doc_id(Path(folder) / "page.xml", page_id) == expected


def test_ids_match_the_bundled_library(formats_dir: Path, library_dir: Path) -> None:
    """Loading a page must give the id the library JSONL uses for the same page."""
    with gzip.open(library_dir / "medquad_nih.jsonl.gz", "rt", encoding="utf-8") as lines:
        library_ids = {json.loads(line)["doc_id"] for line in lines}
    answered = {v[0] for v in PAGES.values() if v}
    assert answered <= library_ids


@pytest.mark.parametrize(
    ("xml", "reason"),
    [
        (b"<Document id='1'><QAPairs></QAPairs></Document>", NO_ANSWERS),
        (b"<Document id='1'><QAPairs><QAPair><Question>Q?</Question><Answer> \n </Answer></QAPair>", None),
        (b"<document id='1'><QAPairs/></document>", "not a MedQuAD page (root element <document>)"),
    ],
    ids=["no-pairs", "truncated", "lower-case-root"],
)
def test_bad_pages(tmp_path: Path, xml: bytes, reason: str | None) -> None:
    path = tmp_path / "0000001.xml"
    path.write_bytes(xml)
    item = _one(path)
    assert isinstance(item, LoadError)
    if reason:
        assert item.reason == reason
    else:
        assert item.reason.startswith("not well-formed XML")


def test_external_entities_are_not_read(tmp_path: Path) -> None:
    path = tmp_path / "0000001.xml"
    path.write_bytes(
        b"<?xml version='1.0'?><!DOCTYPE Document [<!ENTITY x SYSTEM 'file:///etc/passwd'>]>"
        b"<Document id='1'><Focus>F</Focus><QAPairs><QAPair><Question>Q?</Question>"
        b"<Answer>before &x; after</Answer></QAPair></QAPairs></Document>"
    )
    doc = _one(path)
    assert isinstance(doc, Document)
    assert [p.text for p in doc.paragraphs()] == ["before &x; after"]
