"""PDF articles: the text layer, read with pdfminer's layout analysis (no OCR).

Text boxes → rows (one baseline each; the word fragments of widely justified lines merged back) →
reading order (columns, with full-width blocks as separators) → headings, paragraphs and captions →
Sections. Running headers, page numbers, table cells and everything from "References" on are dropped.
The steps up to reading order live in pdf_layout; this module opens the file, reads the metadata and
builds the sections.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from itertools import groupby, takewhile
from pathlib import Path
from typing import Any

from pdfminer.pdfdocument import PDFDocument, PDFEncryptionError
from pdfminer.pdfparser import PDFParser
from pdfminer.pdftypes import resolve1
from pdfminer.utils import decode_text

from evidenceqa.documents import Document, Paragraph, Section, normalize_space
from evidenceqa.loaders.common import clean_doi, file_doc_id
from evidenceqa.loaders.errors import LoadError
from evidenceqa.loaders.limits import LimitExceeded
from evidenceqa.loaders.pdf_layout import BOLD, Row, describe, read_pages
from evidenceqa.loaders.pdf_limits import MB, bounded
from evidenceqa.loaders.pdf_tables import table_paragraph

# Bump when this loader (or a helper it uses) reads files differently: ingest then reads
# again the files an earlier version read (evidenceqa.loaders.reader_version).
VERSION = 1

# pdfminer warns about every odd object in real-world files; none of it is ours to act on.
logging.getLogger("pdfminer").setLevel(logging.ERROR)

_MIN_WORDS = 20
DEFAULT_MAX_BYTES = 200 * MB  # when called on its own; the dispatcher passes the max_file_mb setting
_ENCRYPTED = "encrypted PDF: a password is required to read it"
_ITALIC = re.compile(r"italic|oblique|-It$|\.I$", re.I)
_CAPTION = re.compile(r"^(?:Figure|FIGURE|Fig\.|Table|TABLE|Box)\s+S?\d+[A-Za-z]?(?P<sep>[.:|])?(?:\s|$)")
_TOP_HEADING = re.compile(  # names that head a top-level section whatever their typography
    r"^(?:\d+\.?\s+)?(?:abstract|summary|background|introduction|(?:materials and )?methods?(?:/design)?"
    r"|results|discussion|conclusions?|case (?:presentation|reports?)|trial status|abbreviations"
    r"|competing interests|conflicts? of interests?|authors?['’] contributions|acknowledge?ments?"
    r"|author details|funding|consent|references|bibliography)$",
    re.I,
)
_REFERENCES = re.compile(r"^(?:\d+\.?\s*)?(?:references|bibliography|literature cited|works cited)$", re.I)
_NUMBERED = re.compile(r"^(\d+(?:\.\d+)*)\.?\s+\D")
_BOILERPLATE = re.compile(
    r"^(?:\*\s*)?(?:correspondence|©|copyright|received\b|academic editor|full list of author information)",
    re.I,
)
_WORD = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)*")
_DOI = re.compile(r"\b10\.\d{4,9}/[^\s\"<>]+")
_CITE_DOI = re.compile(
    r"(10\.\d{4,9}/\S+)\s+Cite this article|Cite this article.{0,400}?(10\.\d{4,9}/\S+)", re.S
)
_DATE_YEARS = [
    re.compile(
        r"Published(?: online)?:?\s+(?:\d{1,2}\s+)?(?:[A-Z][a-z]+\.?\s+)?(?:\d{1,2},?\s+)?((?:19|20)\d\d)"
    ),
    re.compile(r"(?:©|Copyright)\s*(?:©\s*)?((?:19|20)\d\d)"),
    re.compile(r"Accepted:?\s+[^;\n]{0,25}?((?:19|20)\d\d)"),
    re.compile(r"Received:?\s+[^;\n]{0,25}?((?:19|20)\d\d)"),
]
_NAME_PARTICLES = frozenset("de da das do dos van von der den du la le di del y".split())


@dataclass
class _Lexicon:
    """The document's own spellings, to tell whether a hyphen at a line end belongs to the word."""

    words: set[str]
    compounds: set[str]  # hyphenated words

    @classmethod
    def of(cls, rows: list[Row]) -> _Lexicon:
        lexicon, broken = cls(set(), set()), False
        for row in rows:  # in reading order: the pieces of a word broken at a line end are left out
            tokens = _WORD.findall(row.text.lower())
            ends = row.text.endswith("-")
            for token in tokens[int(broken) : len(tokens) - int(ends)]:
                (lexicon.compounds if "-" in token else lexicon.words).add(token)
            broken = ends
        return lexicon

    def keeps_hyphen(self, head: str, tail: str) -> bool:
        """ "long-" + "term" keeps it, "infec-" + "tion" does not."""
        head, tail = head.lower(), tail.lower()
        if f"{head}-{tail}" in self.compounds or head + tail in self.words:
            return f"{head}-{tail}" in self.compounds
        return head in self.words and tail in self.words


@dataclass
class _Unit:
    """A heading, a run of paragraph text or a caption, cut from one text box."""

    kind: str  # heading | text | caption
    rows: list[Row]
    indented: bool = False  # its first line is indented: a paragraph starts here

    @property
    def page(self) -> int:
        return self.rows[0].page


def load(path: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> Iterator[Document]:
    """The one Document of a PDF; LoadError when it is encrypted, damaged, has no text layer, or passes
    a bound (pages, time, or streams inflating past `max_bytes`: pdf_limits)."""
    yield _read(path, max_bytes)  # read whole before yielding: the bounds apply to the reading alone


def _read(path: Path, max_bytes: int) -> Document:
    with bounded(max_bytes):
        try:
            info = _open(path)
            pages = read_pages(path)
        except LimitExceeded as exc:
            raise LoadError(path, f"refused: {exc}") from None
    words = sum(len(r.text.split()) for rows in pages for r in rows)
    if words == 0:
        raise LoadError(path, "no text layer (image-only or scanned PDF; OCR is not supported)")
    if words < _MIN_WORDS:
        raise LoadError(path, f"no usable text: only {words} words in the text layer (OCR is not supported)")
    doc = _document(path, pages, info)
    if not any(p.text.strip() for p in doc.paragraphs()):  # every row was furniture or unreadable
        raise LoadError(path, "no usable text: nothing in the text layer reads as body text")
    return doc


def _open(path: Path) -> dict[str, Any]:
    """The document info dictionary; LoadError when the file is truncated, encrypted or unreadable."""
    with path.open("rb") as raw:
        raw.seek(0, 2)
        raw.seek(max(0, raw.tell() - 4096))
        tail = raw.read()
        if b"%%EOF" not in tail:
            raise LoadError(path, "damaged PDF: truncated (no %%EOF end marker)")
        raw.seek(0)
        try:
            doc = PDFDocument(PDFParser(raw))
            return {k: resolve1(v) for d in doc.info for k, v in d.items()}
        except PDFEncryptionError:
            raise LoadError(path, _ENCRYPTED) from None
        except LimitExceeded:
            raise
        except Exception as exc:  # pdfminer raises many unrelated types on broken files
            reason = _ENCRYPTED if b"/Encrypt" in tail else f"damaged PDF: {describe(exc)}"
            raise LoadError(path, reason) from None


def _document(path: Path, pages: list[list[Row]], info: dict[str, Any]) -> Document:
    rows = [r for page in pages for r in page]
    body = _body_style(rows)
    lexicon = _Lexicon.of(rows)
    texts = ["\n".join(r.text for r in page) for page in pages]
    title_rows = _title_rows(pages[0], body[1])
    author_rows = _author_rows(pages[0], title_rows, body[1])
    front = author_rows or title_rows
    start = _index(rows, front[-1]) + 1 if front else 0  # banners above the title are no content
    doi = _doi(texts, info)
    return Document(
        doc_id=file_doc_id(path, doi),
        title=_title(info, [r.text for r in title_rows], texts[0], lexicon),
        authors=_authors(author_rows),
        year=_year("\n".join(texts), info),
        doi=doi,
        doc_type="journal-article" if doi else "document",
        collection="default",
        sections=_Builder(body[1], lexicon, pages).build(_units(rows[start:], body)),
        source=str(path),
    )


def _body_style(rows: list[Row]) -> tuple[str, float]:
    """The (font, size) most of the text is set in."""
    weights: Counter[tuple[str, float]] = Counter()
    for row in rows:
        weights[row.style] += len(row.text)
    return weights.most_common(1)[0][0]


def _index(rows: list[Row], row: Row) -> int:
    return next(i for i, r in enumerate(rows) if r is row)


def _title_rows(rows: list[Row], body_size: float) -> list[Row]:
    """Page 1's largest text of a few words, in the first half of the page's text."""
    rows = rows[: (len(rows) + 1) // 2]
    for size in sorted({r.size for r in rows if r.size >= body_size + 1}, reverse=True):
        title = _rows_at(rows, size)
        if 3 <= sum(len(r.text.split()) for r in title) <= 50:
            return title
    return []


def _rows_at(rows: list[Row], size: float) -> list[Row]:
    """The rows at `size` from the first one in its main font on: an article-type label set above
    the title in another font is no title, an italic species name inside it is."""
    fonts: Counter[str] = Counter()
    for row in rows:
        fonts[row.font] += len(row.text) if row.size == size else 0
    start = next(i for i, r in enumerate(rows) if r.style == (fonts.most_common(1)[0][0], size))
    return list(takewhile(lambda r: r.size == size, rows[start:]))


def _author_rows(rows: list[Row], title: list[Row], body_size: float) -> list[Row]:
    """The rows right after the title in one style a little larger than the body text."""
    after = rows[_index(rows, title[-1]) + 1 :] if title else []
    if not after or after[0].size < body_size + 0.5 or _TOP_HEADING.match(after[0].text):
        return []
    return list(takewhile(lambda r: r.style == after[0].style, after))[:4]


def _authors(rows: list[Row]) -> list[str]:
    """Names from the author rows, affiliation marks removed; nothing unless every name looks like one."""
    text = re.sub(r"[\d*†‡§¶#]+", " ", " ".join(r.text for r in rows))
    names = [n for n in (normalize_space(n) for n in re.split(r",|;|&|\band\b", text)) if n]
    return names if all(map(_is_name, names)) else []


def _is_name(text: str) -> bool:
    words = text.split()
    capitalised = all(w[0].isupper() or w in _NAME_PARTICLES for w in words)
    return 2 <= len(words) <= 6 and capitalised and not re.search(r"[\d@:()/]", text)


def _title(info: dict[str, Any], lines: list[str], page1: str, lexicon: _Lexicon) -> str | None:
    """The info /Title when it is real (printed on page 1), else the largest text on page 1."""
    meta = _info_text(info, "Title")
    if meta and len(meta.split()) >= 3 and _words(meta) in _words(page1):
        return meta
    return _join_lines(lines, lexicon) or None


def _words(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.lower()))


def _info_text(info: dict[str, Any], key: str) -> str | None:
    value = info.get(key)
    if isinstance(value, bytes):
        value = decode_text(value)
    return normalize_space(value) or None if isinstance(value, str) else None


def _doi(texts: list[str], info: dict[str, Any]) -> str | None:
    """The article's DOI: printed on the first pages, in the info dictionary, or by "Cite this article"."""
    meta = " ".join(t for k in info if (t := _info_text(info, k)))
    found = _DOI.search("\n".join(texts[:2])) or _DOI.search(meta)
    if found:
        return _clean_doi(found[0])
    cited = _CITE_DOI.search("\n".join(texts))
    return _clean_doi(cited[1] or cited[2]) if cited else None


def _clean_doi(raw: str) -> str | None:
    doi = raw.rstrip(".,;:]}'\"’”")
    while doi.endswith(")") and doi.count(")") > doi.count("("):
        doi = doi[:-1]
    return clean_doi(doi)


def _year(text: str, info: dict[str, Any]) -> int | None:
    """Publication year: "Published", then ©, then acceptance or receipt, then the file's creation."""
    for pattern in _DATE_YEARS:
        if found := pattern.search(text):
            return int(found[1])
    created = re.match(r"(?:D:)?((?:19|20)\d\d)", _info_text(info, "CreationDate") or "")
    return int(created[1]) if created else None


def _units(rows: list[Row], body: tuple[str, float]) -> Iterator[_Unit]:
    for _, box in groupby(rows, key=lambda r: (r.page, r.box)):
        yield from _box_units(list(box), body)


def _box_units(rows: list[Row], body: tuple[str, float]) -> Iterator[_Unit]:
    """Cut one box at headings, captions and indented paragraph starts."""
    left, right = min(r.x0 for r in rows), max(r.x1 for r in rows)
    text: list[Row] = []
    i = 0
    while i < len(rows):
        at_break = not text or _ends_sentence(text[-1].text)
        heading = _heading_run(rows, i, body, right) if at_break else None
        caption = at_break and _is_caption(rows[i], body)
        if text and (heading or caption or (at_break and _indented(rows[i], left))):
            yield _Unit("text", text, indented=text[0].x0 - left >= 3)
            text = []
        if heading:
            yield heading
            i += len(heading.rows)
        elif caption:
            yield _Unit("caption", rows[i:])
            return
        else:
            text.append(rows[i])
            i += 1
    if text:
        yield _Unit("text", text, indented=text[0].x0 - left >= 3)


def _heading_run(rows: list[Row], i: int, body: tuple[str, float], right: float) -> _Unit | None:
    """The heading starting at rows[i]: up to three rows of one style, longest first."""
    run = list(takewhile(lambda r: r.style == rows[i].style, rows[i : i + 3]))
    for n in range(len(run), 0, -1):
        nxt = rows[i + n] if i + n < len(rows) else None
        short = run[n - 1].x1 < right - 2 * run[0].size  # a justified body line runs to the margin
        if _is_heading(" ".join(r.text for r in run[:n]), run[0], nxt, body, short):
            return _Unit("heading", run[:n])
    return None


def _is_heading(text: str, first: Row, nxt: Row | None, body: tuple[str, float], short: bool) -> bool:
    letters = sum(c.isalpha() for c in text)
    shaped = (
        len(text.split()) <= 12
        and (text[0].isupper() or text[0].isdigit())
        and not text.endswith((".", ",", ";", ":"))
        and letters >= max(3, 0.6 * len(text.replace(" ", "")))
    )
    if not shaped or _is_caption(first, body):
        return False
    if _TOP_HEADING.match(text) or first.size >= body[1] + 1 or (first.bold and not BOLD.search(body[0])):
        return True
    # a short line in its own font set above text in another: how some journals mark subheadings
    return short and nxt is not None and nxt.style != first.style


def _is_caption(row: Row, body: tuple[str, float]) -> bool:
    found = _CAPTION.match(row.text)
    return found is not None and (found["sep"] is not None or row.style != body)


def _indented(row: Row, left: float) -> bool:
    return 3 <= row.x0 - left <= 40 and not row.text[:1].islower()


def _rank(row: Row) -> tuple[float, bool, bool]:
    """Heading prominence: larger, then bold, then upright before italic."""
    return row.size, row.bold, not _ITALIC.search(row.font)


def _ends_sentence(text: str) -> bool:
    return text.rstrip(")]\"'’”").endswith((".", "!", "?"))


def _join_lines(lines: Iterable[str], lexicon: _Lexicon) -> str:
    """Lines joined with spaces, and a word hyphenated at a line end rejoined."""
    text = ""
    for line in lines:
        head, tail = re.search(r"([^\W\d_]+)-$", text), re.match(r"[^\W\d_]+", line)
        if head and tail and line[0].islower():
            text = text + line if lexicon.keeps_hyphen(head[1], tail[0]) else text[:-1] + line
        elif head:  # "ISTOP-" + "ADE": a compound broken after its hyphen
            text += line
        else:
            text = f"{text} {line}" if text else line
    return text


class _Builder:
    """Sections from units in reading order: nested by heading level, a paragraph continued across a
    column or page break, noise dropped, nothing kept from the references on."""

    def __init__(self, body_size: float, lexicon: _Lexicon, pages: list[list[Row]]) -> None:
        self.body_size = body_size
        self.lexicon = lexicon
        self.pages = pages  # each page's rows, where a table is read from below its caption
        self.sections: list[Section] = []
        self.stack: list[tuple[int, tuple[float, bool, bool], Section]] = []  # open: level, rank
        self.headed = False
        self.table = False  # just past a table caption: small text is its cells and notes
        # the last paragraph in each font size, which a later block may continue; by size, so that
        # table cells and footnotes met in between do not interrupt the body text
        self.open: dict[float, Paragraph] = {}

    def build(self, units: Iterable[_Unit]) -> list[Section]:
        for unit in units:
            text = _join_lines((r.text for r in unit.rows), self.lexicon)
            small = unit.rows[0].size < self.body_size - 0.5
            if self.table and small and unit.kind != "caption":
                continue  # a cell or note of the table just captioned
            self.table = False
            if unit.kind == "heading" and _REFERENCES.match(text):
                break
            if unit.kind == "heading":
                self.heading(text, unit)
            elif unit.kind == "caption":
                self.table = text.lower().startswith("table")
                grid = self.table and table_paragraph(
                    unit.rows, text, self.pages[unit.page - 1], self.body_size
                )
                self.add(
                    replace(grid, page=unit.page) if grid else Paragraph(text, page=unit.page, kind="caption")
                )
            else:
                self.text(text, unit, small)
        return self.sections

    def heading(self, text: str, unit: _Unit) -> None:
        level = self.level(text, _rank(unit.rows[0]))
        section = Section(heading=text, kind="abstract" if text.lower() == "abstract" else "body")
        while self.stack and self.stack[-1][0] >= level:
            self.stack.pop()
        (self.stack[-1][2].sections if self.stack else self.sections).append(section)
        self.stack.append((level, _rank(unit.rows[0]), section))
        self.headed, self.open = True, {}

    def level(self, text: str, rank: tuple[float, bool, bool]) -> int:
        """Numbered headings by their depth, known names at the top; any other heading is the sibling
        of the open heading it is as prominent as, or else the child of the innermost one."""
        numbered = _NUMBERED.match(text)
        if numbered:
            return numbered[1].count(".")
        if _TOP_HEADING.match(text):
            return 0
        child = self.stack[-1][0] + 1 if self.stack else 0
        return next((lvl for lvl, r, _ in self.stack if r <= rank), child)

    def text(self, text: str, unit: _Unit, small: bool) -> None:
        size = unit.rows[0].size
        para = self.open.get(size)
        if para and self.continues(para, text, unit):
            para.text = _join_lines([para.text, text], self.lexicon)
        elif self.keep(text, small):
            self.add(Paragraph(text, page=unit.page))
            self.open[size] = self.stack[-1][2].paragraphs[-1]

    def add(self, para: Paragraph) -> None:
        if not self.stack:  # text before any heading: the abstract of journals that print no heading
            self.sections.append(Section(heading=None))
            self.stack.append((0, (-1.0, False, False), self.sections[-1]))
        self.stack[-1][2].paragraphs.append(para)

    @staticmethod
    def continues(para: Paragraph, text: str, unit: _Unit) -> bool:
        """The paragraph ends mid-sentence and the text starts in lower case or without the indent
        that starts a paragraph."""
        return not _ends_sentence(para.text) and (not text[:1].isupper() or not unit.indented)

    def keep(self, text: str, small: bool) -> bool:
        """Prose only: no table cells, figure labels, affiliations or licence lines."""
        words = len(text.split())
        if _BOILERPLATE.match(text) or words < 3:
            return False
        if not self.headed:
            return words >= _MIN_WORDS and _ends_sentence(text)
        return _ends_sentence(text) or text.endswith((",", ";", ":", "-")) or words >= (25 if small else 8)
