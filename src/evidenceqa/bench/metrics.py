"""Retrieval metrics at the document and the passage level: pure functions over ranked results.

For one question, results are ranked chunks (best first). A chunk is relevant
- at the document level when it comes from a gold document;
- at the passage level when its text contains a gold passage (white space and case normalised).

Per question, with `first` the 1-based rank of the first relevant chunk (None if none in the list):
- RR@10 = 1/first if first ≤ 10 else 0 (averaged: MRR@10);
- Success@k = 1 if first ≤ k (the share of questions with a relevant chunk in the top k; also called
  hit@k. Not precision@k, which would count every relevant chunk of the k);
- Recall@10 = the share of distinct gold items (documents / passages) found in the top 10;
- nDCG@10 with binary gains, each gold item counted once, at the rank where it first appears.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

CUTOFF = 10
_WS = re.compile(r"\s+")


def normalize(text: str) -> str:
    return _WS.sub(" ", text).strip().lower()


@dataclass(frozen=True)
class Ranked:
    """What the metrics need of one retrieved chunk."""

    doc_id: str
    text: str


def gold_positions(results: Sequence[Ranked], gold_docs: Sequence[str], gold_passages: Sequence[str],
                   level: str) -> list[tuple[int, str]]:  # fmt: skip
    """(rank, gold item) for every result that is relevant at `level`, in rank order."""
    found = []
    if level == "document":
        wanted = set(gold_docs)
        for rank, result in enumerate(results, start=1):
            if result.doc_id in wanted:
                found.append((rank, result.doc_id))
        return found
    passages = [normalize(p) for p in gold_passages if p.strip()]
    for rank, result in enumerate(results, start=1):
        text = normalize(result.text)
        found.extend((rank, p) for p in passages if p in text)
    return found


def reciprocal_rank(first: int | None) -> float:
    return 1 / first if first is not None and first <= CUTOFF else 0.0


def success(first: int | None, k: int) -> float:
    return float(first is not None and first <= k)


@dataclass(frozen=True)
class QueryScores:
    first: int | None
    rr: float
    p1: float
    p3: float
    p5: float
    recall: float
    ndcg: float


def score(positions: list[tuple[int, str]], n_gold: int) -> QueryScores:
    first = positions[0][0] if positions else None
    within = [(rank, item) for rank, item in positions if rank <= CUTOFF]
    first_seen: dict[str, int] = {}
    for rank, item in within:
        first_seen.setdefault(item, rank)
    ideal = sum(1 / math.log2(i + 1) for i in range(1, min(n_gold, CUTOFF) + 1))
    dcg = sum(1 / math.log2(rank + 1) for rank in first_seen.values())
    return QueryScores(
        first=first,
        rr=reciprocal_rank(first),
        p1=success(first, 1),
        p3=success(first, 3),
        p5=success(first, 5),
        recall=len(first_seen) / n_gold if n_gold else 0.0,
        ndcg=dcg / ideal if ideal else 0.0,
    )


METRICS = ("MRR@10", "Success@1", "Success@3", "Success@5", "Recall@10", "nDCG@10")


def aggregate(scores: Sequence[QueryScores]) -> dict[str, float]:
    """Mean of each metric over questions; an empty list gives zeros."""
    n = len(scores) or 1
    fields = ("rr", "p1", "p3", "p5", "recall", "ndcg")
    return {name: sum(getattr(s, f) for s in scores) / n for name, f in zip(METRICS, fields, strict=True)}


# The metrics a question's first relevant rank decides alone; Recall and nDCG need every gold item.
FIRST_RANK_METRICS = ("MRR@10", "Success@1", "Success@3", "Success@5")


def aggregate_first_ranks(firsts: Sequence[int | None]) -> dict[str, float]:
    """Mean MRR@10 and Success@1/3/5 over questions from their first relevant ranks alone (None: not found)."""
    n = len(firsts) or 1
    rows = [(reciprocal_rank(f), success(f, 1), success(f, 3), success(f, 5)) for f in firsts]
    return {name: sum(row[i] for row in rows) / n for i, name in enumerate(FIRST_RANK_METRICS)}
