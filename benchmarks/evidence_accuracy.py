"""How often the evidence-type rules agree with the hand-checked sample (docs/evidence.md).

Reads the reviewed verdicts (benchmarks/reviews/evidence-types.jsonl), labels the same documents
from the shared library as ingest does, and prints, per type, how many the review holds, how many
the rules gave, precision and recall; then overall accuracy and every disagreement.

    .venv/bin/python benchmarks/evidence_accuracy.py ../shared/data/library benchmarks/reviews/evidence-types.jsonl
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from evidenceqa import evidence_types
from evidenceqa.loaders import LoadError, load


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("library", type=Path, help="the shared library folder")
    parser.add_argument("review", type=Path, help="the reviewed verdicts (JSONL)")
    args = parser.parse_args()
    verdicts = {
        row["doc_id"]: row["verdict"]
        for row in map(json.loads, args.review.read_text(encoding="utf-8").splitlines())
    }
    labels: dict[str, evidence_types.Classification] = {}
    for path in sorted(args.library.iterdir()):
        for doc in load(path):
            if not isinstance(doc, LoadError) and doc.doc_id in verdicts:
                evidence_types.label(doc)
                labels[doc.doc_id] = evidence_types.Classification(
                    doc.evidence_type or "", doc.evidence_reason or ""
                )
    missing = sorted(set(verdicts) - set(labels))
    if missing:
        raise SystemExit(
            f"{args.review}: {len(missing)} reviewed documents are not in {args.library}: {missing[:3]}"
        )
    print("| evidence type | in the review | labelled so | agree | precision | recall |")
    print("|---|---:|---:|---:|---:|---:|")
    for kind in evidence_types.TYPES:
        truth = {d for d, v in verdicts.items() if v == kind.key}
        given = {d for d, c in labels.items() if c.key == kind.key}
        agree = len(truth & given)
        precision = f"{agree / len(given):.2f}" if given else "–"
        recall = f"{agree / len(truth):.2f}" if truth else "–"
        print(f"| {kind.name} | {len(truth)} | {len(given)} | {agree} | {precision} | {recall} |")
    right = sum(labels[d].key == v for d, v in verdicts.items())
    print(
        f"| **all** | {len(verdicts)} | {len(labels)} | {right} | accuracy **{right / len(verdicts):.2f}** | |"
    )
    wrong = [(d, v) for d, v in sorted(verdicts.items()) if labels[d].key != v]
    if wrong:
        print(f"\nThe {len(wrong)} disagreements (reviewed → labelled, and the rule that decided):\n")
        for doc_id, verdict in wrong:
            print(f"- `{doc_id}`: {verdict} → {labels[doc_id].key} ({labels[doc_id].reason})")


if __name__ == "__main__":
    main()
