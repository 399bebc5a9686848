"""Versions of one guideline or review: which document supersedes which.

A clinician who finds the 2008 edition of a guideline must be told that the 2019 edition replaced
it. Two documents are versions of each other when the metadata says so (`Document.supersedes`, in
library JSONL), or when they share a title family and an issuer and are of a kind that is revised
and reissued — a guideline, a systematic review (a Cochrane update keeps its title), a patient
page — and have different years. The newest version supersedes every older one.

A title family is the title without what changes between editions: years, "update", "version 2",
"2nd edition", a parenthesised edition note. The issuer is the journal or series (a guideline's
"NICE guideline"), else the first author (an organisation, for guidelines); documents with no
issuer, no year or a family of fewer than MIN_FAMILY_WORDS words are never linked by inference, so
two unrelated papers that happen to share a short title stay apart.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from evidenceqa.documents import Document, normalize_space

# The kinds of document that are revised and reissued under the same title (`evidence_types` keys).
REISSUED = frozenset({"guideline", "systematic-review", "patient-information"})
MIN_FAMILY_WORDS = 3

_EDITION_NOTE = re.compile(
    r"\([^)]*(?:\b(?:19|20)\d\d\b|\b(?:update[sd]?|version|edition|revis(?:ed|ion)|replaces)\b)[^)]*\)", re.I
)
_EDITION_WORDS = re.compile(
    r"\b(?:(?:19|20)\d\d|\d+(?:st|nd|rd|th)\s+edition|edition|version\s*\d+(?:\.\d+)*|v\d+(?:\.\d+)*"
    r"|(?:an\s+)?update[sd]?|revised|revision)\b",
    re.I,
)


@dataclass(frozen=True)
class Successor:
    """The version that supersedes a document: the newest one, and how the link is known."""

    doc_id: str
    title: str | None
    year: int | None
    stated: bool  # the metadata says so (else: same title family and issuer, a later year)

    def label(self) -> str:
        """ "Surgical site infections: prevention and treatment (2019)", as results show it."""
        title = self.title or self.doc_id
        return f"{title} ({self.year})" if self.year and str(self.year) not in title else title


def title_family(title: str | None) -> str | None:
    """The title with its edition marks removed, lower case; None when too short to tell apart."""
    if not title:
        return None
    text = _EDITION_WORDS.sub(" ", _EDITION_NOTE.sub(" ", title.lower()))
    family = " ".join(re.sub(r"[^\w]+", " ", text).split())
    return family if len(family.split()) >= MIN_FAMILY_WORDS else None


def issuer(doc: Document) -> str | None:
    """Who issues the document's versions: its journal or series, else its first author."""
    name = doc.journal or (doc.authors[0] if doc.authors else None)
    return normalize_space(name).lower() if name and name.strip() else None


def version_key(doc: Document) -> tuple[str, str] | None:
    """(title family, issuer) for a document whose versions are linked by inference, else None."""
    if doc.year is None or doc.evidence_type not in REISSUED:
        return None
    family, who = title_family(doc.title), issuer(doc)
    return (family, who) if family and who else None
