"""Web pages: publisher article pages and guideline / patient-information pages.

Metadata comes from <meta> tags (Highwire `citation_*`, Dublin Core, Open Graph) before the visible
title. The body is the page's main content with site chrome removed; h2–h6 headings nest sections by
level (h1 is the title). libxml2's tolerant HTML parser reads pages that are not well-formed.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import islice
from pathlib import Path

import lxml.html
from lxml import etree

from evidenceqa.documents import Document, Paragraph, Section, normalize_space, prune
from evidenceqa.loaders import limits
from evidenceqa.loaders.common import clean_doi, file_doc_id, year_from
from evidenceqa.loaders.errors import LoadError
from evidenceqa.loaders.tables import is_data, table_paragraph

# Bump when this loader (or a helper it uses) reads files differently: ingest then reads
# again the files an earlier version read (evidenceqa.loaders.reader_version).
VERSION = 1

NO_TEXT = "no readable text in the HTML page"
_MIN_WORDS = 20  # below this a page is a login wall, redirect stub or empty shell

_META_CHARSET = re.compile(rb"<meta[^>]*?charset\s*=\s*[\"']?\s*([\w.:-]+)", re.I)
_XML_DECL = re.compile(r"^\s*<\?xml[^>]*>")
_CONTROL_CHARS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
_DATE = re.compile(r"(\d{4})(?:[-/](\d{1,2}))?(?:[-/](\d{1,2}))?")
_WORD_SPLIT = re.compile(r"[^a-z0-9]+")

_DROP_TAGS = (
    *("script", "style", "noscript", "nav", "header", "footer", "aside", "form", "button"),
    *("iframe", "svg", "template", "object", "embed", "select", "textarea"),
)
_DROP_ROLES = {"navigation", "banner", "contentinfo", "complementary", "search", "dialog", "alertdialog"}
_CHROME_WORDS = frozenset(
    "nav navbar navigation menu breadcrumb breadcrumbs toc skip cookie cookies consent gdpr popup modal "
    "sidebar share sharing sharethis social related references refs reflist bibliography keywords "
    "comments advert advertisement ads newsletter signup".split()
)
_CONTENT_TAGS = {"html", "body", "main", "article"}
_HEADING_LEVELS = {"h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_PARAGRAPH_KINDS = {
    **dict.fromkeys(("p", "blockquote", "pre", "dt", "dd", "address"), "text"),
    "li": "list",
    **dict.fromkeys(("figcaption", "caption"), "caption"),
}
_CAPTION_WORDS = {"caption", "fig", "figs", "figure", "table"}
_BLOCK_TAGS = frozenset(
    {*_PARAGRAPH_KINDS, *_HEADING_LEVELS, "h1", "hr", "ul", "ol", "dl", "figure", "details", "summary"}
    | {"div", "section", "article", "main", "center", "fieldset"}
    | {"table", "thead", "tbody", "tfoot", "tr", "td", "th"}
)
_ABSTRACT = re.compile(r"^abstract\b", re.I)
_SUMMARY = re.compile(r"^(summary|key points|plain language summary|at a glance)$", re.I)
_SKIPPED = re.compile(
    r"^(references?|bibliography|(works|literature) cited|footnotes|"
    r"competing interests?|conflicts? of interests?|declarations? of (competing )?interests?|"
    r"authors?['’]?s?\s+contributions?|acknowledge?ments?|related (articles|content|links|pages))\b",
    re.I,
)


@dataclass
class _Heading:
    level: int
    text: str | None  # None: a section break (the end of an abstract container)
    kind: str = "body"


def load(path: Path) -> Iterator[Document]:
    root = _parse(path.read_bytes())
    if root is None:
        raise LoadError(path, NO_TEXT)
    meta = _meta_tags(root)
    doi = _doi(meta)
    date = _iso_date(_first(meta, "citation_publication_date", "citation_date", "dc.date", "dcterms.date"))
    title = _title(root, meta)
    topics = _topics(root, meta)
    _strip_chrome(root)
    sections = _sections(_block(_main_content(root)))
    if sum(s.word_count() for s in sections) < _MIN_WORDS:
        raise LoadError(path, NO_TEXT)
    yield Document(
        doc_id=file_doc_id(path, doi),
        title=title,
        authors=meta.get("citation_author") or meta.get("dc.creator") or meta.get("author", []),
        year=year_from(date),
        date=date,
        doi=doi,
        url=_first(meta, "citation_fulltext_html_url", "og:url") or _link(root, "canonical"),
        license=_first(meta, "dc.rights", "dcterms.rights", "dcterms.license", "license")
        or _link(root, "license"),
        topics=topics,
        doc_type="journal-article" if doi or "citation_title" in meta else "web-page",
        journal=_first(meta, "citation_journal_title", "og:site_name"),
        sections=sections,
        source=str(path),
    )


# --- parsing -------------------------------------------------------------------------------------


def _parse(data: bytes) -> lxml.html.HtmlElement | None:
    """The page's element tree, or None when there is nothing to parse."""
    text = _XML_DECL.sub("", _CONTROL_CHARS.sub("", _decode(data)))
    parser = lxml.html.HTMLParser(remove_comments=True, remove_pis=True, no_network=True)
    try:
        root = lxml.html.document_fromstring(text, parser=parser)
    except etree.ParserError:  # "Document is empty"
        return None
    # text_content() joins adjacent elements without a space; blocks and <br> must keep words apart.
    for el in root.iter(*_BLOCK_TAGS, "br"):
        el.text = "\n" + (el.text or "")
        el.tail = "\n" + (el.tail or "")
    return root


def _decode(data: bytes) -> str:
    """Text of the page: BOM, then declared charset, then UTF-8, then Windows-1252 as browsers do."""
    if data.startswith(codecs.BOM_UTF8):
        return data[3:].decode("utf-8", errors="replace")
    declared = _declared_charset(data)
    if declared:
        return data.decode(declared, errors="replace")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("cp1252", errors="replace")


def _declared_charset(data: bytes) -> str | None:
    """The <meta> charset as browsers read it, or None when absent or not a text encoding."""
    match = _META_CHARSET.search(data[:16384])
    if not match:
        return None
    try:
        name = codecs.lookup(match.group(1).decode("ascii")).name
        b" ".decode(name, errors="replace")  # bytes-to-bytes codecs (base64, zlib) fail here
    except LookupError:
        return None
    if name in {"latin-1", "iso8859-1", "ascii"}:
        return "cp1252"  # what such pages really are: curly quotes live in 0x80–0x9F
    return "utf-8" if name.startswith(("utf-16", "utf-32")) else name  # a meta tag can't be UTF-16


# --- metadata ------------------------------------------------------------------------------------


def _meta_tags(root: lxml.html.HtmlElement) -> dict[str, list[str]]:
    """<meta name|property=… content=…> values by lower-cased name, in page order."""
    tags: dict[str, list[str]] = {}
    for meta in root.iter("meta"):
        name = (meta.get("name") or meta.get("property") or "").strip().lower()
        content = normalize_space(meta.get("content") or "")
        if name and content:
            tags.setdefault(name, []).append(content)
    return tags


def _first(meta: dict[str, list[str]], *names: str) -> str | None:
    return next((meta[name][0] for name in names if name in meta), None)


def _doi(meta: dict[str, list[str]]) -> str | None:
    """The first value that is a DOI; dc.identifier also carries PMIDs and URLs."""
    for name in ("citation_doi", "dc.identifier", "dcterms.identifier", "prism.doi"):
        for value in meta.get(name, []):
            doi = clean_doi(re.sub(r"^info:doi/", "", value, flags=re.I))
            if doi and doi.startswith("10."):
                return doi
    return None


def _iso_date(value: str | None) -> str | None:
    match = _DATE.match(value or "")
    if not match:
        return None
    return "-".join(part.zfill(2) for part in match.groups() if part)


def _title(root: lxml.html.HtmlElement, meta: dict[str, list[str]]) -> str | None:
    title = _first(meta, "citation_title", "dc.title", "og:title")
    if title:
        return title
    for heading in root.xpath("//h1[not(ancestor::header or ancestor::nav)] | //title"):
        text = normalize_space(heading.text_content())
        if text:
            return text
    return None


def _topics(root: lxml.html.HtmlElement, meta: dict[str, list[str]]) -> list[str]:
    """Keywords from meta tags, else from the page's keyword list (read before it is stripped)."""
    values = meta.get("citation_keywords", []) + meta.get("keywords", []) + meta.get("dc.subject", [])
    if not values:
        values = [_keyword_text(el) for el in root.iter(etree.Element) if "keywords" in _words(el)][:1]
    topics = (normalize_space(t) for value in values for t in re.split(r"[;,]", value))
    return list(dict.fromkeys(t for t in topics if t))


def _keyword_text(el: lxml.html.HtmlElement) -> str:
    return re.sub(r"^\s*key\s*words?\s*:?", "", el.text_content(), flags=re.I)


def _link(root: lxml.html.HtmlElement, rel: str) -> str | None:
    has_rel = f"contains(concat(' ', normalize-space(@rel), ' '), ' {rel} ')"
    hrefs = (normalize_space(h) for h in root.xpath(f"//link[{has_rel}]/@href | //a[{has_rel}]/@href"))
    return next((h for h in hrefs if h), None)


# --- main content --------------------------------------------------------------------------------


def _words(el: lxml.html.HtmlElement) -> set[str]:
    return set(_WORD_SPLIT.split(f"{el.get('id', '')} {el.get('class', '')}".lower()))


def _text_len(el: lxml.html.HtmlElement) -> int:
    return len(normalize_space(el.text_content()))


def _strip_chrome(root: lxml.html.HtmlElement) -> None:
    """Drop scripts, site chrome and back-matter widgets, keeping any element that holds most of the page."""
    for el in root.xpath("//" + " | //".join(_DROP_TAGS)):
        el.drop_tree()
    half_page = _text_len(root) / 2
    chrome = [
        el
        for el in root.iter(etree.Element)
        if el.tag not in _CONTENT_TAGS
        and ((el.get("role") or "").lower() in _DROP_ROLES or _words(el) & _CHROME_WORDS)
    ]
    for el in chrome:
        if el.getparent() is not None and _text_len(el) < half_page:
            el.drop_tree()


def _main_content(root: lxml.html.HtmlElement) -> lxml.html.HtmlElement:
    """The marked main element (<article>, <main>, role=main) if it holds half the page, narrowed."""
    body = root.find("body")
    page = body if body is not None else root
    marked = max(root.xpath("//article | //main | //*[@role='main']"), key=_text_len, default=None)
    node = marked if marked is not None and 2 * _text_len(marked) >= _text_len(page) else page
    while (child := _dominant_child(node)) is not None:
        node = child
    return node


def _dominant_child(node: lxml.html.HtmlElement) -> lxml.html.HtmlElement | None:
    """A container child with 90% of the text and no heading beside it: the rest is page furniture."""
    total = _text_len(node)
    for child in node.iterchildren(etree.Element):
        if total and _text_len(child) >= 0.9 * total:
            others = [c for c in node.iterchildren(etree.Element) if c is not child]
            headed = any(c.tag in _HEADING_LEVELS or c.xpath(".//h2|.//h3|.//h4|.//h5|.//h6") for c in others)
            contained = child.tag not in _PARAGRAPH_KINDS and child.tag not in _HEADING_LEVELS
            return child if contained and not headed else None
    return None


# --- body ----------------------------------------------------------------------------------------


def _block(el: lxml.html.HtmlElement, abstract: bool = False) -> Iterator[_Heading | Paragraph]:
    tag = el.tag
    if tag in _HEADING_LEVELS:
        text = normalize_space(el.text_content())
        if text:
            yield _Heading(_HEADING_LEVELS[tag], text, _heading_kind(text, abstract))
    elif tag in _PARAGRAPH_KINDS:
        text = normalize_space(el.text_content())
        if text:
            yield Paragraph(text, kind=_paragraph_kind(el))
    elif tag == "table" and is_data(el) and (table := _table(el)):
        yield table
    elif tag == "tr" and not el.xpath(".//p | .//div | .//ul | .//ol | .//table"):
        yield from _row(el)
    elif tag != "h1" and not abstract and "abstract" in _words(el):
        yield from _abstract(el)
    elif tag != "h1":
        yield from _children(el, abstract)


def _children(el: lxml.html.HtmlElement, abstract: bool) -> Iterator[_Heading | Paragraph]:
    """Blocks under `el` in reading order; loose inline text between them becomes a paragraph."""
    run = [el.text or ""]
    for child in el.iterchildren(etree.Element):
        limits.check("line", child.sourceline)
        if _is_inline(child):
            run.append(child.text_content())
        else:
            yield from _loose_text(run)
            yield from _block(child, abstract)
            run = []
        run.append(child.tail or "")
    yield from _loose_text(run)


def _table(table: lxml.html.HtmlElement) -> Paragraph | None:
    """A data table with its <caption>; a table laid out with nested blocks stays as its rows."""
    if table.xpath(".//td//table | .//td//p | .//td//div | .//td//ul"):
        return None
    caption = table.find("caption")
    label = normalize_space(caption.text_content()) if caption is not None else None
    return table_paragraph(table, lambda cell: cell.text_content(), label or None)


def _row(tr: lxml.html.HtmlElement) -> Iterator[Paragraph]:
    """A simple table row is one paragraph, cells joined by " | ", not one paragraph per cell."""
    cells = (normalize_space(cell.text_content()) for cell in tr if cell.tag in ("td", "th"))
    text = " | ".join(cell for cell in cells if cell)
    if text:
        yield Paragraph(text)


def _loose_text(run: list[str]) -> Iterator[Paragraph]:
    text = normalize_space("".join(run))
    if text:
        yield Paragraph(text)


def _is_inline(el: lxml.html.HtmlElement) -> bool:
    return el.tag not in _BLOCK_TAGS and not any(d.tag in _BLOCK_TAGS for d in el.iterdescendants())


def _abstract(el: lxml.html.HtmlElement) -> Iterator[_Heading | Paragraph]:
    """A container marked "abstract": its own section, closed when the container ends."""
    headings = el.xpath(".//h2|.//h3|.//h4|.//h5|.//h6")
    if not any(_ABSTRACT.match(normalize_space(h.text_content())) for h in headings):
        yield _Heading(2, "Abstract", "abstract")
    yield from _children(el, abstract=True)
    yield _Heading(2, None)


def _heading_kind(text: str, abstract: bool) -> str:
    if abstract or _ABSTRACT.match(text):
        return "abstract"
    return "summary" if _SUMMARY.match(text) else "body"


def _paragraph_kind(el: lxml.html.HtmlElement) -> str:
    kind = _PARAGRAPH_KINDS[el.tag]
    near = islice(el.iterancestors(), 3)
    if kind == "text" and any(a.tag == "figure" or _words(a) & _CAPTION_WORDS for a in near):
        return "caption"  # a figure or table title written as a plain <p>
    return kind


def _sections(events: Iterable[_Heading | Paragraph]) -> list[Section]:
    """Nest sections by heading level; back matter (references, interests, thanks) is left out."""
    root = Section(heading=None)
    stack: list[tuple[int, Section]] = [(1, root)]
    skipping: int | None = None  # level of the back-matter section being passed over
    for event in events:
        if isinstance(event, Paragraph):
            if skipping is None:
                stack[-1][1].paragraphs.append(event)
        elif skipping is None or event.level <= skipping:
            skipping = event.level if event.text and _SKIPPED.match(event.text) else None
            if skipping is None:
                _open(stack, event)
    lead = [Section(heading=None, paragraphs=root.paragraphs)] if root.paragraphs else []
    return prune(lead + root.sections)


def _open(stack: list[tuple[int, Section]], heading: _Heading) -> None:
    while stack[-1][0] >= heading.level:
        stack.pop()
    parent = stack[-1][1]
    kind = parent.kind if parent.kind != "body" else heading.kind
    section = Section(heading=heading.text, kind=kind)
    parent.sections.append(section)
    stack.append((heading.level, section))
