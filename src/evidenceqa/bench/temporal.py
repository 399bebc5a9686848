"""A temporal benchmark made from a dated one (PubMedQA: abstracts from 1989–2017).

Each source question whose gold document has a known year Y becomes up to three temporal
questions, phrased the way a clinician limits the evidence:

- "Studies since Y0: <question>"  (Y0 = Y − r)            → year ≥ Y0
- "Studies published in Y: <question>"                     → year = Y
- "Studies before Y1: <question>" (Y1 = Y + 1 + r)         → year ≤ Y1 − 1

(r is 0–3, drawn from a seeded generator, so the file is reproducible.) The gold document always
satisfies the constraint. A variant is kept only when the unconstrained search for the source
question shows at least one document in its top 10 that breaks the constraint: only there can
temporal handling change anything.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from evidenceqa.bench.retrieval import Question

TEMPLATES = {
    "since": "Studies since {year}: {question}",
    "in": "Studies published in {year}: {question}",
    "before": "Studies before {year}: {question}",
}


@dataclass(frozen=True)
class Constraint:
    kind: str
    year_min: int | None
    year_max: int | None

    def allows(self, year: int | None) -> bool:
        if year is None:
            return False  # an undated document cannot be shown to satisfy a year limit
        return (self.year_min is None or year >= self.year_min) and (
            self.year_max is None or year <= self.year_max
        )


def variants(gold_year: int, rng: random.Random) -> Iterator[tuple[Constraint, int]]:
    """Each constraint with the year its phrase names."""
    since = gold_year - rng.randint(0, 3)
    before = gold_year + 1 + rng.randint(0, 3)
    yield Constraint("since", since, None), since
    yield Constraint("in", gold_year, gold_year), gold_year
    yield Constraint("before", None, before - 1), before


def build(
    questions: list[Question],
    year_of: Callable[[str], int | None],
    top_years: Callable[[str], list[int | None]],
    seed: int = 13,
) -> list[dict[str, Any]]:
    """Temporal benchmark rows; `top_years(question)` gives the years of the unconstrained top 10."""
    rng = random.Random(seed)
    rows = []
    for q in questions:
        gold_year = year_of(q.gold_doc_ids[0]) if q.gold_doc_ids else None
        if gold_year is None:
            continue
        years = top_years(q.question)
        for constraint, named in variants(gold_year, rng):
            if all(constraint.allows(y) for y in years):
                continue
            question = TEMPLATES[constraint.kind].format(year=named, question=q.question)
            rows.append(
                {
                    "query_id": f"{q.query_id}-{constraint.kind}",
                    "question": question,
                    "gold_doc_ids": q.gold_doc_ids,
                    "gold_passages": [],
                    "answers": [],
                    "meta": {
                        "source_query_id": q.query_id,
                        "constraint": constraint.kind,
                        "year_min": constraint.year_min,
                        "year_max": constraint.year_max,
                        "gold_year": gold_year,
                    },
                }
            )
    return rows


@dataclass(frozen=True)
class Found:
    """One retrieved result, as the temporal evaluation needs it."""

    doc_id: str
    year: int | None


def evaluate(rows: list[dict[str, Any]], search: Callable[[str, bool], list[Found]]) -> list[list[str]]:
    """Per constraint kind and overall: MRR@10 and the share of top-10 results breaking the
    constraint, with temporal handling on and off (`search(question, temporal)`)."""
    table = []
    for kind in (*TEMPLATES, "all"):
        chosen = [r for r in rows if kind in ("all", r["meta"]["constraint"])]
        if not chosen:
            continue
        for handling in (True, False):
            rr, broken = _scores(chosen, search, handling)
            table.append([kind, str(len(chosen)), "on" if handling else "off", f"{rr:.3f}", f"{broken:.1%}"])
    return table


def _scores(
    rows: list[dict[str, Any]], search: Callable[[str, bool], list[Found]], handling: bool
) -> tuple[float, float]:
    rr_total = broken_total = 0.0
    for row in rows:
        meta = row["meta"]
        constraint = Constraint(meta["constraint"], meta["year_min"], meta["year_max"])
        found = search(row["question"], handling)[:10]
        gold = set(row["gold_doc_ids"])
        first = next((rank for rank, f in enumerate(found, start=1) if f.doc_id in gold), None)
        rr_total += 1 / first if first else 0.0
        broken_total += sum(not constraint.allows(f.year) for f in found) / len(found) if found else 0.0
    return rr_total / len(rows), broken_total / len(rows)
