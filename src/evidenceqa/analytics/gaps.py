"""The content-gap list: questions the library could not answer, grouped into topics for a publisher.

Questions are embedded with the library's embedder and clustered by average-linkage agglomeration on
cosine similarity: the two closest groups merge while their mean pairwise similarity is at least
`min_similarity`, so the number of topics follows from the questions, not from a chosen k. A topic is
named by the words most of its questions share (on a tie, the longer word): each question counts a
word once, and variants of a word ("infection", "infections") count together under their stem and
show as the most used form.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from evidenceqa.text.tokens import terms, tokens

# MiniLM cosines: paraphrases sit above ~0.7, questions on one narrow topic above ~0.5.
MIN_SIMILARITY = 0.55
NAME_TERMS = 3
EXAMPLES = 3


@dataclass(frozen=True)
class GapQuestion:
    answer_id: int
    question: str


@dataclass(frozen=True)
class GapTopic:
    name: str  # its most frequent words, joined by " · "
    terms: list[str]
    count: int  # questions
    answer_ids: list[int]
    examples: list[str]  # distinct questions, most asked first


def cluster(vectors: np.ndarray, min_similarity: float = MIN_SIMILARITY) -> list[list[int]]:
    """Groups of row indices of unit `vectors`, largest first (ties: earliest row first)."""
    n = len(vectors)
    if n == 0:
        return []
    similarity = (vectors @ vectors.T).astype(np.float64)
    np.fill_diagonal(similarity, -np.inf)
    members: dict[int, list[int]] = {i: [i] for i in range(n)}
    while len(members) > 1:
        i, j = np.unravel_index(int(np.argmax(similarity)), similarity.shape)
        if similarity[i, j] < min_similarity:
            break
        a, b = int(min(i, j)), int(max(i, j))
        na, nb = len(members[a]), len(members[b])
        # Average linkage (Lance-Williams): the merged group's mean similarity to every other group.
        merged = (na * similarity[a] + nb * similarity[b]) / (na + nb)
        similarity[a, :], similarity[:, a] = merged, merged
        similarity[a, a] = -np.inf
        similarity[b, :], similarity[:, b] = -np.inf, -np.inf
        members[a] += members.pop(b)
    return sorted((sorted(group) for group in members.values()), key=lambda g: (-len(g), g[0]))


def topic_terms(questions: Sequence[str], limit: int = NAME_TERMS) -> list[str]:
    """The words most questions share (by stem), each shown in its most used form."""
    questions_with: Counter[str] = Counter()
    forms: dict[str, Counter[str]] = {}
    for question in questions:
        words = [w for w in tokens(question) if w.isalpha() and len(w) > 2]
        for word, stem in zip(words, terms(" ".join(words)), strict=True):
            forms.setdefault(stem, Counter())[word] += 1
        questions_with.update(set(terms(" ".join(words))))
    shown = {stem: forms[stem].most_common(1)[0][0] for stem in questions_with}
    # Ties go to longer words: "antibiotic" says more about a topic than "first".
    ranked = sorted(shown, key=lambda stem: (-questions_with[stem], -len(shown[stem]), shown[stem]))
    return [shown[stem] for stem in ranked[:limit]]


def content_gaps(
    questions: Sequence[GapQuestion],
    embed: Callable[[list[str]], np.ndarray],
    min_similarity: float = MIN_SIMILARITY,
) -> list[GapTopic]:
    """The questions grouped into named topics, the most asked topic first."""
    if not questions:
        return []
    vectors = embed([q.question for q in questions])
    topics = []
    for group in cluster(vectors, min_similarity):
        texts = [questions[i].question for i in group]
        named = topic_terms(texts)
        topics.append(
            GapTopic(
                name=" · ".join(named) or texts[0],
                terms=named,
                count=len(group),
                answer_ids=[questions[i].answer_id for i in group],
                examples=[text for text, _ in Counter(texts).most_common(EXAMPLES)],
            )
        )
    return topics
