"""Library JSONL (`.jsonl`, `.jsonl.gz`): one document per line, in the shared data's neutral format.

A bad line costs that line only: it comes back as a LoadError naming the line number.
"""

from __future__ import annotations

import gzip
import json
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from evidenceqa.documents import Document
from evidenceqa.loaders.errors import LoadError

_LIST_FIELDS = ("authors", "topics", "sections")
_TEXT_FIELDS = ("title", "date", "doi", "url", "license", "doc_type", "collection", "journal")


def _open(path: Path) -> IO[bytes]:
    with path.open("rb") as raw:
        magic = raw.read(2)
    return gzip.open(path, "rb") if magic == b"\x1f\x8b" else path.open("rb")


def load(path: Path) -> Iterator[Document | LoadError]:
    line_no = 0
    try:
        with _open(path) as stream:
            for line_no, raw in enumerate(stream, start=1):
                if raw.strip():
                    yield _parse_line(path, line_no, raw)
    except (EOFError, OSError, zlib.error) as exc:
        # A truncated .gz: everything before the damage was already yielded.
        yield LoadError(path, f"compressed data is damaged after line {line_no} ({exc})")


def _parse_line(path: Path, line_no: int, raw: bytes) -> Document | LoadError:
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        return LoadError(path, f"not UTF-8 (byte {exc.start})", record=line_no)
    except json.JSONDecodeError as exc:
        return LoadError(path, f"invalid JSON ({exc.msg} at column {exc.colno})", record=line_no)
    problem = _check_record(data)
    if problem:
        return LoadError(path, problem, record=line_no)
    doc = Document.from_dict(data)
    if not any(p.text.strip() for p in doc.paragraphs()):
        return LoadError(path, f"document {doc.doc_id!r} has no text", record=line_no)
    doc.source = str(path)
    return doc


def _check_record(data: Any) -> str | None:
    """Why this JSON value is not a library document, or None when it is one."""
    if not isinstance(data, dict):
        return "not a JSON object"
    if not isinstance(data.get("doc_id"), str) or not data["doc_id"].strip():
        return "missing 'doc_id'"
    for name in _LIST_FIELDS:
        if data.get(name) is not None and not isinstance(data[name], list):
            return f"'{name}' must be a list"
    for name in _TEXT_FIELDS:
        if data.get(name) is not None and not isinstance(data[name], str):
            return f"'{name}' must be a string"
    year = data.get("year")
    if year is not None and (not isinstance(year, int) or isinstance(year, bool)):
        return "'year' must be a whole number"
    return _check_sections(data.get("sections") or [])


def _check_sections(sections: list[Any]) -> str | None:
    for section in sections:
        if not isinstance(section, dict) or not isinstance(section.get("paragraphs", []), list):
            return "each section must be an object with a 'paragraphs' list"
        if section.get("heading") is not None and not isinstance(section["heading"], str):
            return "a section 'heading' must be a string"
        for paragraph in section.get("paragraphs") or []:
            text = paragraph.get("text") if isinstance(paragraph, dict) else paragraph
            if not isinstance(text, str):
                return "each paragraph must be a string"
        nested = section.get("sections") or []
        problem = _check_sections(nested) if isinstance(nested, list) else "'sections' must be a list"
        if problem:
            return problem
    return None
