"""HTML loader: the three saved BMC Trials article pages, plus hostile and degenerate pages."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evidenceqa.documents import Document
from evidenceqa.loaders import LoadError, load
from evidenceqa.loaders.html import NO_TEXT


@dataclass(frozen=True)
class Page:
    folder: str
    title: str
    doi: str
    year: int
    authors: tuple[str, str, int]  # first, last, count
    nested: tuple[str, str]  # a subsection under a top-level section, as the page nests it
    sentence: str


PAGES = [
    Page(
        "trials_15_1_511",
        "A core outcome set for clinical trials on non-specific low back pain: study protocol for the "
        "development of a core domain set",
        "10.1186/1745-6215-15-511",
        2014,
        ("Alessandro Chiarotto", "Raymond W Ostelo", 19),
        ("Methods/Design", "Delphi round one"),
        "Approximately 90% of patients with LBP are labelled as having non-specific LBP (NSLBP), a "
        "diagnosis based on exclusion of a specific cause or pathology [4].",
    ),
    Page(
        "trials_16_1_19",
        "Application time for postoperative wound dressing following breast augmentation with implants: "
        "study protocol for a randomized controlled trial",
        "10.1186/s13063-014-0529-5",
        2015,
        ("Denise A Mendes", "Lydia M Ferreira", 8),
        ("Methods/Design", "Sample size"),
        "Since 2007, this operation is one of the most frequently performed cosmetic surgeries worldwide.",
    ),
    Page(
        "trials_16_1_2",
        "Effectiveness of a computerized drug-monitoring program to detect and prevent adverse drug events "
        "and medication non-adherence in outpatient ambulatory care: study protocol of a randomized "
        "controlled trial",
        "10.1186/1745-6215-16-2",
        2015,
        ("Alan J Forster", "Robyn Tamblyn", 7),
        ("Methods/design", "Randomization"),
        "Their benefit is commonly reduced by non-adherence, in which patients either do not take or stop "
        "taking the medication as prescribed, or by adverse drug events (ADEs), in which patients "
        "experience side effects of the medications.",
    ),
]
# Reference-list, sidebar and script text that must not reach any paragraph.
NOT_CONTENT = [
    "PubMed Abstract",
    "Publisher Full Text",
    "totext()",
    "Email updates",
    "Keep up to date with the latest news",
    "Viewing options",
    "Share this article",
    "Other articles by authors",
    "BioMed Central Ltd unless otherwise stated",
    "function(",
    "LoadInParent",
]


def _one(path: Path) -> Document | LoadError:
    items = list(load(path))
    assert len(items) == 1
    return items[0]


def _document(path: Path) -> Document:
    item = _one(path)
    assert isinstance(item, Document), item
    return item


def _all_text(doc: Document) -> str:
    return "\n".join(p.text for p in doc.paragraphs())


@pytest.mark.parametrize("page", PAGES, ids=[p.folder for p in PAGES])
def test_bmc_page_metadata(formats_dir: Path, page: Page) -> None:
    path = formats_dir / "html" / "bmc_trials" / page.folder / "fulltext.html"
    doc = _document(path)
    assert (doc.title, doc.doi, doc.year) == (page.title, page.doi, page.year)
    assert doc.doc_id == f"doi:{page.doi}"
    assert (doc.authors[0], doc.authors[-1], len(doc.authors)) == page.authors
    assert doc.doc_type == "journal-article"
    assert doc.collection == "default"
    assert doc.source == str(path)
    assert doc.url and doc.url.startswith("http://www.trialsjournal.com/content/")
    assert doc.license == "http://creativecommons.org/licenses/by/2.0/"  # the page's dc.rights
    assert doc.topics  # the page's keyword list


@pytest.mark.parametrize("page", PAGES, ids=[p.folder for p in PAGES])
def test_bmc_page_sections(formats_dir: Path, page: Page) -> None:
    doc = _document(formats_dir / "html" / "bmc_trials" / page.folder / "fulltext.html")
    top = [s.heading for s in doc.sections]
    assert top[:3] == ["Abstract", "Background", page.nested[0]]
    assert {"Discussion", "Trial status", "Abbreviations"} <= set(top)
    kinds = {path: section.kind for path, section in doc.walk()}
    assert kinds[("Abstract",)] == kinds[("Abstract", "Background")] == "abstract"
    assert kinds[("Background",)] == "body"
    assert page.nested in kinds
    skipped = ("References", "Competing interests", "Authors’ contributions", "Acknowledgements")
    assert not set(top) & set(skipped)


@pytest.mark.parametrize("page", PAGES, ids=[p.folder for p in PAGES])
def test_bmc_page_text(formats_dir: Path, page: Page) -> None:
    doc = _document(formats_dir / "html" / "bmc_trials" / page.folder / "fulltext.html")
    assert any(page.sentence in p.text for p in doc.paragraphs())
    text = _all_text(doc)
    assert not [junk for junk in NOT_CONTENT if junk in text]
    assert "â\x80" not in text  # UTF-8 ("’") read as UTF-8 although the page declares no charset
    assert all(p.text == " ".join(p.text.split()) for p in doc.paragraphs())


def test_not_well_formed_page_loads_without_script_text(tmp_path: Path) -> None:
    path = tmp_path / "hostile.html"
    path.write_bytes(
        b"<html><head><title>Wound care</title><script>alert(1)</script></head><body>"
        b"<div><p>Keep the dressing dry for two days after surgery and change it if it gets wet"
        b"<p>Second <b>bold <i>nested</div> text <script>alert(1)</script> continues"
        b"<ul><li>first item<li>second item</ul><nav>Home | Contact</nav>"
        b"<div class='cookie-banner'>We use cookies</div><table><tr><td>a<td>b</table>"
    )
    doc = _document(path)
    text = _all_text(doc)
    assert "alert(1)" not in text
    assert "cookies" not in text and "Contact" not in text
    assert "Keep the dressing dry for two days after surgery and change it if it gets wet" in text
    assert [p.text for p in doc.paragraphs() if p.kind == "list"] == ["first item", "second item"]
    assert doc.title == "Wound care"
    assert doc.doc_type == "web-page"


@pytest.mark.parametrize(
    ("head", "body", "expected"),
    [
        (b'<meta charset="utf-8">', "Café crème \xff\xfe".encode("latin-1"), "Caf\ufffd cr\ufffdme"),
        (
            b'<meta http-equiv="Content-Type" content="text/html; charset=iso-8859-1">',
            b"\x93caf\xe9\x94",
            "“café”",
        ),
        (b'<meta charset="no-such-codec">', "café".encode(), "café"),
        (b'<meta charset="base64">', "café".encode(), "café"),
        (b"", b"caf\xe9 \x81", "caf\xe9 \ufffd"),
    ],
    ids=["bad-utf8-bytes", "latin1-is-cp1252", "unknown-charset", "not-a-text-codec", "undeclared-not-utf8"],
)
def test_charset(tmp_path: Path, head: bytes, body: bytes, expected: str) -> None:
    path = tmp_path / "page.html"
    filler = b" and enough further words here to make this a readable page of text"
    filler += b" that the loader keeps whole and intact"
    path.write_bytes(b"<html><head>" + head + b"</head><body><p>" + body + filler + b"</p></body></html>")
    assert _all_text(_document(path)).startswith(expected)


def test_nested_headings_abstract_container_and_back_matter(tmp_path: Path) -> None:
    path = tmp_path / "guide.xhtml"
    path.write_text(
        '<?xml version="1.0" encoding="UTF-8"?><!DOCTYPE html><html><head>'
        '<link rel="license noopener" href="https://creativecommons.org/licenses/by/4.0/"></head>'
        "<body><main><h1>Guide</h1>"
        '<div class="abstract"><p>Short summary of the guideline.</p></div><h2>Dosage</h2>'
        "<p>Take one tablet.</p><h3>Children</h3><figure><figcaption>Dose chart</figcaption></figure>"
        "<p>Half a tablet for children under twelve years of age, after meals.</p>"
        "<h2>References</h2><ol><li>Smith J. Tablets. 2001.</li></ol><h3>Extra</h3><p>Ref note</p>"
        "<h2>Related articles</h2><p>Other guides</p><h2>Storage</h2><p>Keep cool and dry.</p>"
        "</main></body></html>",
        encoding="utf-8",
    )
    doc = _document(path)
    assert (doc.title, doc.license) == ("Guide", "https://creativecommons.org/licenses/by/4.0/")
    outline = [(path, s.kind) for path, s in doc.walk()]
    assert outline == [
        (("Abstract",), "abstract"),
        (("Dosage",), "body"),
        (("Dosage", "Children"), "body"),
        (("Storage",), "body"),
    ]
    children = next(s for path, s in doc.walk() if path == ("Dosage", "Children"))
    assert [p.kind for p in children.paragraphs] == ["caption", "text"]
    assert "Smith" not in _all_text(doc) and "Other guides" not in _all_text(doc)


@pytest.mark.parametrize(
    "content",
    [
        b"<html><head><script>var x = 1; alert(1);</script><style>p {}</style></head>"
        b"<body><script>document.write('hi')</script></body></html>",
        b"<html><body>Please log in to continue. <a href='/login'>Log in</a></body></html>",
        b"<html><head><meta http-equiv='refresh' content='0; url=/x'></head><body></body></html>",
    ],
    ids=["only-scripts", "login-stub", "redirect-stub"],
)
def test_no_readable_text(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "stub.html"
    path.write_bytes(content)
    assert _one(path) == LoadError(path, NO_TEXT)


@settings(max_examples=30, deadline=None)
@given(text=st.text(max_size=300))
def test_random_text_never_raises(tmp_path_factory: pytest.TempPathFactory, text: str) -> None:
    path = tmp_path_factory.mktemp("random") / "page.html"
    path.write_bytes(
        f"<!DOCTYPE html><html><head><title>x</title></head><body><p>{text}</p></body></html>".encode(
            "utf-8", errors="surrogatepass"
        )
    )
    item = _one(path)
    if isinstance(item, LoadError):
        assert item.reason == NO_TEXT
    else:
        assert item.word_count() >= 20
