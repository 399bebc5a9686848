"""From a library to training triplets: pairs mined, checked against the benchmarks, balanced by
kind, each given a BM25 hard negative, and batched so no batch holds two pairs of one document
(a second pair's positive would be a false in-batch negative for the first).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from evidenceqa.adapt.leakage import Holdout, normalise
from evidenceqa.adapt.negatives import BM25Pool, Passage, hard_negative
from evidenceqa.adapt.pairs import MIN_PASSAGE_WORDS, PAIR_KINDS, Pair, mine_pairs
from evidenceqa.documents import Document


@dataclass(frozen=True)
class Triplet:
    kind: str
    query: str
    positive: str
    negative: str
    doc_id: str


@dataclass
class TrainingSet:
    triplets: list[Triplet]
    mined: Counter[str]  # pairs per kind before the guard and the balance
    refused: Counter[str]  # queries the benchmark guard refused, by reason
    without_negative: int  # pairs dropped for want of a hard negative


def build(documents: Iterable[Document], holdout: Holdout, max_pairs: int, seed: int) -> TrainingSet:
    documents = list(documents)
    pairs = list(mine_pairs(documents, skip_questions_for=frozenset(holdout.gold_doc_ids)))
    mined = Counter(p.kind for p in pairs)
    allowed = [p for p in pairs if holdout.allows(p.query)]
    chosen = balance(allowed, max_pairs, random.Random(seed))
    pool = BM25Pool(list(passages(documents)))
    titles = {d.doc_id: _title(d) for d in documents}
    triplets = []
    for pair, candidates in zip(chosen, pool.top([p.query for p in chosen]), strict=True):
        negative = hard_negative(pool, candidates, Passage(pair.positive, pair.doc_id, titles[pair.doc_id]))
        if negative:
            triplets.append(Triplet(pair.kind, pair.query, pair.positive, negative, pair.doc_id))
    return TrainingSet(triplets, mined, Counter(holdout.refused), len(chosen) - len(triplets))


def passages(documents: Iterable[Document]) -> Iterable[Passage]:
    for doc in documents:
        for top in doc.sections:
            for _, section in top.walk():
                for paragraph in section.paragraphs:
                    if len(paragraph.text.split()) >= MIN_PASSAGE_WORDS:
                        yield Passage(paragraph.text, doc.doc_id, _title(doc))


def _title(doc: Document) -> str:
    """Titles compared without case or punctuation: "Tourette Syndrome" is "Tourette syndrome"."""
    return normalise(doc.title) if doc.title else doc.doc_id


def balance(pairs: list[Pair], max_pairs: int, rng: random.Random) -> list[Pair]:
    """At most `max_pairs`, shared evenly between kinds; a kind with fewer leaves its share to the rest."""
    by_kind = {kind: [p for p in pairs if p.kind == kind] for kind in PAIR_KINDS}
    for group in by_kind.values():
        rng.shuffle(group)
    chosen: list[Pair] = []
    kinds = sorted(by_kind, key=lambda k: len(by_kind[k]))
    for position, kind in enumerate(kinds):
        share = (max_pairs - len(chosen)) // (len(kinds) - position)
        chosen.extend(by_kind[kind][:share])
    rng.shuffle(chosen)
    return chosen


def batches(triplets: list[Triplet], size: int, rng: random.Random) -> list[list[Triplet]]:
    """Shuffled batches of `size` in which every triplet comes from a different document."""
    waiting = triplets[:]
    rng.shuffle(waiting)
    result: list[list[Triplet]] = []
    while waiting:
        batch: list[Triplet] = []
        seen: set[str] = set()
        rest: list[Triplet] = []
        for triplet in waiting:
            if len(batch) < size and triplet.doc_id not in seen:
                batch.append(triplet)
                seen.add(triplet.doc_id)
            else:
                rest.append(triplet)
        result.append(batch)
        waiting = rest
    return result
