"""Library JSONL (`.jsonl`, `.jsonl.gz`): one document per line, in the shared data's neutral format.

A bad line costs that line only: it comes back as a LoadError naming the line number. Reading stops
at `max_bytes` of content, so a small .gz that decompresses to gigabytes (a zip bomb) is refused
after that much, with the lines before it kept.
"""

from __future__ import annotations

import gzip
import io
import json
import re
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from evidenceqa import evidence_types
from evidenceqa.documents import Document
from evidenceqa.loaders import limits
from evidenceqa.loaders.errors import LoadError

# Bump when this loader (or a helper it uses) reads files differently: ingest then reads
# again the files an earlier version read (evidenceqa.loaders.reader_version).
VERSION = 4

_LIST_FIELDS = ("authors", "topics", "sections", "supersedes")
# Real documents nest sections a few levels; far deeper is hostile, and would exhaust the stack later.
MAX_SECTION_DEPTH = 32
_TEXT_FIELDS = (
    "title",
    "date",
    "doi",
    "url",
    "license",
    "doc_type",
    "collection",
    "journal",
    "evidence_type",
)


# How pandas writes a missing text cell (NaN, pd.NA): never a paragraph of a source. "None" is
# left: "Competing interests: None" is one.
_MISSING_CELLS = frozenset({"nan", "<na>"})
_LABEL_RESIDUE = re.compile(r"^\s*[:;,]+\s*")
# A structured abstract's label run into the sentence before it ("… for this purpose.AIM: To
# perform …"), and the first half of a split one ("STUDY DESIGN/SETTING", "MATERIALS & METHODS")
# left at a paragraph's end. Capitals right after a full stop with no space are no sentence of prose.
# Each separator matches one way only: a run of spaces that could split differently backtracks
# exponentially on a long label-like run without its colon.
_GLUED_LABEL = re.compile(r"(?<=[a-z0-9)\]%][.!?])[A-Z]{3,}(?:(?:\s*[/&]\s*|\s+)[A-Z]{2,})*:\s+")
_TRAILING_LABEL = re.compile(r"(?<=[.!?)\]])\s*[A-Z]{3,}(?:\s+[A-Z]{2,})*\s*[/&]\s*$")

_MB = 1 << 20
# When called on its own; the dispatcher (`loaders.load`) passes the max_file_mb setting.
_DEFAULT_MAX_BYTES = int(limits.DEFAULT.max_file_mb * _MB)


def _open(path: Path) -> tuple[io.BufferedIOBase, bool]:
    """The content stream, and whether it is gzipped (known by its magic bytes, not its name)."""
    with path.open("rb") as raw:
        magic = raw.read(2)
    gzipped = magic == b"\x1f\x8b"
    return (gzip.open(path, "rb") if gzipped else path.open("rb")), gzipped


def load(path: Path, max_bytes: int = _DEFAULT_MAX_BYTES) -> Iterator[Document | LoadError]:
    line_no = read = 0
    try:
        stream, gzipped = _open(path)
        with stream:
            # readline's bound keeps one endless line (no newline in a bomb) from filling memory.
            while raw := stream.readline(max_bytes - read + 1):
                line_no, read = line_no + 1, read + len(raw)
                if read > max_bytes:
                    yield LoadError(path, _too_large(max_bytes, gzipped, line_no))
                    return
                if raw.strip():
                    item = _parse_line(path, line_no, raw)
                    limits.check("line", line_no)  # a record read past the time limit is not kept
                    yield item
    except (EOFError, OSError, zlib.error) as exc:
        # A truncated .gz: everything before the damage was already yielded.
        yield LoadError(path, f"compressed data is damaged after line {line_no} ({exc})")


def _too_large(max_bytes: int, gzipped: bool, line_no: int) -> str:
    what = "decompresses to" if gzipped else "holds"
    return f"{what} more than {max_bytes / _MB:g} MB (setting max_file_mb); stopped at line {line_no}"


def _parse_line(path: Path, line_no: int, raw: bytes) -> Document | LoadError:
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        return LoadError(path, f"not UTF-8 (byte {exc.start})", record=line_no)
    except json.JSONDecodeError as exc:
        return LoadError(path, f"invalid JSON ({exc.msg} at column {exc.colno})", record=line_no)
    except RecursionError:
        return LoadError(path, "invalid JSON (nested too deeply)", record=line_no)
    problem = _check_record(data)
    if problem:
        return LoadError(path, problem, record=line_no)
    data.pop("evidence_reason", None)  # set on ingest, never read from a source
    data["sections"] = _cleaned(data.get("sections") or [])
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
    if data.get("evidence_type") is not None and data["evidence_type"] not in evidence_types.KEYS:
        return f"'evidence_type' must be one of {', '.join(evidence_types.KEYS)}"
    if any(not isinstance(d, str) or not d.strip() for d in data.get("supersedes") or []):
        return "'supersedes' must be a list of doc_ids"
    if data["doc_id"] in (data.get("supersedes") or []):
        return "a document cannot supersede itself"
    year = data.get("year")
    if year is not None and (not isinstance(year, int) or isinstance(year, bool)):
        return "'year' must be a whole number"
    return _check_sections(data.get("sections") or [])


def _cleaned(sections: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`sections` with what exports of article tables leave in a paragraph that is not its text
    taken out: a missing cell written out as text ("nan", for an article without an abstract), which
    would be indexed, found and quoted as the abstract; and what is left of a structured abstract's
    labels: the colon before the text where one was split off (": Prophylactic fixation was not …"),
    one run into the sentence before it ("….AIM: To perform …"), half of one at the end."""
    cleaned = []
    for section in sections:
        paragraphs = []
        for paragraph in section.get("paragraphs") or []:
            text = paragraph["text"] if isinstance(paragraph, dict) else paragraph
            text = _TRAILING_LABEL.sub("", _GLUED_LABEL.sub(" ", _LABEL_RESIDUE.sub("", text)))
            if (kept := text.strip().lower()) and kept not in _MISSING_CELLS:
                paragraphs.append({**paragraph, "text": text} if isinstance(paragraph, dict) else text)
        cleaned.append(
            {**section, "paragraphs": paragraphs, "sections": _cleaned(section.get("sections") or [])}
        )
    return cleaned


def _check_sections(sections: list[Any], depth: int = 1) -> str | None:
    if depth > MAX_SECTION_DEPTH:
        return f"sections nested deeper than {MAX_SECTION_DEPTH} levels"
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
        problem = (
            _check_sections(nested, depth + 1) if isinstance(nested, list) else "'sections' must be a list"
        )
        if problem:
            return problem
    return None
