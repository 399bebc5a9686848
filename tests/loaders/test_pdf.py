"""The PDF loader on real journal articles (checked against the same articles' JATS XML and publisher
HTML) and on files it must refuse with a clear reason."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lxml import etree, html

from evidenceqa.documents import Document
from evidenceqa.loaders import LoadError, load


@dataclass(frozen=True)
class Article:
    folder: str  # below formats/pdf/; the XML or HTML of the same article sits in the same folder
    headings: tuple[str, ...]
    first_author: str
    sentences: tuple[str, ...]  # copied from the XML/HTML; in the PDF each is broken up in some way
    broken_word: tuple[str, str]  # hyphenated at a line end in the PDF
    reference: str  # from the reference list, which must not be loaded
    caption: str | None = None


ARTICLES = [
    Article(
        "hindawi_epmc/PMC4736379",
        ("1. Introduction", "2. Materials and Methods", "3. Results", "4. Discussion", "5. Conclusion"),
        "Hakan Kocoglu",
        (  # across a column break, the second part starting with "("
            "There were no differences in use of NSAIDs and ASA between group 1 and group 2 (28.4% versus "
            "23.5%, p = 0.225, and 19% versus 13%, p = 0.071, resp.).",
        ),
        ("pop", "ulation"),
        "Risk factors for hospitalized gastrointestinal bleeding among older persons",
        "Table 1: Comparison of patients <65 years",
    ),
    Article(
        "hindawi_epmc/PMC4739218",
        ("1. Introduction", "2. Case Presentation", "3. Discussion", "4. Conclusion"),
        "Kazuhiro Nishida",
        (  # across a page break, with TeX's "c¸" for "ç"; then one with a word hyphenated at a line end
            "Uçkay et al. recommend prolonged antibiotic therapy because of the potential for recurrence [5].",
            "This organism is usually isolated from immunocompromised patients, such as HIV infected "
            "patients, but recent data shows that immunocompetent hosts can also be infected [2, 3].",
        ),
        ("immunocompro", "mised"),
        "Campylobacter cinaedi (sp. nov.)",
    ),
    Article(
        "hindawi_epmc/PMC4745277",
        ("1. Introduction", "2. Observation", "3. Discussion", "Conflict of Interests"),
        "Thomas Pommepuy",
        # across a page break and a full-page table
        ("H. Migaud acts as an Educational and Research Consultant for Tornier and Zimmer.",),
        ("diag", "nosis"),
        "Infection as a cause of primary total hip arthroplasty revision",
        "Figure 1: (a) Preoperative AP view",
    ),
    Article(
        "hindawi_epmc/PMC4745350",
        ("1. Introduction", "2. Case Presentation", "3. Discussion", "4. Conclusion"),
        "Róbert Novotný",
        (  # across a column break
            "This is a report of a high risk 67-year-old male patient with coronary heart disease "
            "(postmyocardial infarction caused by right coronary artery occlusion) with left ventricular "
            "ejection fraction 40%, type 2 diabetes mellitus, renal insufficiency (KDOQI: stage 3a), chronic "
            "obstructive pulmonary disease (GOLD Criteria: stage 2), and arterial hypertension (WHO ll.).",
        ),
        ("recon", "struction"),
        "Open versus endovascular stent graft repair of abdominal aortic aneurysms",
        "Figure 2: Perioperative finding",
    ),
    Article(
        "bmc_trials/trials_16_1_19",
        ("Abstract", "Background", "Methods/Design", "Study aims", "Discussion"),
        "Denise de Almeida Mendes",
        (  # across a column break; then a justified line pdfminer cuts into three text boxes
            "They may multiply and invade tissues to cause infection, depending on their number and "
            "pathogenic interaction with the host immune system [19].",
            "Since 2007, this operation is one of the most frequently performed cosmetic surgeries worldwide.",
        ),
        ("microor", "ganisms"),
        "Management of infected or exposed breast prosthesis",
    ),
    Article(
        "bmc_trials/trials_16_1_2",
        ("Abstract", "Background", "Methods/design", "Randomization", "Discussion"),
        "Alan J Forster",
        (  # across a column break, the second part starting with a capital
            "MOXXI was developed by the McGill University's Clinical and Health Informatics Research Group.",
        ),
        ("medica", "tion"),
        "Usability of a computerised drug monitoring programme",
        "Table 1 Included diseases and drug classes",
    ),
]
IDS = [a.folder.split("/")[1] for a in ARTICLES]
EDGE_CASES = "edge_cases/py-pdf-sample-files"
ERROR_REASONS = ("damaged PDF", "encrypted PDF", "no text layer", "no usable text")


def _plain(text: str) -> str:
    """Lower case, typographic quotes as plain ones, punctuation as spaces: for comparing titles."""
    return " ".join(re.findall(r"\w+", text.replace("’", "'").lower()))


def _truth(formats_dir: Path, folder: str) -> tuple[str, str, int]:
    """DOI, title and year of the same article from its JATS XML or publisher HTML."""
    if folder.startswith("hindawi_epmc/"):
        meta = etree.parse(formats_dir / "jats_xml" / folder / "fulltext.xml").find(".//article-meta")
        title = "".join(meta.find("title-group/article-title").itertext())
        return meta.findtext("article-id[@pub-id-type='doi']"), title, int(meta.findtext("pub-date/year"))
    page = html.fromstring((formats_dir / "html" / folder / "fulltext.html").read_bytes().decode("utf-8"))

    def content(name: str) -> str:
        return page.xpath(f"//meta[@name='{name}']/@content")[0]

    return content("citation_doi"), content("citation_title"), int(content("citation_date")[:4])


@pytest.fixture(scope="module")
def loaded(formats_dir: Path) -> dict[str, list[Document | LoadError]]:
    return {a.folder: list(load(formats_dir / "pdf" / a.folder / "fulltext.pdf")) for a in ARTICLES}


@pytest.fixture
def document(request: pytest.FixtureRequest, loaded: dict[str, list[Document | LoadError]]) -> Document:
    [doc] = loaded[request.param.folder]
    assert isinstance(doc, Document), doc
    return doc


def _paragraph_texts(doc: Document) -> list[str]:
    return [p.text.replace("’", "'") for p in doc.paragraphs()]


@pytest.mark.parametrize(("article", "document"), [(a, a) for a in ARTICLES], ids=IDS, indirect=["document"])
def test_metadata_matches_the_publisher_record(
    formats_dir: Path, article: Article, document: Document
) -> None:
    doi, title, year = _truth(formats_dir, article.folder)
    assert document.doi == doi
    assert document.doc_id == f"doi:{doi.lower()}"
    assert _plain(document.title or "") == _plain(title)
    assert document.year == year
    assert document.authors[0] == article.first_author
    assert (document.doc_type, document.collection) == ("journal-article", "default")
    assert document.source == str(formats_dir / "pdf" / article.folder / "fulltext.pdf")


@pytest.mark.parametrize(("article", "document"), [(a, a) for a in ARTICLES], ids=IDS, indirect=["document"])
def test_sections_follow_the_article_headings(article: Article, document: Document) -> None:
    headings = [path[-1] for path, _ in document.walk() if path]
    assert len(headings) >= 4
    assert set(article.headings) <= set(headings)
    assert not any(re.search(r"references|bibliography", h, re.I) for h in headings)
    kinds = {s.heading: s.kind for _, s in document.walk()}
    assert kinds.get("Abstract", "abstract") == "abstract"


@pytest.mark.parametrize(("article", "document"), [(a, a) for a in ARTICLES], ids=IDS, indirect=["document"])
def test_nothing_is_kept_from_the_reference_list(article: Article, document: Document) -> None:
    assert not any(article.reference.lower() in t.lower() for t in _paragraph_texts(document))


@pytest.mark.parametrize(("article", "document"), [(a, a) for a in ARTICLES], ids=IDS, indirect=["document"])
def test_paragraphs_carry_pages_in_reading_order(article: Article, document: Document) -> None:
    pages = [p.page for p in document.paragraphs()]
    assert len(pages) >= 5
    assert all(isinstance(page, int) and page >= 1 for page in pages)
    assert pages == sorted(pages)


@pytest.mark.parametrize(("article", "document"), [(a, a) for a in ARTICLES], ids=IDS, indirect=["document"])
def test_text_is_whole_across_breaks(article: Article, document: Document) -> None:
    texts = _paragraph_texts(document)
    for sentence in article.sentences:
        assert any(sentence in t for t in texts), sentence
    head, tail = article.broken_word
    assert any(head + tail in t for t in texts)
    assert not any(f"{head}-{tail}" in t or f"{head} {tail}" in t for t in texts)


@pytest.mark.parametrize(("article", "document"), [(a, a) for a in ARTICLES], ids=IDS, indirect=["document"])
def test_captions_are_kept_apart(article: Article, document: Document) -> None:
    # A table read from the layout opens with its caption (tests/loaders/test_pdf_tables.py).
    captions = [p.text.split("\n")[0] for p in document.paragraphs() if p.kind in ("caption", "table")]
    assert all(re.match(r"(Figure|Table) \d", c) for c in captions)
    if article.caption:
        assert any(c.startswith(article.caption) for c in captions)


def test_nested_subsections_and_abstract(loaded: dict[str, list[Document | LoadError]]) -> None:
    [doc] = loaded["bmc_trials/trials_16_1_2"]
    assert isinstance(doc, Document)
    paths = {path for path, _ in doc.walk()}
    assert ("Methods/design", "Instrumentation", "Interview at 21 days") in paths
    assert ("Discussion",) in paths
    abstract = doc.sections[0]
    assert (abstract.heading, abstract.kind) == ("Abstract", "abstract")
    assert abstract.paragraphs[0].text.startswith("Background: Medications are an effective intervention")


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("libreoffice-writer-password.pdf", "encrypted PDF: a password is required to read it"),
        ("grayscale-image.pdf", "no text layer (image-only or scanned PDF; OCR is not supported)"),
        ("imagemagick-CCITTFaxDecode.pdf", "no text layer (image-only or scanned PDF; OCR is not supported)"),
    ],
)
def test_unreadable_pdfs_give_one_clear_error(formats_dir: Path, name: str, reason: str) -> None:
    path = formats_dir / EDGE_CASES / name
    [error] = list(load(path))
    assert isinstance(error, LoadError)
    assert str(error) == f"{path}: {reason}"


def test_a_truncated_pdf_is_damaged(formats_dir: Path, tmp_path: Path) -> None:
    data = (formats_dir / "pdf" / "hindawi_epmc" / "PMC4739218" / "fulltext.pdf").read_bytes()
    path = tmp_path / "truncated.pdf"
    path.write_bytes(data[: len(data) // 2])
    [error] = list(load(path))
    assert isinstance(error, LoadError)
    assert str(error).startswith(f"{path}: damaged PDF: truncated")


def test_garbage_pdf_is_damaged_and_pdfminer_stays_quiet(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "garbage.pdf"
    path.write_bytes(b"%PDF-1.4\n1 0 obj << /Type /Catalog >>\nnonsense\n%%EOF\n")
    with caplog.at_level(logging.WARNING):
        [error] = list(load(path))
    assert isinstance(error, LoadError)
    assert error.reason.startswith("damaged PDF: ")
    assert not [r for r in caplog.records if r.name.startswith("pdfminer")]


def _pdf_with_text(text: str) -> bytes:
    """A one-page PDF whose only content is `text` on one line of 10 pt Helvetica."""
    stream = f"BT /F1 10 Tf 20 700 Td ({text}) Tj ET".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R"
        b" /Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def test_a_few_words_are_no_usable_text(tmp_path: Path) -> None:
    path = tmp_path / "stamp.pdf"
    path.write_bytes(_pdf_with_text("Scanned by the records office"))
    [error] = list(load(path))
    assert isinstance(error, LoadError)
    assert error.reason.startswith("no usable text: only 5 words")


def test_a_plain_pdf_without_doi_is_a_document(tmp_path: Path) -> None:
    sentence = (
        "Wound dressings were changed daily and the surgical site was inspected for signs of infection "
        "by a nurse who did not know the group of the patient."
    )
    path = tmp_path / "notes.pdf"
    path.write_bytes(_pdf_with_text(sentence))
    [doc] = list(load(path))
    assert isinstance(doc, Document)
    assert (doc.doi, doc.doc_type, doc.doc_id, doc.title) == (None, "document", "file:notes", None)
    assert [(s.heading, [(p.text, p.page) for p in s.paragraphs]) for s in doc.sections] == [
        (None, [(sentence, 1)])
    ]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=st.binary(max_size=2000), end=st.sampled_from([b"", b"\n%%EOF\n"]))
def test_random_bytes_after_a_pdf_header_give_a_load_error(tmp_path: Path, body: bytes, end: bytes) -> None:
    path = tmp_path / "random.pdf"
    path.write_bytes(b"%PDF-1.4\n" + body + end)
    [result] = list(load(path))
    assert isinstance(result, LoadError)
    assert result.reason.startswith(ERROR_REASONS)
