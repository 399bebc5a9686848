"""What kind of question it is, and the dense weight alpha that goes with it.

`classify` sorts a question into a query class and `rule_alpha` gives the class's seed weight of
the dense retriever (`SEED_ALPHA`); `learned_alpha` looks the class up in a benchmark-learned table.

Pure functions, no I/O.
"""

from __future__ import annotations

import re
from typing import Literal

QueryClass = Literal["definition", "guideline", "clinical-specific", "general"]
QUERY_CLASSES: tuple[QueryClass, ...] = ("definition", "guideline", "clinical-specific", "general")

# The seed's weight of the dense retriever per class (1 − alpha goes to BM25). Exact terms matter in
# dosing and guideline questions, so keywords weigh more there; a definition is about meaning, so
# the embedding weighs more. Not tuned: the benchmark learns per-class values (`learned_alpha`).
SEED_ALPHA: dict[str, float] = {"definition": 0.7, "guideline": 0.3, "clinical-specific": 0.3, "general": 0.5}
CLINICAL_TERMS_FOR_SPECIFIC = 2

_DEFINITION = re.compile(
    r"^\s*(?:(?:what\s+(?:is|are)|what's|whats)\s+(?:an?\s+)?(?!the\b)(?P<x>[^?]+?)|"
    r"what\s+is\s+meant\s+by\s+.+?|what\s+(?:does|do)\s+.+?\s+(?:mean|stand\s+for)|"
    r"(?:define|definition\s+of|meaning\s+of|explain\s+the\s+term)\s+.+?)\s*[?.]?\s*$",
    re.IGNORECASE,
)
# Words that turn "what is X" from a definition into a clinical question.
_NOT_DEFINITION = re.compile(
    r"\b(?:for|in|after|before|during|with|versus|vs|compared|than|when|if|best|optimal|most|"
    r"recommended|preferred|safest|ideal|first-line|usual|normal|appropriate|current|risk|rate|"
    r"incidence|dose|role|effect|evidence|difference|there|it|this|that)\b",
    re.IGNORECASE,
)
_GUIDELINE = re.compile(
    r"\b(?:guidelines?|guidance|recommend\w*|protocols?|consensus|position\s+statements?|"
    r"best\s+practice|standards?\s+of\s+care|care\s+bundles?|bundles?|pathways?|checklists?)\b",
    re.IGNORECASE,
)


def classify(question: str) -> QueryClass:
    """The question's class: a definition, a guideline question, a clinically specific question
    (two clinical terms or more) or a general one, checked in that order."""
    definition = _DEFINITION.match(question)
    if definition and not (definition["x"] and _not_a_definition(definition["x"])):
        return "definition"
    if _GUIDELINE.search(question):
        return "guideline"
    if len(clinical_terms(question)) >= CLINICAL_TERMS_FOR_SPECIFIC:
        return "clinical-specific"
    return "general"


def _not_a_definition(subject: str) -> bool:
    return len(subject.split()) > 5 or _NOT_DEFINITION.search(subject) is not None


def rule_alpha(query_class: str) -> float:
    """The seed's dense weight for a query class (`classify` gives the class)."""
    return SEED_ALPHA[query_class]


def learned_alpha(query_class: str, table: dict[str, float], default: float) -> float:
    """The dense weight a benchmark learned for a query class (`table`, loaded by the caller);
    `default` for a class the table lacks."""
    alpha = float(table.get(query_class, default))
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha {alpha} for class {query_class!r} is outside 0 … 1")
    return alpha


# Cues of a clinical term: endings of procedures, conditions and drug classes, and stems of
# common perioperative concepts. Compact on purpose: it only has to tell "CHG vs povidone-iodine
# for SSI after colectomy" from "how do I prepare for an operation".
_SUFFIXES = (
    "itis", "ectomy", "otomy", "ostomy", "plasty", "pexy", "scopy", "graphy", "emia", "aemia",
    "oma", "omas", "algia", "pathy", "osis", "iasis", "cillin", "mycin", "micin", "azole", "olol",
    "pril", "sartan", "statin", "parin", "caine", "mab", "nib", "oxacin", "cycline", "vir",
    "dipine", "tidine", "sone", "olone", "azepam", "azolam", "xaban", "gatran", "setron", "fentanil",
    "idine", "ioid", "ioids",
)  # fmt: skip
_STEMS = (
    "infect", "sepsis", "septic", "thromb", "embol", "fractur", "anesthe", "anaesthe", "analges",
    "antibiot", "anticoag", "antisept", "prophyla", "transfus", "hemorrh", "haemorrh", "bleed",
    "wound", "sutur", "catheter", "intubat", "ventilat", "incision", "chlorhex", "iodine",
    "povidone", "heparin", "opioid", "insulin", "steroid", "cancer", "tumo", "diabet",
    "hypertens", "cef", "tranexamic", "aspirin", "warfarin", "morphin", "fentanyl", "ketamine",
    "propofol", "dose", "dosage", "mrsa",
)  # fmt: skip
_UNIT = re.compile(
    r"\b\d+(?:[.,]\d+)?\s*"
    r"(?:mg/kg|mcg/kg|mg|mcg|µg|g|kg|ml|mL|L|IU|units?|mmHg|mmol/L|%|h|hours?|days?)(?!\w)|"
    r"\b\d+(?:[.,]\d+)?%"
)
_WORD = re.compile(r"[^\W_][\w'-]*")


def clinical_terms(question: str) -> list[str]:
    """The clinical terms of a question, once each in order: doses and amounts with a unit,
    abbreviations in capitals, and words with a clinical ending or stem."""
    found = [m.group() for m in _UNIT.finditer(question)]
    units = [m.span() for m in _UNIT.finditer(question)]
    for m in _WORD.finditer(question):
        inside_unit = any(s <= m.start() < e for s, e in units)
        if not inside_unit and _is_clinical(m.group()):
            found.append(m.group())
    return list(dict.fromkeys(found))


def _is_clinical(word: str) -> bool:
    letters = [c for c in word if c.isalpha()]
    if 2 <= len(letters) <= 7 and sum(c.isupper() for c in letters) >= 2:
        return True  # an abbreviation: "SSI", "CHG", "HbA1c", "COVID-19"
    lower = word.lower()
    return (len(lower) >= 6 and lower.endswith(_SUFFIXES)) or lower.startswith(_STEMS)
