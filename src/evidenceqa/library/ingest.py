"""Ingest files into the catalogue: load → chunk → store, one transaction per file.

Re-ingesting an unchanged file does nothing (its bytes, its loader's version and the chunker are
fingerprinted); a changed file replaces the chunks of the documents that changed and drops the
documents it no longer holds; a file that cannot be read leaves what was stored from it untouched.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from evidenceqa import evidence_types
from evidenceqa.chunking import ChunkingConfig, chunk_document
from evidenceqa.documents import Document
from evidenceqa.library.catalogue import Catalogue
from evidenceqa.library.vocabulary import mine_abbreviations
from evidenceqa.loaders import (
    DEFAULT_MAX_FILE_MB,
    DEFAULT_MAX_READ_SECONDS,
    LoadError,
    detect_format,
    load,
    reader_version,
)

_VOCABULARY_STATE = "abbreviations_mined"
# Formats by how much of an article's structure they carry (sections, tables, metadata), most first.
# When two files hold the same document (an article's XML and its PDF, same DOI), the reading of
# the more structured one is kept, whichever file comes first.
STRUCTURE_ORDER = ("jats", "bmc", "jsonl", "medquad", "html", "markdown", "pdf", "text")
_STRUCTURE_RANK = {name: rank for rank, name in enumerate(STRUCTURE_ORDER)}


@dataclass
class FileReport:
    path: str
    status: Literal["ingested", "unchanged", "failed"] = "ingested"
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    removed: int = 0
    chunks: int = 0
    errors: list[LoadError] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.added or self.updated or self.removed)


def file_digest(path: Path) -> tuple[str, int]:
    digest = hashlib.sha256()
    size = 0
    with path.open("rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
            size += len(block)
    return digest.hexdigest(), size


def defined_abbreviations(doc: Document) -> list[tuple[str, str]]:
    """The abbreviations a document defines ("surgical site infection (SSI)"), for the vocabulary."""
    mined = mine_abbreviations(["\n".join(p.text for p in doc.paragraphs())])
    return [(abbr, long_form) for abbr, forms in mined.items() for long_form in forms]


class Ingestor:
    def __init__(
        self,
        catalogue: Catalogue,
        config: ChunkingConfig,
        max_file_mb: float = DEFAULT_MAX_FILE_MB,
        max_read_seconds: float = DEFAULT_MAX_READ_SECONDS,
    ) -> None:
        self.catalogue = catalogue
        self.config = config
        self.max_file_mb = max_file_mb
        self.max_read_seconds = max_read_seconds
        self.chunker = config.signature()
        self._mine_older_documents()

    def _mine_older_documents(self) -> None:
        """Catalogues made before the vocabulary existed get their documents mined once."""
        if self.catalogue.get_state(_VOCABULARY_STATE):
            return
        with self.catalogue.transaction():
            for doc in self.catalogue.iter_documents():
                self.catalogue.put_abbreviations(doc.doc_id, defined_abbreviations(doc))
            self.catalogue.set_state(_VOCABULARY_STATE, "1")

    def ingest_file(self, path: Path, on_document: Callable[[], None] | None = None) -> FileReport:
        key = str(path.resolve())
        report = FileReport(path=str(path))
        try:
            sha, size = file_digest(path)
        except OSError as exc:
            report.status = "failed"
            report.errors.append(LoadError(path, f"cannot be read ({exc.strerror or exc})"))
            return report
        fmt = _format(path)
        reading = self._reading(fmt)
        known = self.catalogue.source(key)
        if known and known.sha256 == sha and known.chunker == reading:
            report.status = "unchanged"
            return report
        seen: set[str] = set()
        with self.catalogue.transaction():
            for item in load(path, self.max_file_mb, self.max_read_seconds):
                if isinstance(item, LoadError):
                    report.errors.append(item)
                else:
                    self._put(item, key, fmt, seen, report)
                if on_document:
                    on_document()
            if not seen and report.errors:
                report.status = "failed"
                return report
            if not report.errors:
                # Only a file read without errors proves that a document really left it.
                for doc_id in self.catalogue.doc_ids_from(key) - seen:
                    report.removed += self.catalogue.delete_document(doc_id)
                self.catalogue.put_source(key, sha, size, fmt, reading, len(seen), 0)
            if report.changed:
                self.catalogue.bump_version()
        return report

    def _reading(self, fmt: str | None) -> str:
        """How a file is read and cut: a new loader version reads it again (documents whose content
        comes out the same are left as they are), a new chunker cuts it again."""
        if fmt is None:
            return self.chunker
        try:
            return f"{self.chunker}|{reader_version(fmt)}"
        except Exception:  # a plugin loader that cannot be imported: `load` reports why, per file
            return self.chunker

    def _put(self, doc: Document, key: str, fmt: str | None, seen: set[str], report: FileReport) -> None:
        if doc.doc_id in seen:
            # Real data sets reuse ids for different pages; keep the content under a derived id.
            original, doc.doc_id = doc.doc_id, _free_id(doc.doc_id, seen)
            report.warnings.append(
                f"{report.path}: doc_id {original!r} appears again; stored as {doc.doc_id!r}"
            )
        seen.add(doc.doc_id)
        doc.source = key
        existing = self.catalogue.document(doc.doc_id)
        if existing and existing.source_path != key and Path(existing.source_path or "").exists():
            other = _format(Path(existing.source_path or ""))
            if not _more_structured(fmt, other):
                report.warnings.append(
                    f"{report.path}: document {doc.doc_id!r} is already in the library from "
                    f"{existing.source_path}; skipped"
                )
                return
            report.warnings.append(
                f"{report.path}: document {doc.doc_id!r} was read from {existing.source_path} ({other}); "
                f"replaced by this file's {fmt} reading, which keeps more of its structure"
            )
        evidence_types.label(doc)
        content_hash = doc.content_hash()
        if existing and (existing.content_hash, existing.chunker, existing.source_path) == (
            content_hash,
            self.chunker,
            key,
        ):
            report.unchanged += 1
            return
        chunks = chunk_document(doc, self.config)
        self.catalogue.put_document(doc, chunks, content_hash, self.chunker)
        self.catalogue.put_abbreviations(doc.doc_id, defined_abbreviations(doc))
        report.chunks += len(chunks)
        if existing:
            report.updated += 1
        else:
            report.added += 1

    def remove(self, doc_id: str) -> bool:
        """Remove one document. Its source file's fingerprint is forgotten, so ingesting that
        file again on purpose brings the document back."""
        record = self.catalogue.document(doc_id)
        if record is None:
            return False
        with self.catalogue.transaction():
            self.catalogue.delete_document(doc_id)
            if record.source_path:
                self.catalogue.forget_source(record.source_path)
            self.catalogue.bump_version()
        return True


def _free_id(doc_id: str, taken: set[str]) -> str:
    n = 2
    while f"{doc_id}~{n}" in taken:
        n += 1
    return f"{doc_id}~{n}"


def _more_structured(fmt: str | None, other: str | None) -> bool:
    """Whether format `fmt` keeps more of a document's structure than `other` (a plugin's format,
    unranked, never displaces a built-in one)."""
    unranked = len(STRUCTURE_ORDER)
    return _STRUCTURE_RANK.get(fmt or "", unranked) < _STRUCTURE_RANK.get(other or "", unranked)


def _format(path: Path) -> str | None:
    try:
        return detect_format(path)
    except LoadError:
        return None
