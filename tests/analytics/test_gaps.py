"""Content gaps: near-identical questions cluster together, apart from other topics, named by their words."""

from __future__ import annotations

import numpy as np

from evidenceqa.analytics.gaps import GapQuestion, cluster, content_gaps, topic_terms
from evidenceqa.answer.engine import Engine

QUESTIONS = [
    "What is the first-line antibiotic for acute otitis media in toddlers?",
    "Which antibiotic is first line for acute otitis media in young children?",
    "How should we treat otitis media in toddlers: which antibiotic first?",
    "Does melatonin reduce postoperative delirium in elderly patients?",
    "Can melatonin prevent delirium after surgery in older patients?",
    "How long should a cast stay on after a scaphoid fracture?",
]


def test_clusters_merge_only_similar_groups() -> None:
    vectors = np.array([[1.0, 0.0], [0.99, 0.141], [0.0, 1.0], [0.1, 0.995]], dtype=np.float32)
    assert cluster(vectors, min_similarity=0.9) == [[0, 1], [2, 3]]
    assert cluster(vectors, min_similarity=0.999) == [[0], [1], [2], [3]]
    assert cluster(vectors, min_similarity=-1.0) == [[0, 1, 2, 3]]
    assert cluster(np.empty((0, 2), dtype=np.float32)) == []


def test_topics_are_named_by_the_words_most_questions_share() -> None:
    # In all three: antibiotic, otitis, media, first; longest first, then alphabetically.
    assert topic_terms(QUESTIONS[:3]) == ["antibiotic", "otitis", "first"]
    # Variants count together under their stem and show in their most used form.
    assert topic_terms(["Infections after surgery", "Infection rates", "infection control"], 1) == [
        "infection"
    ]


def test_the_gap_list_groups_the_same_question_asked_differently(engine: Engine) -> None:
    asked = [GapQuestion(i + 1, q) for i, q in enumerate(QUESTIONS)]
    asked.append(GapQuestion(7, QUESTIONS[0]))  # the same question twice: one topic, shown once
    topics = content_gaps(asked, engine.embedder.embed)
    assert [(t.count, sorted(t.answer_ids)) for t in topics] == [(4, [1, 2, 3, 7]), (2, [4, 5]), (1, [6])]
    otitis, delirium, _ = topics
    assert otitis.name == "antibiotic · otitis · first"
    assert otitis.examples[0] == QUESTIONS[0] and len(otitis.examples) == 3
    assert delirium.name == "melatonin · delirium · patients"
    assert content_gaps([], engine.embedder.embed) == []
