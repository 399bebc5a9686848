"""Write the scale library of docs/performance.md: the shared library plus replicated copies.

The shared library (82 full-text articles, 1,000 PubMed abstracts, 5,486 NIH pages, 2,600 Wikipedia
passages) makes ~47k chunks; ×7 passes the 300k-chunk target. Copy 0 is the library itself; copy n
(n ≥ 1) repeats every document under the id `<doc_id>-copy<n>`, with its year moved n years earlier
so year filters keep a realistic spread. The text is the real text, unchanged, so term frequencies,
document lengths, section structure and vector geometry are those of real medical literature; what
replication does change is that every posting list and every neighbourhood in vector space is n
times denser — the conditions a search engine meets in a library n times larger on the same topics.
Identical text embeds to identical vectors, so the embedding cache embeds each copy's text once.
Example:

    .venv/bin/python benchmarks/scale_library.py --library ../shared/data/library --copies 7 \
        --out .evidenceqa-scale-library
"""

from __future__ import annotations

import argparse
import gzip
import json
from collections.abc import Iterator
from pathlib import Path


def documents(library: Path) -> Iterator[dict]:
    for path in sorted(library.glob("*.jsonl*")):
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rt", encoding="utf-8") as lines:
            yield from (json.loads(line) for line in lines if line.strip())


def replica(doc: dict, copy: int) -> dict:
    """Copy `copy` of a library record (0: the record itself)."""
    if copy == 0:
        return doc
    year = doc.get("year")
    return {
        **doc,
        "doc_id": f"{doc['doc_id']}-copy{copy}",
        "year": year - copy if isinstance(year, int) else year,
        "date": None,
    }


def write_copies(library: Path, copies: int, out: Path) -> list[Path]:
    """One gzipped JSONL file per copy (each stays well under the ingest size limit)."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for copy in range(copies):
        path = out / f"copy-{copy}.jsonl.gz"
        with gzip.open(path, "wt", encoding="utf-8") as file:
            for doc in documents(library):
                file.write(json.dumps(replica(doc, copy), ensure_ascii=False) + "\n")
        written.append(path)
    return written


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--library", type=Path, default=Path("../shared/data/library"))
    parser.add_argument("--copies", type=int, default=7)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    if not any(args.library.glob("*.jsonl*")):
        parser.error(f"--library {args.library}: no library JSONL files there")
    for path in write_copies(args.library, args.copies, args.out):
        print(path)


if __name__ == "__main__":
    main()
