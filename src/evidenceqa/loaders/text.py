"""Markdown and plain text: ATX headings (`#`…`######`) make nested sections, blank lines end paragraphs.

Plain text is Markdown without headings. An optional YAML-like front matter block (`---` … `---`)
gives title, year, doi, url, license, authors and topics.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from evidenceqa.documents import Document, Paragraph, Section, normalize_space
from evidenceqa.loaders import limits
from evidenceqa.loaders.common import clean_doi, file_doc_id, year_from
from evidenceqa.loaders.errors import LoadError

# Bump when this loader (or a helper it uses) reads files differently: ingest then reads
# again the files an earlier version read (evidenceqa.loaders.reader_version).
VERSION = 1

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^(```|~~~)")
_LIST_ITEM = re.compile(r"^\s*([-*+]|\d+[.)])\s+")
_FRONT_KEY = re.compile(r"^([A-Za-z_]+):\s*(.*)$")


def load(path: Path) -> Iterator[Document]:
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise LoadError(path, f"not UTF-8 text (invalid byte at offset {exc.start})") from None
    meta, body = _front_matter(text.replace("\r\n", "\n").replace("\r", "\n"))
    title, sections = _parse_body(body)
    if not any(p.text for s in sections for _, sec in s.walk() for p in sec.paragraphs):
        raise LoadError(path, "no text")
    doi = clean_doi(meta.get("doi"))
    yield Document(
        doc_id=meta.get("doc_id") or file_doc_id(path, doi),
        title=meta.get("title") or title,
        authors=_split_list(meta.get("authors")),
        year=year_from(meta.get("year") or meta.get("date")),
        date=meta.get("date"),
        doi=doi,
        url=meta.get("url"),
        license=meta.get("license"),
        topics=_split_list(meta.get("topics")),
        doc_type=meta.get("doc_type") or "document",
        collection=meta.get("collection") or "default",
        sections=sections,
        source=str(path),
    )


def _front_matter(text: str) -> tuple[dict[str, str], str]:
    if not text.startswith("---\n"):
        return {}, text
    end = text.find("\n---", 4)
    if end < 0:
        return {}, text
    meta = {}
    for line in text[4:end].splitlines():
        match = _FRONT_KEY.match(line.strip())
        if match:
            meta[match.group(1).lower()] = match.group(2).strip().strip("\"'")
    return meta, text[end + 4 :].lstrip("-\n")


def _split_list(value: str | None) -> list[str]:
    if not value:
        return []
    return [item.strip().strip("\"'") for item in value.strip("[]").split(";" if ";" in value else ",")]


def _parse_body(body: str) -> tuple[str | None, list[Section]]:
    """Headings nest by level; the first level-1 heading before any text becomes the title."""
    title: str | None = None
    root = Section(heading=None)
    stack: list[tuple[int, Section]] = [(0, root)]
    for kind, level, value in _blocks(body):
        if kind == "heading":
            if level == 1 and title is None and not _has_text(root):
                title = value
                continue
            while stack[-1][0] >= level:
                stack.pop()
            section = Section(heading=value)
            stack[-1][1].sections.append(section)
            stack.append((level, section))
        else:
            stack[-1][1].paragraphs.append(Paragraph(text=value, kind=kind))
    sections = ([root] if root.paragraphs else []) + root.sections
    return title, sections


def _has_text(section: Section) -> bool:
    return any(sec.paragraphs for _, sec in section.walk())


def _blocks(body: str) -> Iterator[tuple[str, int, str]]:
    """(kind, heading level, text) for each heading and paragraph; code fences stay whole."""
    lines: list[str] = []
    in_fence = False
    for number, line in enumerate(body.split("\n"), 1):
        limits.check("line", number)
        if _FENCE.match(line.strip()):
            in_fence = not in_fence
        heading = None if in_fence else _HEADING.match(line)
        if heading or (not in_fence and not line.strip()):
            yield from _paragraph(lines)
            lines = []
            if heading:
                yield "heading", len(heading.group(1)), normalize_space(heading.group(2))
            continue
        lines.append(line)
    yield from _paragraph(lines)


def _paragraph(lines: list[str]) -> Iterator[tuple[str, int, str]]:
    text = normalize_space(" ".join(lines))
    if text:
        yield ("list" if _LIST_ITEM.match(lines[0]) else "text"), 0, text
