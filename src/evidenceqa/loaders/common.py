"""Small helpers the format loaders share."""

from __future__ import annotations

import re
from pathlib import Path

from evidenceqa.documents import normalize_space

_YEAR = re.compile(r"\b(1[89]\d\d|20\d\d)\b")
_SLUG = re.compile(r"[^a-z0-9]+")
_GENERIC_STEMS = {"fulltext", "index", "article", "document", "main", "paper"}


def file_doc_id(path: Path, doi: str | None = None) -> str:
    """A stable id for a document loaded from a file: its DOI when known, else its file name.

    A generic file name ("fulltext.xml") takes its folder's name too, so two articles don't collide.
    """
    if doi:
        return "doi:" + doi.strip().lower()
    parts = [path.stem]
    if path.stem.lower() in _GENERIC_STEMS and path.parent.name:
        parts.insert(0, path.parent.name)
    return "file:" + _SLUG.sub("-", "-".join(parts).lower()).strip("-")


def year_from(text: str | None) -> int | None:
    match = _YEAR.search(text or "")
    return int(match.group(1)) if match else None


def clean_doi(doi: str | None) -> str | None:
    """Bare DOI ("10.x/y") from any of its usual spellings."""
    if not doi:
        return None
    doi = normalize_space(doi)
    doi = re.sub(r"^(https?://(dx\.)?doi\.org/|doi:\s*)", "", doi, flags=re.I)
    return doi or None
