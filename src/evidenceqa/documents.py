"""The document model every loader produces and every later stage reads.

Document → Sections (nested) → Paragraphs. Chunks are cut from documents by `chunking`.
The model is plain dataclasses with a lossless dict round-trip, so the catalogue can store a
document once and re-chunk it later without the source file.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

HierarchyLevel = Literal["document", "section", "paragraph"]

_WS = re.compile(r"\s+")
# An untitled document's label: at most this many of its topics, or opening words of a passage.
LABEL_TOPICS = 4
LABEL_WORDS = 12
# Topics that say who was studied or how, not what about: MeSH's check tags (age groups, sex,
# species) and method and statistics headings, which the evidence type already states. Half of
# PubMed's abstracts list "Adult" first, so a label of the first topics read "on Adult, Aged, …".
_NOT_WHAT_ABOUT = frozenset(
    heading.replace("_", " ")
    for heading in """Humans Animals Male Female Pregnancy Infant Infant,_Newborn Child Child,_Preschool Adolescent
    Young_Adult Adult Middle_Aged Aged Aged,_80_and_over Mice Rats Cattle Dogs Cats Swine Sheep Rabbits
    Guinea_Pigs Horses Age_Factors Sex_Factors Time_Factors Risk_Factors Treatment_Outcome
    Prospective_Studies Retrospective_Studies Cohort_Studies Case-Control_Studies Cross-Sectional_Studies
    Follow-Up_Studies Longitudinal_Studies Double-Blind_Method Single-Blind_Method Random_Allocation
    Pilot_Projects Feasibility_Studies Reproducibility_of_Results Sensitivity_and_Specificity
    Predictive_Value_of_Tests ROC_Curve Analysis_of_Variance Chi-Square_Distribution Regression_Analysis
    Logistic_Models Multivariate_Analysis Odds_Ratio Statistics,_Nonparametric Survival_Analysis
    Proportional_Hazards_Models Kaplan-Meier_Estimate Questionnaires Surveys_and_Questionnaires
    Incidence Prevalence""".split()
)
CITED_AUTHORS = 3  # in a reference, then "et al."


def normalize_space(text: str) -> str:
    """Collapse every run of white space to one space and strip the ends."""
    return _WS.sub(" ", text).strip()


def doc_type_name(doc_type: str | None) -> str | None:
    """A document type in words ("journal-abstract" → "Journal abstract"); None for the default
    type, which says nothing."""
    words = normalize_space((doc_type or "").replace("-", " ").replace("_", " "))
    return words.capitalize() if words and words != "document" else None


def http_url(url: str | None) -> str | None:
    """`url` when it is an http(s) address, else None. Document metadata is untrusted: a javascript:
    or data: address must never become a link."""
    url = (url or "").strip()
    return url if url.lower().startswith(("https://", "http://")) else None


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass
class Paragraph:
    text: str
    page: int | None = None  # 1-based page in the source PDF, for citations
    kind: str = "text"  # text | caption | list


@dataclass
class Section:
    heading: str | None
    paragraphs: list[Paragraph] = field(default_factory=list)
    sections: list[Section] = field(default_factory=list)
    kind: str = "body"  # body | abstract | summary | box

    def walk(self, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Section]]:
        """Yield (heading path, section) for this section and all below it, in reading order."""
        here = (*path, self.heading) if self.heading else path
        yield here, self
        for sub in self.sections:
            yield from sub.walk(here)

    def word_count(self) -> int:
        own = sum(len(p.text.split()) for p in self.paragraphs)
        return own + sum(s.word_count() for s in self.sections)


@dataclass
class Document:
    doc_id: str
    title: str | None = None
    authors: list[str] = field(default_factory=list)
    year: int | None = None
    date: str | None = None
    doi: str | None = None
    url: str | None = None
    license: str | None = None
    topics: list[str] = field(default_factory=list)
    doc_type: str = "document"
    collection: str = "default"
    journal: str | None = None  # the venue (journal, guideline series, website) for citations
    # The kind of evidence (`evidence_types`): stated by the metadata, or set on ingest with why.
    evidence_type: str | None = None
    evidence_reason: str | None = None
    # The doc_ids of the earlier versions this document replaces, as its metadata states
    # (library.versions also links versions by title, issuer and year).
    supersedes: list[str] = field(default_factory=list)
    sections: list[Section] = field(default_factory=list)
    source: str | None = None  # path or URL the document was loaded from

    def walk(self) -> Iterator[tuple[tuple[str, ...], Section]]:
        for section in self.sections:
            yield from section.walk()

    def paragraphs(self) -> Iterator[Paragraph]:
        for _, section in self.walk():
            yield from section.paragraphs

    def word_count(self) -> int:
        return sum(s.word_count() for s in self.sections)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Document:
        data = dict(data)
        data["sections"] = [_section_from_dict(s) for s in data.get("sections") or []]
        known = cls.__dataclass_fields__
        return cls(**{k: v for k, v in data.items() if k in known})

    def label(self, passage: str | None = None) -> str:
        """What a reader calls this document: its title; where the data has none (PubMed abstracts),
        its kind and topics ("Journal abstract on Apoptosis, Mitochondria"), else its kind and the
        opening words of `passage` (a passage of it), and only when there is nothing else its id."""
        if self.title and self.title.strip():
            return normalize_space(self.title)
        kind = doc_type_name(self.doc_type) or "Document"
        if self.topics:
            about = [t for t in self.topics if t not in _NOT_WHAT_ABOUT] or self.topics
            # "; " between topics: MeSH headings hold commas ("Blood Loss, Surgical").
            return f"{kind} on {'; '.join(about[:LABEL_TOPICS])}"
        words = normalize_space(passage or "").split()
        if words:
            opening = " ".join(words[:LABEL_WORDS]) + ("…" if len(words) > LABEL_WORDS else "")
            return f"{kind}: “{opening}”"
        return self.doc_id

    def reference(self, passage: str | None = None) -> str:
        """A reference in the order of the medical literature (Vancouver): authors (CITED_AUTHORS,
        then "et al."), title (`label`), journal and year, then the DOI or address."""
        names = ", ".join(self.authors[:CITED_AUTHORS]) + (
            ", et al." if len(self.authors) > CITED_AUTHORS else ""
        )
        where = " ".join(p for p in (self.journal or "", str(self.year or "")) if p)
        link = f"doi:{self.doi}" if self.doi else http_url(self.url) or f"[{self.doc_id}]"
        parts = [names, self.label(passage).rstrip("."), where]
        return ". ".join(p for p in parts if p) + ". " + link

    def content_hash(self) -> str:
        """Hash of everything that reaches a chunk; `source` is left out so a moved file is unchanged."""
        payload = self.to_dict()
        payload.pop("source", None)
        if not payload["supersedes"]:  # so that documents hashed before the field existed are unchanged
            del payload["supersedes"]
        return sha256_text(json.dumps(payload, sort_keys=True, ensure_ascii=False))


def prune(sections: list[Section]) -> list[Section]:
    """The sections that have text somewhere below them; a heading over nothing is dropped."""
    kept = []
    for section in sections:
        section.sections = prune(section.sections)
        if section.paragraphs or section.sections:
            kept.append(section)
    return kept


def _section_from_dict(data: dict[str, Any]) -> Section:
    paragraphs = [
        Paragraph(text=p)
        if isinstance(p, str)
        else Paragraph(text=p["text"], page=p.get("page"), kind=p.get("kind") or "text")
        for p in data.get("paragraphs") or []
    ]
    return Section(
        heading=data.get("heading"),
        paragraphs=paragraphs,
        sections=[_section_from_dict(s) for s in data.get("sections") or []],
        kind=data.get("kind") or "body",
    )


@dataclass
class Chunk:
    """One retrievable unit. `text` is what gets embedded; `body` is what a reader is shown."""

    chunk_id: str
    doc_id: str
    text: str
    body: str
    hierarchy_level: HierarchyLevel
    section_path: list[str]
    position: int
    title: str | None = None
    year: int | None = None
    collection: str = "default"
    doc_type: str = "document"
    topics: list[str] = field(default_factory=list)
    page: int | None = None
    content_hash: str = ""
    evidence_type: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Chunk:
        return cls(**{k: v for k, v in data.items() if k in cls.__dataclass_fields__})
