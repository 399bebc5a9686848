"""Draw the documents whose evidence type is checked by hand (benchmarks/reviews/evidence-types.jsonl).

A fixed, seeded draw from each collection of the shared medical library, written as what a
reviewer reads: the title, subject terms, section headings and the opening text. No classifier
output is shown, so the verdicts do not lean on the rules they judge.

    .venv/bin/python benchmarks/evidence_sample.py ../shared/data/library --out /tmp/evidence-sample.jsonl
    .venv/bin/python benchmarks/evidence_sample.py ../shared/data/library --seed 23 \
        --exclude benchmarks/reviews/evidence-types.jsonl --out /tmp/evidence-heldout.jsonl

The first draw (seed 22) is the one the rules were refined on; the second, drawn without the
first's documents after that, is held out: it was reviewed once the rules were frozen.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

from evidenceqa.loaders import LoadError, load

# Per collection: how many documents are drawn. PubMed abstracts hold the most study designs.
DRAW = {"covidqa_articles.jsonl": 45, "pubmedqa_abstracts.jsonl": 70, "medquad_nih.jsonl.gz": 15}
OPENING_CHARS = 2500


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("library", type=Path, help="the shared library folder")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=22)
    parser.add_argument("--exclude", type=Path, help="a review whose documents are not drawn again")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    taken = set()
    if args.exclude:
        taken = {json.loads(line)["doc_id"] for line in args.exclude.read_text(encoding="utf-8").splitlines()}
    with args.out.open("w", encoding="utf-8") as out:
        for name, n in DRAW.items():
            docs = [
                d for d in load(args.library / name) if not isinstance(d, LoadError) and d.doc_id not in taken
            ]
            for doc in sorted(rng.sample(docs, min(n, len(docs))), key=lambda d: d.doc_id):
                text = " ".join(p.text for p in doc.paragraphs())
                row = {
                    "doc_id": doc.doc_id,
                    "title": doc.title,
                    "topics": doc.topics,
                    "headings": [" / ".join(path) for path, _ in doc.walk() if path],
                    "opening": text[:OPENING_CHARS],
                }
                out.write(json.dumps(row, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
