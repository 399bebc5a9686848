"""The retrieval benchmark: run a question file through search and score it at both levels.

Benchmark rows (the shared data's format): query_id, question, gold_doc_ids, gold_passages,
answers, meta. A report holds, per search mode, the metrics at the document and the passage level,
plus each question's first relevant rank, so slices and comparisons can be made afterwards.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Any

from evidenceqa.bench.metrics import METRICS, QueryScores, Ranked, aggregate, gold_positions, score
from evidenceqa.index.base import Filters
from evidenceqa.jsonl import read_rows
from evidenceqa.retrieval.retriever import Retriever, SearchMode

LEVELS = ("document", "passage")


@dataclass(frozen=True)
class Question:
    query_id: str
    question: str
    gold_doc_ids: list[str]
    gold_passages: list[str]
    meta: dict[str, Any]

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Question:
        """A benchmark row (or a generated one: temporal, content-gap) as a question."""
        return cls(
            query_id=str(row["query_id"]),
            question=str(row["question"]).strip(),
            gold_doc_ids=list(row.get("gold_doc_ids") or []),
            gold_passages=list(row.get("gold_passages") or []),
            meta=dict(row.get("meta") or {}),
        )

    @property
    def answerable(self) -> bool:
        """Whether the row names what answers it; clinician-dev's unanswerable rows do not, and have
        no rank to score (they test abstention, not retrieval)."""
        return bool(self.gold_doc_ids or self.gold_passages)


def read_questions(path: Path, limit: int | None = None) -> list[Question]:
    """Questions from a benchmark JSONL; a malformed row is an error naming the line."""
    return list(islice(read_rows(path, Question.from_row, "a benchmark row"), limit or None))


def question_filters(q: Question, scope: tuple[str, ...] = ()) -> Filters:
    """The search a benchmark prescribes: its collections (`scope`; empty means all), and the
    documents a row holds out of the search (a content-gap set does)."""
    return Filters(collections=scope, exclude_doc_ids=tuple(q.meta.get("exclude_doc_ids") or ()))


@dataclass
class ModeResult:
    mode: str
    metrics: dict[str, dict[str, float]]  # level → metric → value
    per_query: list[dict[str, Any]]  # query_id, first relevant rank per level
    latency_ms: list[float]


def run(
    retriever: Retriever,
    questions: list[Question],
    mode: SearchMode,
    k: int = 10,
    on_question: Callable[[], None] | None = None,
    scope: tuple[str, ...] = (),
) -> ModeResult:
    per_level: dict[str, list[QueryScores]] = {level: [] for level in LEVELS}
    per_query, latency = [], []
    for q in (q for q in questions if q.answerable):
        response = retriever.search(q.question, k=k, mode=mode, filters=question_filters(q, scope))
        latency.append(response.timings_ms.get("total", 0.0))
        ranked = [Ranked(r.chunk.doc_id, r.chunk.body) for r in response.results]
        row: dict[str, Any] = {"query_id": q.query_id}
        for level, n_gold in (("document", len(q.gold_doc_ids)), ("passage", len(q.gold_passages))):
            if level == "passage" and not n_gold:
                continue
            scores = score(gold_positions(ranked, q.gold_doc_ids, q.gold_passages, level), n_gold)
            per_level[level].append(scores)
            row[f"first_{level}"] = scores.first
        per_query.append(row)
        if on_question:
            on_question()
    metrics = {level: aggregate(values) for level, values in per_level.items() if values}
    return ModeResult(mode, metrics, per_query, latency)


def table_rows(results: list[ModeResult]) -> Iterator[list[str]]:
    """One row per mode and level: the metrics as fixed-point strings."""
    for result in results:
        for level, values in result.metrics.items():
            yield [result.mode, level, *(f"{values[m]:.3f}" for m in METRICS)]


def write_report(results: list[ModeResult], benchmark: Path, out: Path, settings: dict[str, Any]) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"retrieval-{benchmark.stem}.json"
    payload = {
        "benchmark": str(benchmark),
        "questions": len(results[0].per_query) if results else 0,
        "settings": settings,
        "modes": {r.mode: {"metrics": r.metrics, "per_query": r.per_query} for r in results},
    }
    path.write_text(json.dumps(payload, indent=1), encoding="utf-8")
    return path
