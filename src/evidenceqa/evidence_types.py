"""What kind of evidence a document is: guideline, systematic review, trial, … (docs/evidence.md).

A clinician weighs a source by its design before its words. Every document gets one type: the one
its metadata states (library JSONL `evidence_type`, a JATS `article-type`, PubMed publication types
among its subject terms), else the first of a fixed list of transparent rules over its title,
subject terms and opening text that matches. The rules read words a reader can check, and the
reason is kept with the type, so a card can say why.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from evidenceqa.documents import Document


@dataclass(frozen=True)
class EvidenceType:
    key: str
    name: str  # as a card shows it
    rank: int  # 1 is the strongest evidence; patient information and other are unranked (0)


PATIENT_INFORMATION = "patient-information"  # facts told to patients, not a study's findings
# Strongest first: the order of the ranking preference and of the filter's options.
TYPES: tuple[EvidenceType, ...] = (
    EvidenceType("guideline", "Guideline or consensus statement", 1),
    EvidenceType("systematic-review", "Systematic review or meta-analysis", 2),
    EvidenceType("rct", "Randomised controlled trial", 3),
    EvidenceType("observational", "Cohort, case-control or other non-randomised study", 4),
    EvidenceType("case-report", "Case report or series", 5),
    EvidenceType("narrative-review", "Narrative review", 6),
    EvidenceType(PATIENT_INFORMATION, "Patient information", 0),
    EvidenceType("other", "Other (laboratory, modelling, commentary…)", 0),
)
BY_KEY = {t.key: t for t in TYPES}
KEYS = tuple(BY_KEY)
# Bumped when a rule changes: the catalogue re-labels the documents the rules labelled.
RULES_VERSION = 1
# How a document's type was decided, the prefix of its stored reason.
FROM_METADATA = "metadata"
FROM_RULES = "rules"
STATED = f"{FROM_METADATA}: stated"  # the source gave the type itself: no rule changes it
# The opening words the rules read: an abstract and the start of a full text.
OPENING_CHARS = 3000


def unknown_types(keys: Iterable[str]) -> str | None:
    """Why these are not all evidence types (for a filter's one-line error), or None."""
    wrong = [key for key in keys if key not in BY_KEY]
    if not wrong:
        return None
    return f"unknown evidence type {wrong[0]!r}; the types are {', '.join(KEYS)}"


def type_name(key: str | None) -> str | None:
    """An evidence type in words, for cards and filters; None for none or an unknown key."""
    found = BY_KEY.get(key or "")
    return found.name if found else None


@dataclass(frozen=True)
class Classification:
    key: str
    reason: str  # "metadata: article-type case-report", "rules: 'randomly assigned'"


# JATS article-type → type. Research articles are left to the rules; a review is narrative unless
# its text says systematic.
_ARTICLE_TYPES = {
    "practice-guideline": "guideline",
    "guideline": "guideline",
    "consensus-statement": "guideline",
    "systematic-review": "systematic-review",
    "meta-analysis": "systematic-review",
    "case-report": "case-report",
    "editorial": "other",
    "letter": "other",
    "correction": "other",
    "retraction": "other",
    "news": "other",
    "discussion": "other",
    "commentary": "other",
    "book-review": "other",
    "obituary": "other",
    "patient-information": "patient-information",
}
_REVIEW_ARTICLE_TYPES = {"review-article", "review"}
# PubMed publication types (and MeSH descriptors indexed for a study of that design) among the
# subject terms, strongest first. "… as Topic" descriptors are about a design, not of it: not used.
_SUBJECT_TERMS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("guideline", ("practice guideline", "guideline", "consensus development conference")),
    ("systematic-review", ("meta-analysis", "systematic review")),
    (
        "rct",
        # Not "random allocation": it is also indexed for random sampling.
        ("randomized controlled trial", "double-blind method", "single-blind method"),
    ),
    ("case-report", ("case reports",)),
    (
        "observational",
        (
            "cohort studies",
            "retrospective studies",
            "prospective studies",
            "case-control studies",
            "cross-sectional studies",
            "follow-up studies",
            "longitudinal studies",
            "health surveys",
            "surveys and questionnaires",
            "sensitivity and specificity",
            "registries",
            "controlled before-after studies",
            "non-randomized controlled trials as topic",
        ),
    ),
    ("narrative-review", ("review",)),
)


def _words(*patterns: str) -> re.Pattern[str]:
    return re.compile(r"\b(?:" + "|".join(patterns) + r")", re.IGNORECASE)


_RANDOM = r"randomi[sz]"
_COUNT = (
    r"(?:\d[\d,]*|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen"
    r"|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty"
    r"|ninety|hundred|thousand)"
)
_PEOPLE = (
    r"(?:patients|participants|subjects|individuals|volunteers|women|men|children|adults|residents"
    r"|infants|neonates|adolescents|persons|people|students|nurses|physicians|surgeons)\b"
)
# Rules over the title and the opening text, in order; the first that matches decides.
_TITLE_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "guideline",
        _words(
            r"guidelines?\b",
            r"consensus (?:statement|conference|recommendations?)",
            r"position (?:statement|paper)",
            r"practice (?:parameter|advisory)",
            r"recommendations (?:for|on|of)\b",
        ),
    ),
    (
        "systematic-review",
        _words(r"systematic (?:literature )?review", r"meta-?analys[ie]s", r"pooled analysis"),
    ),
    ("rct", _words(_RANDOM + r"ed(?: \w+){0,3} (?:trial|study)", r"placebo-controlled")),
    (
        "case-report",
        _words(r"case reports?\b", r"case series\b", r"a case of\b", r"report of (?:a|two|three) cases?"),
    ),
    # "A review of 300 cases" is a case review, not a literature review.
    (
        "observational",
        _words(
            r"retrospective",
            r"prospective",
            r"cohort\b",
            r"case-control",
            r"cross-sectional",
            r"population-based",
            r"registry\b",
            r"review of (?:\d+|our|the) (?:\w+ ){0,3}(?:cases|patients|records|experience)",
            r"\d+ (?:consecutive )?(?:cases|patients)\b",
            r"experience with\b",
        ),
    ),
    (
        "narrative-review",
        _words(r"review\b", r"an update\b", r"overview\b", r"current concepts", r"state of the art"),
    ),
)
# A study of how guidelines are followed is not a guideline.
_ABOUT_GUIDELINES = _words(
    r"adheren",
    r"complian",
    r"implement",
    r"awareness",
    r"knowledge",
    r"attitudes?",
    r"uptake",
    r"impact of",
    r"effect of",
    r"evaluation of",
    r"audit",
    r"variation",
)
_TEXT_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "guideline",
        _words(
            r"(?:this|these|the present) (?:guidelines?|consensus statement|position statement)",
            r"we (?:provide|present|issue|make|offer) (?:\w+ ){0,3}recommendations",
            r"recommendations were (?:developed|formulated|graded)",
            r"(?:delphi|consensus) (?:process|panel|method)",
        ),
    ),
    (
        "systematic-review",
        _words(
            r"systematic(?:ally)? (?:literature )?(?:review|search)",
            r"meta-?analys[ie]s",
            r"eligible for (?:this|the|inclusion in (?:this|the)) (?:review|meta-analysis)",
            r"(?:trials|studies) (?:were|was) (?:identified|eligible|selected|pooled)",
            r"we searched (?:\w+ ){0,4}(?:medline|pubmed|embase|cochrane|databases?)",
            r"(?:medline|pubmed|embase|cochrane library) (?:and|,|were|was) (?:\w+ ){0,6}searched",
        ),
    ),
    (
        "rct",
        _words(
            r"(?:were|was|being) " + _RANDOM + r"ed",
            _RANDOM + r"ed (?:\w+ ){0,3}(?:trial|study)",
            r"randomly (?:assigned|allocated|divided|selected to receive)",
            r"double-blind",
            r"placebo-controlled",
            r"random allocation",
        ),
    ),
    (
        "case-report",
        _words(
            r"(?:a|this|our) case report\b",
            r"case presentation",
            r"(?:one|two|three|four|five) (?:\w+ ){0,2}cases? (?:of (?:\S+ ){0,6})?(?:were|was|is|are) (?:identified|described|presented|reported)",
            r"we (?:report|present|describe) (?:a|an|the|two|three) (?:\w+ ){0,3}(?:case|patient)",
            r"a \d{1,3}-year-old (?:\w+ ){0,2}(?:man|woman|male|female|boy|girl|patient)",
            r"case series\b",
        ),
    ),
    (
        "narrative-review",
        _words(
            r"(?:this|in this|the present) review",
            r"here,? we discuss",
            r"we review\b",
            r"is reviewed",
            r"are reviewed",
            r"we summari[sz]e (?:\w+ ){0,3}(?:current|recent)",
            r"literature review",
            r"review (?:of|on) the (?:current |recent )?literature",
        ),
    ),
    (
        "observational",
        _words(
            r"retrospective(?:ly)?\b",
            r"prospective(?:ly)?\b",
            r"cohort\b",
            r"case-control",
            r"cross-sectional",
            r"population-based",
            r"registry\b",
            r"chart review",
            r"(?:medical|hospital|clinical|patient) records (?:of|were|was)",
            r"consecutive (?:\w+ ){0,2}patients",
            r"observational",
            r"questionnaire",
            r"surveyed\b",
            r"were enrolled",
            r"we enrolled",
            r"follow-up study",
            r"sensitivity and specificity",
            r"outbreak investigation",
            r"surveys?\b",
            r"(?:were|was) (?:recruited|included|enrolled)",
            r"(?:files|records|charts) (?:\w+ ){0,8}(?:were|was) (?:\w+ )?reviewed",
            # A count of people studied: a study of people with no design named is observational.
            _COUNT + r" (?:\w+ ){0,3}" + _PEOPLE,
        ),
    ),
)


_SYSTEMATIC = tuple(rule for rule in _TEXT_RULES if rule[0] == "systematic-review")


def label(doc: Document) -> None:
    """Set the document's evidence type and reason: a type the source stated is kept, one the rules
    gave is decided again (the rules may have changed since)."""
    if doc.evidence_reason not in (None, STATED):
        doc.evidence_type = None
    found = classify(doc)
    doc.evidence_type, doc.evidence_reason = found.key, found.reason


def classify(doc: Document) -> Classification:
    """The document's evidence type and why: what its metadata states, else the title's wording,
    else the strongest design that its subject terms or its methods (or opening) text name."""
    stated = (doc.evidence_type or "").strip().lower()
    if stated in BY_KEY:
        return Classification(stated, STATED)
    article_type = (doc.doc_type or "").strip().lower()
    if article_type in _ARTICLE_TYPES:
        return Classification(_ARTICLE_TYPES[article_type], f"{FROM_METADATA}: type {article_type}")
    text = _design_text(doc)
    if article_type in _REVIEW_ARTICLE_TYPES:
        rule = _first_rule(_SYSTEMATIC, f"{doc.title or ''} {text}")
        why = f"{FROM_METADATA}: type {article_type}" + (f"; {rule.reason}" if rule else "")
        return Classification(rule.key if rule else "narrative-review", why)
    title = doc.title or ""
    title_rule = None if _ABOUT_GUIDELINES.search(title) else _first_rule(_TITLE_RULES[:1], title)
    title_rule = title_rule or _first_rule(_TITLE_RULES[1:], title)
    if title_rule:
        return Classification(title_rule.key, f"{title_rule.reason} in the title")
    subjects = {topic.strip().lower() for topic in doc.topics}
    found: list[Classification] = []
    for key, terms in _SUBJECT_TERMS:
        term = next((t for t in terms if t in subjects), None)
        if term:
            found.append(Classification(key, f"{FROM_RULES}: subject term '{term}'"))
            break
    text_rule = _first_rule(_TEXT_RULES, text)
    if text_rule:
        found.append(text_rule)
    if not found:
        return Classification("other", f"{FROM_RULES}: no study design named")
    return min(found, key=lambda c: _PRECEDENCE.index(c.key))


# Designs in the order a document naming two is filed under, the text rules' order: a trial's
# abstract may call it prospective, a case series retrospective, a review cite cohorts.
_PRECEDENCE = tuple(key for key, _ in _TEXT_RULES)


def _first_rule(rules: tuple[tuple[str, re.Pattern[str]], ...], text: str) -> Classification | None:
    for key, pattern in rules:
        match = pattern.search(text)
        if match:
            return Classification(key, f"{FROM_RULES}: '{match.group(0).lower()}'")
    return None


_METHODS = re.compile(
    r"\b(?:methods?|methodology|design|setting|patients|participants|subjects)\b", re.IGNORECASE
)


def _design_text(doc: Document) -> str:
    """Where a study names its design: its methods sections when it has them (a background
    mentions other studies' designs), else its abstract and opening text."""
    methods = [
        p.text
        for path, section in doc.walk()
        if path and _METHODS.search(path[-1])
        for p in section.paragraphs
    ]
    paragraphs = methods or [p.text for p in doc.paragraphs()]
    text, size = [], 0
    for paragraph in paragraphs:
        text.append(paragraph)
        size += len(paragraph) + 1
        if size >= OPENING_CHARS:
            break
    return " ".join(text)[:OPENING_CHARS]
