"""What ingesting files would give, without storing anything: one row per document or error.

`evidenceqa preview --markdown FOLDER` writes the table that docs/formats.md holds for the real
test files, so that page is regenerated, never typed.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from evidenceqa.chunking import ChunkingConfig, chunk_document
from evidenceqa.documents import Document
from evidenceqa.loaders import LoadError, detect_format, iter_files, load


@dataclass(frozen=True)
class PreviewRow:
    path: str
    format: str
    doc_id: str = ""
    title: str = ""
    year: int | None = None
    sections: int = 0
    paragraphs: int = 0
    words: int = 0
    chunks: int = 0
    error: str = ""


def preview(
    paths: list[Path], config: ChunkingConfig, relative_to: Path | None = None
) -> Iterator[PreviewRow]:
    for path in iter_files(paths):
        shown = str(path.relative_to(relative_to)) if relative_to else str(path)
        try:
            fmt = detect_format(path)
        except LoadError:
            fmt = "-"
        for item in load(path):
            if isinstance(item, LoadError):
                yield PreviewRow(shown, fmt, error=item.reason if item.record is None else str(item))
            else:
                yield _row(shown, fmt, item, config)


def _row(shown: str, fmt: str, doc: Document, config: ChunkingConfig) -> PreviewRow:
    return PreviewRow(
        path=shown,
        format=fmt,
        doc_id=doc.doc_id,
        title=doc.title or "",
        year=doc.year,
        sections=sum(1 for path, _ in doc.walk() if path),
        paragraphs=sum(1 for _ in doc.paragraphs()),
        words=doc.word_count(),
        chunks=len(chunk_document(doc, config)),
    )


HEADERS = ("File", "Format", "doc_id", "Title", "Year", "Sections", "Paragraphs", "Words", "Chunks", "Error")
NUMERIC = (False, False, False, False, True, True, True, True, True, False)


def cells(row: PreviewRow) -> list[object]:
    """One table row; zeros of an error row are left blank."""
    numbers = [row.year, row.sections, row.paragraphs, row.words, row.chunks]
    return [row.path, row.format, row.doc_id, _short(row.title), *(n or "" for n in numbers), row.error]


def _short(text: str, limit: int = 70) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
