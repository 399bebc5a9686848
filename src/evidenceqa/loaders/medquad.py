"""MedQuAD question–answer pages (NIH patient information): one section per answered question.

A page is `<Document id source url><Focus/><FocusAnnotations/><QAPairs><QAPair><Question qtype/>
<Answer/></QAPair>…</QAPairs></Document>`. Answers separate blocks with blank lines; a block that
starts with "- " is a list. The doc_id matches the bundled library's (`medquad-<folder number>_<id>`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from lxml import etree

from evidenceqa.documents import Document, Paragraph, Section, normalize_space
from evidenceqa.loaders import limits
from evidenceqa.loaders.errors import LoadError

# Bump when this loader (or a helper it uses) reads files differently: ingest then reads
# again the files an earlier version read (evidenceqa.loaders.reader_version).
VERSION = 1

LICENSE = "CC BY 4.0 (MedQuAD)"
NO_ANSWERS = "no answers in this MedQuAD page (empty QAPairs or answers removed for copyright)"

_COLLECTION_FOLDER = re.compile(r"^(\d+)_[A-Za-z]")  # "1_CancerGov_QA", "9_CDC_QA"
_NOT_ID = re.compile(r"[^A-Za-z0-9]+")
_BLANK_LINE = re.compile(r"\n\s*\n")
_BULLET = re.compile(r"^-\s+")
_TRAILING_MARKS = re.compile(r"\s*\?(\s*\?)*$")  # "Who is at risk for X? ?" → "…X?"
# A templated question whose subject slot is empty (the page has no Focus): "Who is at risk for ? ?".
_EMPTY_SLOT = re.compile(r"\b(for|of|about|to|prevent|diagnose|causes|is \(are\)|affected by)\?$", re.I)


def load(path: Path) -> Iterator[Document]:
    root = _parse(path)
    pairs = list(root.iter("QAPair"))
    questions = [_question(pair) for pair in pairs]
    sections = [
        Section(heading=question or _question_type(pair), paragraphs=paragraphs)
        for pair, question in zip(pairs, questions, strict=True)
        if (paragraphs := _answer_paragraphs(pair))
    ]
    if not sections:
        raise LoadError(path, NO_ANSWERS)
    focus = _text(root.find("Focus"))
    source = normalize_space(root.get("source") or "")
    yield Document(
        doc_id=medquad_doc_id(path, root.get("id")),
        # A page without a Focus is named by its first real question, else its file name.
        title=focus or next((q for q in questions if q), path.stem),
        authors=[source] if source else [],
        url=normalize_space(root.get("url") or "") or None,
        license=LICENSE,
        topics=_topics(root),
        doc_type="patient-information",
        collection="medquad",
        sections=sections,
        source=str(path),
    )


def medquad_doc_id(path: Path, page_id: str | None) -> str:
    """`medquad-<n>_<id>` for a page in MedQuAD's `<n>_<Name>` folder, else `medquad-<id>`."""
    slug = _NOT_ID.sub("_", page_id or path.stem).strip("_")
    folder = _COLLECTION_FOLDER.match(path.parent.name)
    return f"medquad-{folder.group(1)}_{slug}" if folder else f"medquad-{slug}"


def _parse(path: Path) -> etree._Element:
    # No DTD, no entity expansion, no network: the file is untrusted input.
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
    try:
        root = etree.fromstring(path.read_bytes(), parser)
    except etree.XMLSyntaxError as exc:
        raise LoadError(path, f"not well-formed XML ({exc})") from None
    if root.tag != "Document":
        raise LoadError(path, f"not a MedQuAD page (root element <{root.tag}>)")
    return root


def _question(pair: etree._Element) -> str | None:
    """The question as a heading, or None when it is missing or a template with an empty subject."""
    text = _TRAILING_MARKS.sub("?", _text(pair.find("Question")))
    if not text or _EMPTY_SLOT.search(text):
        return None
    return text[0].upper() + text[1:]


def _question_type(pair: etree._Element) -> str:
    question = pair.find("Question")
    qtype = normalize_space(question.get("qtype") or "") if question is not None else ""
    return qtype.capitalize() or "Answer"


def _answer_paragraphs(pair: etree._Element) -> list[Paragraph]:
    """Blank lines end paragraphs; "- " items within one block stay together as one list paragraph."""
    limits.check("line", pair.sourceline)
    answer = pair.find("Answer")
    raw = "".join(answer.itertext()) if answer is not None else ""
    paragraphs = []
    for block in _BLANK_LINE.split(raw):
        text = normalize_space(block)
        item = _BULLET.sub("", text)
        if item:
            paragraphs.append(Paragraph(item, kind="list" if item != text else "text"))
    return paragraphs


def _text(el: etree._Element | None) -> str:
    return normalize_space("".join(el.itertext())) if el is not None else ""


def _topics(root: etree._Element) -> list[str]:
    groups = (normalize_space(g.text or "") for g in root.iter("SemanticGroup"))
    return list(dict.fromkeys(g for g in groups if g))
