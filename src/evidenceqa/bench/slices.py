"""Benchmark slices: the metrics of the questions that share a type, a collection, or a year.

A question falls into one value per slice key: `question_type`, `collection` and `periop_surgical`
come from its `meta` (a question without the key is in no slice of it); `year` is the 5-year bin
of its first gold document's year in the library ("unknown" when there is none). Slice metrics
come from the first relevant ranks a benchmark run records, so nothing is searched again.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from evidenceqa.bench.metrics import aggregate_first_ranks
from evidenceqa.bench.retrieval import LEVELS, Question

META_KEYS = ("question_type", "collection", "periop_surgical")
SLICE_KEYS = (*META_KEYS, "year")
YEAR_BIN = 5
UNKNOWN = "unknown"
# A slice value needs this many questions before its figures say more than noise.
MIN_QUESTIONS = 10


@dataclass(frozen=True)
class SliceScores:
    questions: int
    metrics: dict[str, dict[str, float]]  # level → metric → value (MRR@10, Success@1/3/5)


# slice key → value → scores
Slices = dict[str, dict[str, SliceScores]]


def year_bin(year: int | None) -> str:
    if year is None:
        return UNKNOWN
    start = year - year % YEAR_BIN
    return f"{start}–{start + YEAR_BIN - 1}"


def labels(question: Question, year_of: Callable[[str], int | None]) -> dict[str, str]:
    """The slice value of `question` for every key it has."""
    found = {key: str(question.meta[key]) for key in META_KEYS if question.meta.get(key) is not None}
    gold = question.gold_doc_ids[0] if question.gold_doc_ids else None
    found["year"] = year_bin(year_of(gold) if gold else None)
    return found


def slice_scores(per_query: Sequence[dict[str, Any]], question_labels: Sequence[dict[str, str]]) -> Slices:
    """Metrics per slice value; `per_query` are a run's rows, in the order of `question_labels`."""
    groups: dict[str, dict[str, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    for row, found in zip(per_query, question_labels, strict=True):
        for key, value in found.items():
            groups[key][value].append(row)
    return {
        key: {value: _scores(groups[key][value]) for value in sorted(groups[key], key=_order)}
        for key in SLICE_KEYS
        if key in groups
    }


def _order(value: str) -> tuple[bool, str]:
    return value == UNKNOWN, value


def _scores(rows: list[dict[str, Any]]) -> SliceScores:
    metrics = {}
    for level in LEVELS:
        firsts = [row[f"first_{level}"] for row in rows if f"first_{level}" in row]
        if firsts:
            metrics[level] = aggregate_first_ranks(firsts)
    return SliceScores(len(rows), metrics)


def shown_values(values: dict[str, SliceScores]) -> list[str]:
    """The values worth a table: those with enough questions, when at least two have enough."""
    large = [value for value, scores in values.items() if scores.questions >= MIN_QUESTIONS]
    return large if len(large) >= 2 else []
