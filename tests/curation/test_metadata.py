"""The labelling rules: question type with its expected precision, topic, year."""

from __future__ import annotations

import pytest

from evidenceqa.curation.metadata import EXPECTED_PRECISION, metadata_of, question_type, topic
from evidenceqa.documents import Document


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("Is chlorhexidine safe on mucous membranes?", "clinical safety"),
        ("What is the maximum dose of tranexamic acid in knee arthroplasty?", "clinical safety"),
        ("Is cefazolin contraindicated in penicillin allergy?", "clinical safety"),
        ("What are the risks of shaving the incision site?", "clinical safety"),
        ("Does warfarin interact with amiodarone?", "clinical safety"),
        (
            "Do NSAIDs and ASA Cause More Upper Gastrointestinal Bleeding in Elderly than Adults?",
            "clinical safety",
        ),
        ("What are the treatment options for an infected hip arthroplasty?", "comprehensive"),
        ("Compare clipping and shaving before spinal surgery", "comprehensive"),
        ("What are the treatments for Deep Vein Thrombosis?", "comprehensive"),
        ("How to diagnose Tuberculosis (TB)?", "comprehensive"),
        ("Should antibiotic prophylaxis be continued after wound closure?", "context-dependent"),
        ("When should the urinary catheter be removed after surgery?", "context-dependent"),
        ("In which patients is tranexamic acid used?", "context-dependent"),
        ("Who is at risk for Deep Vein Thrombosis?", "context-dependent"),  # "at risk for": susceptibility
        ("Why Was This Study Done?", "context-dependent"),
        ("What is (are) Deep Vein Thrombosis?", "factual"),
        ("How many people are affected by Acromegaly?", "factual"),
        ("Which antiseptic was used in the trial?", "factual"),
        ("Postoperative fever in children", "context-dependent"),  # no rule: the default
    ],
)
def test_question_type_rules(question: str, expected: str) -> None:
    kind, rule = question_type(question)
    assert kind == expected
    assert rule  # always says why


def test_expected_precision_follows_the_type() -> None:
    assert EXPECTED_PRECISION == {
        "factual": "high", "context-dependent": "medium", "comprehensive": "medium", "clinical safety": "critical",
    }  # fmt: skip
    meta = metadata_of("Is chlorhexidine safe on mucous membranes?", "No.", Document("d", year=2015))
    assert (meta.question_type, meta.expected_precision, meta.year) == ("clinical safety", "critical", 2015)
    assert "“safe”" in meta.type_rule


def test_topic_from_keywords_then_the_documents_topics_then_general() -> None:
    aneurysm = Document("d", title="Infected Abdominal Aortic Aneurysm with Helicobacter cinaedi")
    name, why = topic("What is the treatment?", "", aneurysm)
    # Two keyword hits each ("infect", "helicobacter" vs "aneurysm", "aort"): the earlier row wins.
    assert name == "infection and antimicrobials" and why.startswith("keywords: ")
    assert topic("What is (are) X?", "X is a genetic disorder.", Document("d"))[0] == "genetics"
    assert topic("What is X?", "", Document("d", topics=["Geriatrics"])) == (
        "Geriatrics",
        "the document's first topic",
    )
    assert topic("What is X?", "", Document("d"))[0] == "general"
