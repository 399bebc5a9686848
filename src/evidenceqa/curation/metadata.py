"""Metadata of a candidate pair: year, topic, question type and expected precision.

Every label comes from a rule in the tables below, and the rule that fired is kept with the label
(`type_rule`, `topic_rule`), so a reviewer sees why and can override it on the review page or in the
CSV. The question types are the seed's: factual, context-dependent, comprehensive, clinical safety;
each has the precision an answer to it is expected to reach.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from evidenceqa.documents import Document

QUESTION_TYPES = ("factual", "context-dependent", "comprehensive", "clinical safety")
PRECISIONS = ("high", "medium", "critical")
EXPECTED_PRECISION: dict[str, str] = {
    "factual": "high",  # one checkable fact: the answer is right or wrong
    "context-dependent": "medium",  # the answer depends on the patient or setting
    "comprehensive": "medium",  # many parts: some may be missing without the rest being wrong
    "clinical safety": "critical",  # a wrong answer can harm a patient
}

# Ordered: the first rule whose pattern occurs in the question decides. Safety comes first, so a
# safety question phrased as a fact ("What is the maximum dose …?") is still held to the critical bar.
# "risk of/from/with …" asks about harm; "at risk for" asks who is susceptible (context-dependent).
TYPE_RULES: tuple[tuple[str, str, re.Pattern[str]], ...] = (
    (
        "clinical safety",
        "names a harm, a dose or an interaction",
        re.compile(
            r"\b(safe|safely|safety|unsafe|contraindicat\w*|risks? (of|from|with|when|in|to)|doses?|dosage|dosing|"
            r"overdose|interact\w*|adverse|side[- ]effects?|complications?|toxic\w*|allerg\w*|harm\w*|bleeding)\b",
            re.I,
        ),
    ),
    (
        "comprehensive",
        "asks for options, a comparison or an overview",
        re.compile(
            r"\b(options?|alternatives?|compar\w*|versus|vs\.?|overview|approaches|information about)\b"
            r"|^what are the (treatments|symptoms|signs|causes|stages|types|genetic changes)\b"
            r"|^how (to|is|are) \w* ?(diagnos|prevent|treat|manag)\w*|^what (research|did the researchers)\b"
            r"|\bwhat does the evidence show\b",
            re.I,
        ),
    ),
    (
        "context-dependent",
        "depends on the patient, timing or setting",
        re.compile(
            r"\b(should|in which patients|for whom|at risk|when (to|should|is it)|depend\w*|outlook|prognosis|"
            r"what to do|mean)\b|^why\b",
            re.I,
        ),
    ),
    (
        "factual",
        "asks for one fact",
        re.compile(
            r"^(what|which|how (many|much|long|often)|who|where|when|is|are|was|were|does|do|did|can)\b", re.I
        ),
    ),
)
DEFAULT_TYPE = ("context-dependent", "no rule matched")

# Topic vocabulary: a controlled list, so benchmark slices group questions that free-text document
# keywords would scatter. The topic with the most keyword hits in the question, the document's title
# and its topics wins; ties go to the earlier row.
TOPIC_KEYWORDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("infection and antimicrobials", ("infect", "antibiot", "antimicrob", "sepsis", "septic", "bacteri",
                                      "tuberculosis", "acinetobacter", "staphylococc", "mrsa", "ssi",
                                      "helicobacter", "mycobacter")),
    ("vaccination", ("vaccin", "immuniz", "immunis", "varicella")),
    ("cardiovascular and thrombosis", ("thrombo", "embol", "aneurysm", "aort", "endocarditis", "cardiac",
                                       "heart", "vascular", "stent")),
    ("oncology", ("cancer", "tumor", "tumour", "leukemia", "leukaemia", "lymphoma", "carcinoma", "malignan",
                  "oncolog", "chemotherap")),
    ("orthopaedics and spine", ("arthroplast", "hip", "knee", "fracture", "spine", "spinal", "orthop",
                                "back pain")),
    ("wound care", ("wound", "dressing", "incision", "suture")),
    ("medication safety", ("drug", "medication", "nsaid", "aspirin", "pharmac", "prescri")),
    ("anaesthesia and perioperative care", ("anaesth", "anesth", "perioperative", "postoperative",
                                            "preoperative", "intraoperative", "sedation", "airway")),
    ("gastrointestinal", ("gastro", "bowel", "colorectal", "hepat", "liver", "pancrea", "anal cancer",
                          "anus", "rectal")),
    ("neurology", ("dementia", "alzheimer", "brain", "neuro", "cognitive", "septum pellucidum")),
    ("endocrine and metabolism", ("diabet", "a1c", "hormone", "acromegaly", "thyroid", "pituitary",
                                  "glucose")),
    ("genetics", ("genetic", "inherit", "mutation", "chromosom")),
    ("oral health", ("gum", "periodont", "dental", "teeth", "tooth", "oral health")),
    ("research methods", ("systematic review", "meta-analys", "prisma", "reporting", "core outcome",
                          "delphi")),
)  # fmt: skip
FALLBACK_TOPIC = "general"
ANSWER_LEAD_WORDS = 40


@dataclass(frozen=True)
class Metadata:
    year: int | None
    topic: str
    topic_rule: str
    question_type: str
    type_rule: str
    expected_precision: str
    collection: str = "default"
    doc_type: str = "document"


def question_type(question: str) -> tuple[str, str]:
    """(type, the rule that decided it) for a question, by the first matching row of TYPE_RULES."""
    text = " ".join(question.split())
    for kind, reason, pattern in TYPE_RULES:
        if match := pattern.search(text):
            return kind, f"{reason}: “{match.group(0).strip()}”"
    return DEFAULT_TYPE


def topic(question: str, answer: str, doc: Document) -> tuple[str, str]:
    """(topic, why): the vocabulary's best match, else the document's own first topic, else "general".
    The answer's opening words count too: "What is (are) X?" names a condition, its answer says what kind."""
    lead = " ".join(answer.split()[:ANSWER_LEAD_WORDS])
    text = " ".join([question, lead, doc.title or "", *doc.topics]).lower()
    best: str | None = None
    best_hits: list[str] = []
    for name, keywords in TOPIC_KEYWORDS:
        hits = [k for k in keywords if re.search(rf"\b{re.escape(k)}", text)]
        if len(hits) > len(best_hits):
            best, best_hits = name, hits
    if best is not None:
        return best, "keywords: " + ", ".join(best_hits)
    if doc.topics:
        return doc.topics[0], "the document's first topic"
    return FALLBACK_TOPIC, "no keyword and no document topic"


def metadata_of(question: str, answer: str, doc: Document) -> Metadata:
    kind, type_rule = question_type(question)
    name, topic_rule = topic(question, answer, doc)
    return Metadata(
        year=doc.year,
        topic=name,
        topic_rule=topic_rule,
        question_type=kind,
        type_rule=type_rule,
        expected_precision=EXPECTED_PRECISION[kind],
        collection=doc.collection,
        doc_type=doc.doc_type,
    )
