"""JATS / NLM XML articles (PMC, PLOS, BMC, Hindawi) → one Document.

Also home of the XML helpers the BMC loader shares: secure parsing, namespace-blind names, text
flattening, caption and section tidying.
"""

from __future__ import annotations

import datetime
import html.entities
import re
import textwrap
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypeAlias

from lxml import etree

from evidenceqa.documents import Document, Paragraph, Section, normalize_space, prune
from evidenceqa.loaders import limits
from evidenceqa.loaders.common import clean_doi, file_doc_id, year_from
from evidenceqa.loaders.errors import LoadError
from evidenceqa.loaders.tables import table_paragraph

# Bump when this loader (or a helper it uses) reads files differently: ingest then reads
# again the files an earlier version read (evidenceqa.loaders.reader_version).
VERSION = 1

Element: TypeAlias = etree._Element
XLINK_HREF = "{http://www.w3.org/1999/xlink}href"

# Furniture around the text, never text itself.
_SKIP = frozenset(
    {"title", "label", "caption", "object-id", "graphic", "media", "alternatives", "table", "tex-math"}
    | {"ref-list", "fn-group", "fn", "glossary", "supplementary-material", "table-wrap-foot", "sec-meta"}
)
# Blocks that may sit inside a <p> but become paragraphs or sections of their own.
_BLOCKS = frozenset(
    {"list", "fig", "fig-group", "table-wrap", "table-wrap-group", "boxed-text", "disp-quote"}
)
# An unknown element holding any of these is a wrapper (disp-quote, fig-group, app): look inside.
_TEXT_HOLDERS = frozenset({"p", "sec", "list", "fig", "table-wrap", "boxed-text"})
# Elements whose text must not run into its neighbours' ("Methods" + "We" ≠ "MethodsWe").
_SPACED = frozenset(
    {"p", "title", "label", "list-item", "caption", "td", "th", "break", "sec", "st", "def", "term"}
)
# One-line blurbs for tables of contents: the abstract only when there is no real one.
_TEASERS = frozenset({"toc", "teaser", "graphical"})
_NESTED = frozenset({"contrib-group"})  # a collab's member list is not part of its name
# Preference order of <pub-date> kinds: the online date is the one readers cite.
_DATE_RANK = {"epub": 0, "ppub": 1, "pub": 2, "collection": 3}


# ---- shared XML helpers -------------------------------------------------------------------


def parse_xml(path: Path) -> tuple[Element, str | None]:
    """The root element, parsed without DTDs, entity expansion or network, and the strict parser's
    complaint (None when well-formed). Local damage is recovered from; truncation is an error,
    because a recovered half-article would be ingested as if it were whole."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise LoadError(path, f"cannot be read ({exc})") from None
    try:
        return _parse(data, recover=False), None
    except etree.XMLSyntaxError as exc:
        problem = exc.msg or str(exc)
    try:
        root = _parse(data, recover=True)
    except etree.XMLSyntaxError:
        root = None
    if root is None or not _ends_with(data, local(root)):
        raise LoadError(path, f"truncated or malformed XML: {problem}")
    return root, problem


def _parse(data: bytes, recover: bool) -> Element:
    parser = etree.XMLParser(
        resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False, recover=recover
    )
    return etree.fromstring(data, parser)


def _ends_with(data: bytes, root_name: str) -> bool:
    closing = rb"</(?:[\w.-]+:)?" + re.escape(root_name.encode()) + rb"\s*>\s*\Z"
    return re.search(closing, data[-1024:]) is not None


def local(el: Element) -> str:
    """Tag name without namespace; "" for comments, processing instructions and entities."""
    return el.tag.rpartition("}")[2] if isinstance(el.tag, str) else ""


def flatten(el: Element | None, skip: frozenset[str] = frozenset()) -> str:
    """All text below `el` on one line, leaving out the subtrees named in `skip`."""
    if el is None:
        return ""
    parts: list[str] = []
    _collect(el, skip, parts)
    return normalize_space("".join(parts))


def _collect(el: Element, skip: frozenset[str], parts: list[str]) -> None:
    parts.append(el.text or "")
    for child in el:
        name = local(child)
        if isinstance(child, etree._Entity):
            # Unexpanded by design; a standard name ("&nbsp;") still has a known character.
            parts.append(html.entities.html5.get(f"{child.name};", ""))
        elif name == "math":
            parts.append(child.get("alttext", ""))
        elif name and name not in skip:
            spaced = " " if name in _SPACED else ""
            parts.append(spaced)
            _collect(child, skip, parts)
            parts.append(spaced)
        parts.append(child.tail or "")


def outermost(el: Element, names: frozenset[str]) -> Iterator[Element]:
    """The elements named in `names` below `el`, but not those nested inside one of them."""
    for child in el:
        if local(child) in names:
            yield child
        else:
            yield from outermost(child, names)


def join_sentences(parts: Iterable[str]) -> str:
    """Join caption parts as sentences: "Table 1" + "Baseline data" → "Table 1. Baseline data"."""
    text = ""
    for part in filter(None, parts):
        if text:
            text += " " if text[-1] in ".:;!?" else ". "
        text += part
    return text


def caption_paragraph(label: str, parts: list[str]) -> Paragraph | None:
    """A figure or table as its label and caption; None when there is no caption to show."""
    parts = [p for p in parts if p]
    return Paragraph(join_sentences([label, *parts]), kind="caption") if parts else None


def iso_date(el: Element | None) -> str | None:
    """ISO date from an element with numeric <year>, <month> and <day> children; None if any is off."""
    if el is None:
        return None
    try:
        numbers = [int(el.findtext(f"{{*}}{part}") or "") for part in ("year", "month", "day")]
        return datetime.date(*numbers).isoformat()
    except ValueError:
        return None


def top_sections(container: Element, add: Callable[[Section, Element], None]) -> list[Section]:
    """Top-level sections in reading order; text outside any section goes to untitled sections."""
    sections: list[Section] = []
    loose: Section | None = None
    for child in container:
        holder = Section(heading=None)
        add(holder, child)
        if holder.paragraphs:
            if loose is None:
                loose = Section(heading=None)
                sections.append(loose)
            loose.paragraphs.extend(holder.paragraphs)
        if holder.sections:
            sections.extend(holder.sections)
            loose = None
    return sections


def require_content(path: Path, doc: Document, problem: str | None, fmt: str) -> None:
    """Refuse a document with nothing to read, saying whether the file or the article is at fault."""
    if doc.sections or (doc.title and problem is None):
        return
    if problem:
        raise LoadError(path, f"truncated or malformed XML: {problem}")
    raise LoadError(path, f"no article content (empty {fmt} article)")


def short(text: str) -> str | None:
    return textwrap.shorten(text, 200, placeholder="…") if text else None


def unique(values: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for value in filter(None, values):
        if value.lower() not in seen:
            seen.add(value.lower())
            out.append(value)
    return out


# ---- JATS ---------------------------------------------------------------------------------


def load(path: Path) -> Iterator[Document]:
    root, problem = parse_xml(path)
    if local(root) != "article":
        raise LoadError(path, f"not a JATS article (root element <{local(root)}>)")
    meta = root.find("{*}front/{*}article-meta")
    if meta is None:
        meta = etree.Element("article-meta")
    doi = clean_doi(meta.findtext("{*}article-id[@pub-id-type='doi']"))
    year, date = _pub_date(meta)
    doc = Document(
        doc_id=file_doc_id(path, doi),
        title=flatten(meta.find("{*}title-group/{*}article-title")) or None,
        authors=_authors(meta),
        year=year,
        date=date,
        doi=doi,
        url=_url(meta, doi),
        license=_license(meta),
        topics=_topics(meta),
        doc_type=root.get("article-type") or "journal-article",
        journal=flatten(root.find("{*}front/{*}journal-meta//{*}journal-title")) or None,
        sections=prune(_abstracts(meta) + _body(root)),
        source=str(path),
    )
    require_content(path, doc, problem, "JATS")
    yield doc


def _authors(meta: Element) -> list[str]:
    authors = []
    for contrib in meta.iterfind("{*}contrib-group/{*}contrib"):  # not a collab's members
        if contrib.get("contrib-type") != "author":
            continue
        name = contrib.find("{*}name")
        if name is None:
            name = contrib.find("{*}name-alternatives/{*}name")
        if name is None:
            name = contrib.find("{*}string-name")
        authors.append(_person(name) if name is not None else flatten(contrib.find("{*}collab"), _NESTED))
    return [a for a in authors if a]


def _person(name: Element) -> str:
    surname = flatten(name.find("{*}surname"))
    given = flatten(name.find("{*}given-names"))
    if surname and given:
        return f"{surname}, {given}"
    return surname or given or flatten(name)


def _pub_date(meta: Element) -> tuple[int | None, str | None]:
    dates = sorted(meta.iterchildren("{*}pub-date"), key=_date_rank)
    year = next((y for d in dates if (y := year_from(d.findtext("{*}year")))), None)
    date = next((iso for d in dates if (iso := iso_date(d))), None)
    return year, date


def _date_rank(date: Element) -> int:
    kind = date.get("pub-type") or date.get("date-type") or ""
    if kind == "pub":  # JATS 1.1 says date-type="pub" publication-format="electronic"
        kind = {"electronic": "epub", "print": "ppub"}.get(date.get("publication-format", ""), kind)
    return _DATE_RANK.get(kind, len(_DATE_RANK))


def _url(meta: Element, doi: str | None) -> str | None:
    if doi:
        return f"https://doi.org/{doi}"
    for article_id in meta.iterchildren("{*}article-id"):
        if article_id.get("pub-id-type") in ("pmc", "pmcid") and (pmc := flatten(article_id)):
            return f"https://www.ncbi.nlm.nih.gov/pmc/articles/PMC{pmc.removeprefix('PMC')}/"
    return None


def _license(meta: Element) -> str | None:
    lic = next(meta.iter("{*}license"), None)
    if lic is None:
        return None
    links = [lic.get(XLINK_HREF)] + [e.get(XLINK_HREF) for e in lic.iter("{*}ext-link", "{*}uri")]
    links += [e.text for e in lic.iter("{*}license_ref")]
    link = next((normalize_space(link) for link in links if link and link.strip()), None)
    return link or short(flatten(lic))


def _topics(meta: Element) -> list[str]:
    keywords = [flatten(k) for k in meta.iter("{*}kwd")]
    # The "heading" group names the article genre ("Research Article"), not a topic.
    subjects = [
        flatten(s)
        for group in meta.iter("{*}subj-group")
        if group.get("subj-group-type") != "heading"
        for s in group.iterchildren("{*}subject")
    ]
    return unique(keywords + subjects)


def _abstracts(meta: Element) -> list[Section]:
    """The main abstract (a teaser only when there is nothing else), then summaries."""
    abstracts = list(meta.iterchildren("{*}abstract"))
    main = next((a for a in abstracts if _role(a) == "main"), None)
    if main is None:
        main = next((a for a in abstracts if _role(a) == "teaser"), None)
    sections = [_container(main, "Abstract", "abstract")] if main is not None else []
    for abstract in abstracts:
        if abstract is not main and _role(abstract) != "teaser":
            sections.append(_container(abstract, _summary_heading(abstract), "summary"))
    return sections


def _role(abstract: Element) -> str:
    kind = abstract.get("abstract-type") or ""
    if kind in _TEASERS:
        return "teaser"
    return "summary" if "summary" in kind or "editor" in kind else "main"


def _summary_heading(abstract: Element) -> str:
    if title := _heading(abstract):
        return title
    return "Editors' Summary" if "editor" in (abstract.get("abstract-type") or "") else "Summary"


def _body(root: Element) -> list[Section]:
    body = root.find("{*}body")
    sections = top_sections(body, _add) if body is not None else []
    floats = root.find("{*}floats-group")  # PMC keeps figures and tables out of the body
    if floats is not None:
        sections.append(_container(floats, "Figures and tables", "body"))
    return sections


def _container(el: Element, heading: str | None, kind: str) -> Section:
    section = Section(heading=heading, kind=kind)
    for child in el:
        _add(section, child)
    return section


def _heading(el: Element) -> str | None:
    parts = [flatten(el.find("{*}label")), flatten(el.find("{*}title"))]
    return " ".join(p for p in parts if p) or None


@dataclass(frozen=True)
class BodyTags:
    """The tag vocabulary a format's body walk needs (JATS and BMC name the same things apart)."""

    skip: frozenset[str]  # never text: labels, graphics, references
    blocks: frozenset[str]  # blocks that may sit inside a paragraph: lists, figures, tables
    holders: frozenset[str]  # an unknown element holding one of these is a wrapper to look into


def add_paragraph(
    section: Section, el: Element, tags: BodyTags, add: Callable[[Section, Element], None]
) -> None:
    """A paragraph's own text, then the blocks nested in it, in reading order."""
    if text := flatten(el, tags.skip | tags.blocks):
        section.paragraphs.append(Paragraph(text))
    for block in outermost(el, tags.blocks):
        add(section, block)


def add_other(section: Section, el: Element, tags: BodyTags, add: Callable[[Section, Element], None]) -> None:
    """An element no rule names: look inside a wrapper, else keep its text, so no body text is lost."""
    if any(local(d) in tags.holders for d in el.iterdescendants()):
        for child in el:
            add(section, child)
    elif text := flatten(el, tags.skip):
        section.paragraphs.append(Paragraph(text))


_TAGS = BodyTags(_SKIP, _BLOCKS, _TEXT_HOLDERS)


def _add(section: Section, el: Element) -> None:
    """Put what `el` holds into `section`: text as paragraphs, sections and boxes as subsections."""
    limits.check("line", el.sourceline)
    name = local(el)
    if not name or name in _SKIP:
        return
    if name == "sec":
        section.sections.append(_container(el, _heading(el), "body"))
    elif name == "boxed-text":
        section.sections.append(_box(el))
    elif name == "p":
        add_paragraph(section, el, _TAGS, _add)
    elif name == "list":
        items = (flatten(item) for item in el.iterchildren("{*}list-item"))
        section.paragraphs.extend(Paragraph(text, kind="list") for text in items if text)
    elif name == "table-wrap" and (table := _table(el)):
        section.paragraphs.append(table)
    elif name in ("fig", "table-wrap"):
        if caption := _caption(el, "Figure" if name == "fig" else "Table"):
            section.paragraphs.append(caption)
    else:
        add_other(section, el, _TAGS, _add)


def _box(el: Element) -> Section:
    caption = el.find("{*}caption")
    heading = _heading(el) or (_heading(caption) if caption is not None else None)
    box = _container(el, heading, "box")
    if box.heading is None and len(box.sections) == 1 and not box.paragraphs:
        inner = box.sections[0]  # PLOS wraps a box's content in one titled <sec>
        box.heading, box.paragraphs, box.sections = inner.heading, inner.paragraphs, inner.sections
    box.heading = box.heading or "Box"
    return box


def _table(el: Element) -> Paragraph | None:
    """A table-wrap's table, captioned and with its footnotes; None for one given only as an image."""
    table = el.find(".//{*}table")
    if table is None:
        return None
    caption = _caption(el, "Table")
    foot = el.find("{*}table-wrap-foot")
    notes = [flatten(p) for p in foot.iter("{*}p")] if foot is not None else []
    label = caption.text if caption else flatten(el.find("{*}label")) or None
    return table_paragraph(table, cell_text, label, notes)


def cell_text(cell: Element) -> str:
    """A table cell's text, without its footnote markers ("39.1" not "39.1c")."""
    return flatten(cell, frozenset({"xref"}))


def _caption(el: Element, default_label: str) -> Paragraph | None:
    label = flatten(el.find("{*}label")) or default_label
    caption = el.find("{*}caption")
    parts = [flatten(c) for c in caption if local(c) in ("title", "p")] if caption is not None else []
    return caption_paragraph(label, parts)
