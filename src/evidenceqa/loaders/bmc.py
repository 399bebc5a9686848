"""BioMed Central's native article XML (root <art>, the format BMC used before JATS) → one Document.

Layout: fm (front: bibl metadata, abs abstract), bdy (body: sec/st/p), bm (back: skipped).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from lxml import etree

from evidenceqa.documents import Document, Section, normalize_space, prune
from evidenceqa.loaders import limits
from evidenceqa.loaders.common import clean_doi, file_doc_id, year_from
from evidenceqa.loaders.errors import LoadError
from evidenceqa.loaders.jats import (
    BodyTags,
    Element,
    add_other,
    add_paragraph,
    caption_paragraph,
    cell_text,
    flatten,
    iso_date,
    local,
    parse_xml,
    require_content,
    short,
    top_sections,
    unique,
)
from evidenceqa.loaders.tables import table_paragraph

# Bump when this loader (or a helper it uses) reads files differently: ingest then reads
# again the files an earlier version read (evidenceqa.loaders.reader_version).
VERSION = 1

_SKIP = frozenset({"st", "title", "graphic", "refgrp", "bm"})
_BLOCKS = frozenset({"table", "fig", "list", "suppl"})
_TEXT_HOLDERS = frozenset({"p", "sec", "table", "fig"})
_TAGS = BodyTags(_SKIP, _BLOCKS, _TEXT_HOLDERS)


def load(path: Path) -> Iterator[Document]:
    root, problem = parse_xml(path)
    if local(root) != "art":
        raise LoadError(path, f"not a BMC article (root element <{local(root)}>)")
    _mark_citations(root)
    front = root.find("fm")
    if front is None:
        front = etree.Element("fm")
    bibl = front.find("bibl")
    if bibl is None:
        bibl = etree.Element("bibl")
    doi = clean_doi(bibl.findtext("xrefbib//pubid[@idtype='doi']"))
    date = iso_date(front.find("history/pub/date"))
    doc = Document(
        doc_id=file_doc_id(path, doi),
        title=flatten(bibl.find("title")) or None,
        authors=[name for au in bibl.iterfind("aug/au") if (name := _author(au))],
        year=year_from(bibl.findtext("pubdate")) or year_from(date),
        date=date,
        doi=doi,
        url=f"https://doi.org/{doi}" if doi else normalize_space(bibl.findtext("url") or "") or None,
        license=_license(front.find("cpyrt/note")),
        topics=unique(flatten(k) for k in front.iterfind("kwdg/kwd")),
        doc_type="journal-article",
        journal=normalize_space(bibl.findtext("source") or "") or None,
        sections=prune(_abstract(front.find("abs")) + _body(root.find("bdy"))),
        source=str(path),
    )
    require_content(path, doc, problem, "BMC")
    yield doc


def _mark_citations(root: Element) -> None:
    """<abbrgrp><abbr>1</abbr><abbr>2</abbr></abbrgrp> → "[1,2]", as BMC's own pages print it."""
    for group in list(root.iter("abbrgrp")):
        numbers = ",".join(flatten(abbr) for abbr in group.iter("abbr"))
        tail = group.tail
        group.clear()  # clear() drops the tail too
        group.text, group.tail = f"[{numbers}]", tail


def _author(au: Element) -> str | None:
    if collective := flatten(au.find("cnm")):
        return collective
    surname = flatten(au.find("snm"))
    middle = flatten(au.find("mi")) or _initials(flatten(au.find("mnm")))
    given = " ".join(p for p in (flatten(au.find("fnm")), middle) if p)
    if surname and given:
        return f"{surname}, {given}"
    return surname or given or None


def _initials(names: str) -> str:
    """Middle names as BMC's own pages and citation metadata give them: "de Almeida" → "A"."""
    return "".join(word[0] for word in names.split() if word[0].isupper())


def _license(note: Element | None) -> str | None:
    if note is None:
        return None
    return flatten(note.find("url")) or short(flatten(note))


def _abstract(abs_el: Element | None) -> list[Section]:
    if abs_el is None:
        return []
    abstract = Section(heading="Abstract", kind="abstract")
    for child in abs_el:
        _add(abstract, child)
    if len(abstract.sections) == 1 and not abstract.paragraphs:
        inner = abstract.sections[0]  # BMC wraps the abstract in a <sec> titled "Abstract"
        if (inner.heading or "Abstract").lower() == "abstract":
            abstract.paragraphs, abstract.sections = inner.paragraphs, inner.sections
    return [abstract]


def _body(bdy: Element | None) -> list[Section]:
    return top_sections(bdy, _add) if bdy is not None else []


def _add(section: Section, el: Element) -> None:
    limits.check("line", el.sourceline)
    name = local(el)
    if not name or name in _SKIP:
        return
    if name == "sec":
        sub = Section(heading=flatten(el.find("st")) or None)
        for child in el:
            _add(sub, child)
        section.sections.append(sub)
    elif name == "p":
        add_paragraph(section, el, _TAGS, _add)
    elif name in ("table", "fig"):
        label = flatten(el.find("title")) or ("Figure" if name == "fig" else "Table")
        caption = caption_paragraph(label, [flatten(el.find("caption")), flatten(el.find("text"))])
        table = (
            table_paragraph(el, cell_text, caption.text if caption else label) if name == "table" else None
        )
        if found := table or caption:
            section.paragraphs.append(found)
    else:
        add_other(section, el, _TAGS, _add)
