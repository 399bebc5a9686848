"""Write the scale library of docs/performance.md: the shared library plus replicated copies.

The shared library (82 full-text articles, 1,000 PubMed abstracts, 5,486 NIH pages, 2,600 Wikipedia
passages) makes ~47k chunks; ×7 passes the 300k-chunk target. Copy 0 is the library itself; copy n
(n ≥ 1) repeats every document under the id `<doc_id>-copy<n>`, with its year moved n years earlier
so year filters keep a realistic spread. The text is the real text, unchanged, so term frequencies,
document lengths, section structure and vector geometry are those of real medical literature; what
replication does change is that every posting list and every neighbourhood in vector space is n
times denser — the conditions a search engine meets in a library n times larger on the same topics.
Identical text embeds to identical vectors, so the embedding cache embeds each copy's text once.

Those copies measure posting lists and table size, but not the vector index's recall or ingest at
scale: copies sit on top of each other in vector space. `--distinct` writes copies whose text is
new: each paragraph of copy n keeps every other sentence of its own (the topic it is about) and
takes the rest from the sentences of another document of the same collection, drawn for that copy
(so a NIH page mixes with NIH pages, an abstract with abstracts). Every sentence is a real one, the
paragraph count, sentence count and headings stay, and a paragraph equal to one already written is
drawn again, so each copy's paragraphs are new texts with new vectors, spread among the real
ones of their collection. Examples:

    .venv/bin/python benchmarks/scale_library.py --library ../shared/data/library --copies 7 \
        --out .evidenceqa-scale-library
    .venv/bin/python benchmarks/scale_library.py --library ../shared/data/library --copies 7 --distinct \
        --out .evidenceqa-distinct-library
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import random
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from evidenceqa.text.sentences import split_sentences

REDRAWS = 5  # tries for a paragraph that is not yet in the library before it is counted as repeated


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


@dataclass
class Recombiner:
    """Distinct copies of the library's documents from the library's own sentences (see the module docstring)."""

    library: list[dict]
    seen: set[bytes] = field(default_factory=set)
    paragraphs: int = 0
    repeated: int = 0

    def __post_init__(self) -> None:
        self.by_collection: dict[str, list[int]] = defaultdict(list)
        for i, doc in enumerate(self.library):
            self.by_collection[doc.get("collection") or ""].append(i)
            self.seen.update(_digest(p) for s in doc["sections"] for p in s["paragraphs"])

    def copy(self, i: int, copy: int) -> dict:
        doc = self.library[i]
        rng = random.Random(f"{doc['doc_id']}:{copy}")
        peers = self.by_collection[doc.get("collection") or ""]
        partner = self.library[peers[rng.randrange(len(peers))]] if len(peers) > 1 else doc
        pool = [
            s for section in partner["sections"] for p in section["paragraphs"] for s in split_sentences(p)
        ]
        sections = [
            {
                **section,
                "paragraphs": [self._paragraph(p, pool or [p], copy, rng) for p in section["paragraphs"]],
            }
            for section in doc["sections"]
        ]
        return {**replica(doc, copy), "sections": sections}

    def _paragraph(self, paragraph: str, pool: list[str], copy: int, rng: random.Random) -> str:
        own = split_sentences(paragraph) or [paragraph]
        self.paragraphs += 1
        for _ in range(REDRAWS):
            kept = [s if (i + copy) % 2 == 0 else rng.choice(pool) for i, s in enumerate(own)]
            text = " ".join(kept if len(own) > 1 else [*own, rng.choice(pool)])
            if _digest(text) not in self.seen:
                break
        else:
            self.repeated += 1
        self.seen.add(_digest(text))
        return text


def _digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode(), digest_size=12).digest()


def write_copies(library: Path, copies: int, out: Path, distinct: bool = False) -> list[Path]:
    """One gzipped JSONL file per copy (each stays well under the ingest size limit)."""
    out.mkdir(parents=True, exist_ok=True)
    docs = list(documents(library))
    recombiner = Recombiner(docs) if distinct else None
    written = []
    for copy in range(copies):
        path = out / f"copy-{copy}.jsonl.gz"
        with gzip.open(path, "wt", encoding="utf-8") as file:
            for i, doc in enumerate(docs):
                record = recombiner.copy(i, copy) if recombiner and copy else replica(doc, copy)
                file.write(json.dumps(record, ensure_ascii=False) + "\n")
        written.append(path)
    if recombiner:
        print(
            f"{recombiner.paragraphs:,} paragraphs recombined · {recombiner.repeated:,} of them repeat a paragraph already written"
        )
    return written


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--library", type=Path, default=Path("../shared/data/library"))
    parser.add_argument("--copies", type=int, default=7)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--distinct", action="store_true", help="new text in every copy (see above)")
    args = parser.parse_args()
    if not any(args.library.glob("*.jsonl*")):
        parser.error(f"--library {args.library}: no library JSONL files there")
    for path in write_copies(args.library, args.copies, args.out, args.distinct):
        print(path)


if __name__ == "__main__":
    main()
