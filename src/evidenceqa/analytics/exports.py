"""Exports for the clinical experts: the pilot's answers and feedback as CSV (a spreadsheet) and JSON.

People appear by user id only: the experts review answers, not who asked them.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evidenceqa.analytics.rows import Exchange


def answer_record(x: Exchange) -> dict[str, Any]:
    """One answer as a flat row (lists joined with "; " in the CSV)."""
    return {
        "answer_id": x.answer_id,
        "conversation_id": x.conversation_id,
        "user_id": x.user_id,
        "created_at": x.created_at.isoformat(),
        "question": x.answer.question,
        "answer": x.answer.answer,
        "abstained": x.answer.abstained,
        "cited_doc_ids": list(x.cited_doc_ids),
        "cited_titles": [title or "" for _, title in x.cited],
        "p_answerable": x.answer.p_answerable,
        "time_limit": x.answer.temporal,
        "latency_s": None if x.latency_ms is None else round(x.latency_ms / 1000, 3),
        "cache_hit": x.answer.cache_hit,
        "cost_usd": x.cost_usd,
        "index_version": x.answer.index_version,
        "ratings": len(x.feedback),
        "mean_rating": x.rating,
    }


def feedback_records(rows: Sequence[Exchange]) -> list[dict[str, Any]]:
    """Every rating, with the question and answer it is about."""
    return [
        {
            "feedback_id": f.id,
            "answer_id": x.answer_id,
            "user_id": f.user_id,
            "created_at": f.created_at.isoformat(),
            "rating": f.rating,
            "comment": f.comment,
            "question": x.answer.question,
            "answer": x.answer.answer,
            "abstained": x.answer.abstained,
        }
        for x in rows
        for f in x.feedback
    ]


def write_csv(path: Path, records: Sequence[dict[str, Any]], fields: Sequence[str]) -> Path:
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(fields))
        writer.writeheader()
        for record in records:
            writer.writerow({k: "; ".join(v) if isinstance(v, list) else v for k, v in record.items()})
    return path


def write_json(path: Path, records: Sequence[dict[str, Any]]) -> Path:
    path.write_text(json.dumps(list(records), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


# Column order of an empty export, so its CSV still has its header.
ANSWER_FIELDS = [
    "answer_id", "conversation_id", "user_id", "created_at", "question", "answer", "abstained",
    "cited_doc_ids", "cited_titles", "p_answerable", "time_limit", "latency_s", "cache_hit", "cost_usd",
    "index_version", "ratings", "mean_rating",
]  # fmt: skip
FEEDBACK_FIELDS = ["feedback_id", "answer_id", "user_id", "created_at", "rating", "comment", "question",
                   "answer", "abstained"]  # fmt: skip


def write_exports(rows: Sequence[Exchange], out: Path) -> list[Path]:
    """conversations.csv/.json (one row per answer) and feedback.csv/.json in `out`."""
    out.mkdir(parents=True, exist_ok=True)
    answers = [answer_record(x) for x in rows]
    feedback = feedback_records(rows)
    return [
        write_csv(out / "conversations.csv", answers, ANSWER_FIELDS),
        write_json(out / "conversations.json", answers),
        write_csv(out / "feedback.csv", feedback, FEEDBACK_FIELDS),
        write_json(out / "feedback.json", feedback),
    ]
