"""A content-gap set: questions whose source documents are left out of the search.

A seeded share of a benchmark's gold documents is held out. Questions whose gold documents are
all held out become "gap" questions (the library cannot answer them: the honest answer is "I don't
have adequate information"); questions whose gold documents all remain stay "answerable".
Questions with gold on both sides are dropped. Every row carries the held-out ids in
`meta.exclude_doc_ids`, and searches pre-filter them away inside the engine — the same results as
an index without them, except that BM25's corpus statistics still count them.

It is the input for calibrating abstention (the Answering issue): how well does the best
retrieval score tell a gap question from an answerable one?

Holding an article out does not take its facts out of the library: another article, or an NIH
page, may state the same answer. A review of a gap set (`read_review`) records, per gap question,
whether the evidence that remains states the answer, with the chunk and the sentence that does;
abstention's verified labels (`bench.answers`) count such a question as answered, not as a gap.
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Any

from evidenceqa.answer.calibration import auc
from evidenceqa.bench.retrieval import Question
from evidenceqa.jsonl import read_rows

# The content-gap set every command builds unless told otherwise: abstention is calibrated on it
# and answers are scored on it, so they must agree.
FRACTION = 0.25
SEED = 13


def build(questions: list[Question], fraction: float = FRACTION, seed: int = SEED) -> list[dict[str, Any]]:
    gold = sorted({doc for q in questions for doc in q.gold_doc_ids})
    held_out = sorted(random.Random(seed).sample(gold, round(len(gold) * fraction)))
    out = set(held_out)
    rows = []
    for q in questions:
        inside = [doc in out for doc in q.gold_doc_ids]
        if not q.gold_doc_ids or (any(inside) and not all(inside)):
            continue
        rows.append(
            {
                "query_id": q.query_id,
                "question": q.question,
                "gold_doc_ids": q.gold_doc_ids,
                "gold_passages": q.gold_passages,
                "answers": [],
                "meta": {**q.meta, "answerable": not all(inside), "exclude_doc_ids": held_out},
            }
        )
    return rows


# A reviewer's verdicts on a gap question's evidence; only "answered" changes a label.
VERDICTS = ("answered", "partly", "not_answered", "ill_posed")


def read_review(path: Path) -> dict[str, str]:
    """The chunks a review found to state a gap question's answer: query_id → chunk_id.

    Each line: {"query_id", "verdict" (one of VERDICTS), "chunk_id" and "quote" (the chunk's
    sentence that answers; required for "answered"), "reason"}. A malformed line is an error that
    names it."""
    verdicts = read_rows(path, _answering_chunk, "a review verdict")
    return dict(verdict for verdict in verdicts if verdict is not None)


def _answering_chunk(row: dict[str, Any]) -> tuple[str, str] | None:
    """(query_id, chunk_id) of an "answered" verdict; None for the others."""
    verdict = row["verdict"]
    if verdict not in VERDICTS:
        raise ValueError(f"verdict {verdict!r} is not one of {', '.join(VERDICTS)}")
    if verdict != "answered":
        return None
    if not row.get("chunk_id") or not row.get("quote"):
        raise ValueError("an answered verdict names the chunk_id and quotes its sentence")
    return str(row["query_id"]), str(row["chunk_id"])


def separation(
    rows: list[dict[str, Any]], top_score: Callable[[dict[str, Any]], tuple[float, bool]]
) -> tuple[list[list[str]], float]:
    """Per kind: questions, gold found in the top 10 and the best score's quartiles; and the AUC of
    the best score as a detector of answerable questions. `top_score(row)` → (score, gold in top 10)."""
    measured: dict[bool, list[float]] = {True: [], False: []}
    found = {True: 0, False: 0}
    for row in rows:
        answerable = row["meta"]["answerable"]
        best, hit = top_score(row)
        measured[answerable].append(best)
        found[answerable] += hit
    table = []
    for answerable, label in ((True, "answerable"), (False, "content gap")):
        scores = measured[answerable]
        quartiles = statistics.quantiles(scores, n=4) if len(scores) > 1 else [float("nan")] * 3
        share = found[answerable] / len(scores) if scores else 0.0
        table.append([label, str(len(scores)), f"{share:.1%}", *(f"{q:.3f}" for q in quartiles)])
    return table, auc(measured[True], measured[False])
