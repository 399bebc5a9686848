"""BMC native XML loader, checked against the HTML pages of the same two Trials articles."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from evidenceqa.documents import Document, normalize_space
from evidenceqa.loaders import LoadError, bmc, load


@dataclass(frozen=True)
class Expected:
    article: str  # folder name under non_jats_bmc_xml/ and html/bmc_trials/
    body_headings: list[str]
    abstract_headings: list[str]
    sentence: str  # from the HTML page's body; must come out whole in one paragraph
    ref_title: str  # from the reference list, which must not reach the text


ARTICLES = [
    Expected(
        "trials_16_1_19",
        ["Background", "Methods/Design", "Discussion", "Trial status", "Abbreviations"],
        ["Background", "Methods/Design", "Discussion", "Trial registration"],
        "Furthermore, the dressing covers unsightly operative wounds, thereby improving the psychological "
        "wellbeing of the patient [26],[27].",
        "Benchmarking outcomes in plastic surgery: national complication rates for abdominoplasty",
    ),
    Expected(
        "trials_16_1_2",
        ["Background", "Methods/design", "Discussion", "Trial status", "Abbreviations"],
        ["Background", "Methods/design", "Discussion", "Trial registration"],
        "Physicians and pharmacists also supported the system [1,2]. While these results are favorable, a "
        "controlled clinical trial in which patients are randomly assigned to the ISTOP-ADE system or "
        "routine care is required to determine the system’s effectiveness.",
        "Usability of a computerised drug monitoring programme to detect adverse drug events",
    ),
]


@pytest.fixture(scope="session")
def bmc_dir(formats_dir: Path) -> Path:
    return formats_dir / "edge_cases" / "non_jats_bmc_xml"


def html_page(formats_dir: Path, article: str) -> str:
    return (formats_dir / "html" / "bmc_trials" / article / "fulltext.html").read_text(encoding="utf-8")


def meta_values(page: str, name: str) -> list[str]:
    pattern = rf'<meta\s+name="{re.escape(name)}"\s+content="([^"]*)"'
    return [normalize_space(html.unescape(value)) for value in re.findall(pattern, page)]


def page_text(page: str) -> str:
    return normalize_space(html.unescape(re.sub(r"<[^>]+>", "", page)))


def load_one(path: Path) -> Document:
    items = list(load(path))
    assert len(items) == 1 and isinstance(items[0], Document), items
    return items[0]


@pytest.mark.parametrize("expected", ARTICLES, ids=lambda e: e.article)
def test_matches_the_html_page(formats_dir: Path, bmc_dir: Path, expected: Expected) -> None:
    page = html_page(formats_dir, expected.article)
    doc = load_one(bmc_dir / expected.article / "fulltext.xml")
    assert doc.title == meta_values(page, "citation_title")[0]
    assert doc.doi == meta_values(page, "citation_doi")[0]
    assert doc.date == meta_values(page, "citation_date")[0]
    assert doc.year == 2015
    assert doc.authors == meta_values(page, "dc.creator")
    assert doc.doc_id == f"doi:{doc.doi}"
    assert doc.doc_type == "journal-article"
    assert doc.license == "http://creativecommons.org/licenses/by/4.0"


@pytest.mark.parametrize("expected", ARTICLES, ids=lambda e: e.article)
def test_sections_and_text(formats_dir: Path, bmc_dir: Path, expected: Expected) -> None:
    doc = load_one(bmc_dir / expected.article / "fulltext.xml")
    abstract = doc.sections[0]
    assert (abstract.heading, abstract.kind) == ("Abstract", "abstract")
    assert [s.heading for s in abstract.sections] == expected.abstract_headings
    assert [s.heading for s in doc.sections[1:6]] == expected.body_headings
    assert all(s.kind == "body" for s in doc.sections[1:])
    assert any(s.sections for s in doc.sections[1:])  # "Methods/Design" has subsections
    assert expected.sentence in page_text(html_page(formats_dir, expected.article))
    assert [p for p in doc.paragraphs() if expected.sentence in p.text]
    assert not [p for p in doc.paragraphs() if expected.ref_title in p.text]
    assert "Acknowledgements" not in [s.heading for s in doc.sections]  # back matter is skipped


def test_a_table_keeps_its_caption(bmc_dir: Path) -> None:
    doc = load_one(bmc_dir / "trials_16_1_2" / "fulltext.xml")
    tables = [p.text for p in doc.paragraphs() if p.kind == "table"]
    assert [t.split("\n")[0] for t in tables] == [
        "Table 1. Included diseases and drug classes for the ISTOP-ADE study"
    ]
    assert doc.topics[0] == "Patient safety"


def test_truncated_file_is_an_error(bmc_dir: Path, tmp_path: Path) -> None:
    data = (bmc_dir / "trials_16_1_19" / "fulltext.xml").read_bytes()
    path = tmp_path / "fulltext.xml"
    path.write_bytes(data[: len(data) * 40 // 100])
    [error] = list(load(path))
    assert isinstance(error, LoadError)
    assert str(path) in str(error) and error.reason.startswith("truncated or malformed XML: ")


def test_empty_article(tmp_path: Path) -> None:
    path = tmp_path / "fulltext.xml"
    path.write_text("<art><fm><bibl/></fm><bdy/></art>", encoding="utf-8")
    [error] = list(load(path))
    assert isinstance(error, LoadError)
    assert error.reason == "no article content (empty BMC article)"


def test_external_entities_are_never_read(tmp_path: Path) -> None:
    path = tmp_path / "fulltext.xml"
    path.write_text(
        '<!DOCTYPE art [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
        "<art><fm><bibl><title><p>T &x;</p></title></bibl></fm>"
        "<bdy><sec><st><p>Background</p></st><p>Text &x; here.</p></sec></bdy></art>",
        encoding="utf-8",
    )
    doc = load_one(path)
    assert doc.title == "T"
    assert [(s.heading, [p.text for p in s.paragraphs]) for s in doc.sections] == [
        ("Background", ["Text here."])
    ]
    assert doc.doc_id.startswith("file:") and doc.doc_id.endswith("-fulltext")  # folder name kept


def test_other_root_is_not_bmc(tmp_path: Path) -> None:
    path = tmp_path / "article.xml"
    path.write_text("<article><body><p>x</p></body></article>", encoding="utf-8")
    with pytest.raises(LoadError, match="not a BMC article"):
        list(bmc.load(path))
