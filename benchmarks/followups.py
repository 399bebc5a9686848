"""Follow-up questions: second-turn retrieval with and without resolving them against the first turn
(a benchmark, not a test).

Reads two-turn conversations (benchmarks/conversations/followups-dev.jsonl: the second turn's gold
documents), searches each second question the default way over an ingested home, and prints doc
MRR@10 and hit@10 per kind of follow-up for: the question as asked, the previous question and the
follow-up run together (the common baseline), and the question resolved by
`evidenceqa.retrieval.followup`. "switch" rows are new questions that must not be rewritten.
`--show` prints every resolution. Example:

    .venv/bin/python benchmarks/followups.py --home .evidenceqa-bench \
        --conversations benchmarks/conversations/followups-dev.jsonl
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from evidenceqa.answer.engine import Engine
from evidenceqa.bench import machine
from evidenceqa.retrieval.followup import FollowUps, catalogue_rarity
from evidenceqa.retrieval.retriever import Retriever
from evidenceqa.settings import load_settings
from evidenceqa.text import markdown

WAYS = ("as asked", "previous + follow-up", "resolved")
DEPTH = 10


def read_conversations(path: Path) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    for row in rows:
        if len(row.get("turns", [])) != 2 or not row["turns"][1].get("gold_doc_ids"):
            raise SystemExit(f"{path}: {row.get('conversation_id')!r} is not two turns with gold documents")
    return rows


def reciprocal_rank(retriever: Retriever, question: str, gold: set[str]) -> float:
    results = retriever.search(question, k=DEPTH).results
    return next((1 / r.rank for r in results if r.chunk.doc_id in gold), 0.0)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--conversations", type=Path, required=True)
    parser.add_argument("--show", action="store_true", help="print each follow-up and what it became")
    args = parser.parse_args()
    conversations = read_conversations(args.conversations)
    scores: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    rewritten: dict[str, int] = defaultdict(int)
    with Engine.open(load_settings(home=args.home)) as engine:
        retriever = engine.retriever()
        followups = FollowUps(engine.embedder, catalogue_rarity(engine.catalogue))
        for row in conversations:
            first, second = row["turns"][0]["question"], row["turns"][1]["question"]
            gold = set(row["turns"][1]["gold_doc_ids"])
            resolution = followups.resolve(second, [first])
            asked = {"as asked": second, "previous + follow-up": f"{first} {second}",
                     "resolved": resolution.question}  # fmt: skip
            for kind in {row["kind"], "all follow-ups" if row["kind"] != "switch" else "switch"}:
                for way, question in asked.items():
                    scores[kind][way].append(reciprocal_rank(retriever, question, gold))
                rewritten[kind] += resolution.changed
            if args.show:
                print(f"{row['conversation_id']} [{resolution.how}] {second!r} → {resolution.question!r}")
    header = ["kind", "conversations", "rewritten", *(f"{way} MRR@10" for way in WAYS),
              *(f"{way} hit@10" for way in WAYS)]  # fmt: skip
    rows = []
    for kind in sorted(scores, key=lambda k: (k in ("all follow-ups", "switch"), k)):
        values = scores[kind]
        n = len(values["resolved"])
        rows.append([kind, str(n), str(rewritten[kind] // 1),
                     *(f"{sum(values[w]) / n:.3f}" for w in WAYS),
                     *(f"{sum(v > 0 for v in values[w]) / n:.2f}" for w in WAYS)])  # fmt: skip
    print(markdown.table(header, rows))
    print(machine.measured_on())


if __name__ == "__main__":
    main()
