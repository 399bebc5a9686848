"""BEIR-format retrieval sets: read one, score ranked documents against its graded qrels.

A BEIR folder holds `corpus.jsonl` ({"_id", "title", "text"}), `queries.jsonl` ({"_id", "text"})
and `qrels/<split>.tsv` (query-id, corpus-id, score; a header line). Published BEIR figures are
nDCG@10 with the grade as the gain (as trec_eval computes it) and Recall@100 over the documents
graded above 0, per query, averaged over the queries that have at least one; so are these.
A corpus document becomes one library document, so the library's own chunking and search run on
it unchanged, and a document ranks where its best chunk ranks.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evidenceqa.jsonl import read_rows


@dataclass(frozen=True)
class BeirSet:
    name: str
    corpus: dict[str, tuple[str, str]]  # doc id → (title, text)
    queries: dict[str, str]  # query id → text, only those with a relevant document
    qrels: dict[str, dict[str, int]]  # query id → doc id → grade


def read_beir(folder: Path, split: str = "test") -> BeirSet:
    """The set in `folder`; a missing file or a malformed line is a ValueError naming it."""
    paths = {
        "corpus": folder / "corpus.jsonl",
        "queries": folder / "queries.jsonl",
        "qrels": folder / "qrels" / f"{split}.tsv",
    }
    for path in paths.values():
        if not path.is_file():
            raise ValueError(
                f"{path}: not found (a BEIR folder has corpus.jsonl, queries.jsonl, qrels/{split}.tsv)"
            )
    corpus = dict(read_rows(paths["corpus"], _corpus_row, 'a corpus row {"_id", "title", "text"}'))
    qrels = _read_qrels(paths["qrels"])
    queries = dict(read_rows(paths["queries"], _query_row, 'a query row {"_id", "text"}'))
    relevant = {
        qid: grades for qid, grades in qrels.items() if qid in queries and any(g > 0 for g in grades.values())
    }
    return BeirSet(folder.name, corpus, {qid: queries[qid] for qid in relevant}, relevant)


def _corpus_row(row: dict[str, Any]) -> tuple[str, tuple[str, str]]:
    return str(row["_id"]), (str(row.get("title") or ""), str(row["text"]))


def _query_row(row: dict[str, Any]) -> tuple[str, str]:
    return str(row["_id"]), str(row["text"])


def _read_qrels(path: Path) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    with path.open(encoding="utf-8", newline="") as stream:
        for number, fields in enumerate(csv.reader(stream, delimiter="\t"), start=1):
            if number == 1 and fields and not fields[-1].strip().lstrip("-").isdigit():
                continue  # the header line
            if not fields:
                continue
            if len(fields) < 3 or not fields[-1].strip().lstrip("-").isdigit():
                raise ValueError(f"{path}:{number}: expected query-id, corpus-id and an integer score")
            qrels.setdefault(fields[0], {})[fields[1]] = int(fields[-1])
    return qrels


def library_rows(beir: BeirSet) -> Iterator[dict[str, Any]]:
    """The corpus as library JSONL documents (the shared data's format), one paragraph each."""
    for doc_id, (title, text) in beir.corpus.items():
        yield {
            "doc_id": doc_id,
            "collection": beir.name,
            "title": title or None,
            "sections": [{"heading": None, "paragraphs": [text]}],
        }


def ranked_documents(doc_ids: Iterable[str]) -> list[str]:
    """Documents in the order of their best chunk (chunk results best first)."""
    return list(dict.fromkeys(doc_ids))


def ndcg(ranked: Sequence[str], grades: dict[str, int], k: int = 10) -> float:
    """nDCG@k with the grade as the gain and a log2(rank + 1) discount; 0 without a relevant document."""
    gains = sorted((g for g in grades.values() if g > 0), reverse=True)[:k]
    ideal = sum(g / math.log2(i + 2) for i, g in enumerate(gains))
    dcg = sum(max(grades.get(d, 0), 0) / math.log2(i + 2) for i, d in enumerate(ranked[:k]))
    return dcg / ideal if ideal else 0.0


def recall(ranked: Sequence[str], grades: dict[str, int], k: int = 100) -> float:
    relevant = {d for d, g in grades.items() if g > 0}
    return len(relevant.intersection(ranked[:k])) / len(relevant) if relevant else 0.0


@dataclass(frozen=True)
class BeirScores:
    ndcg_10: float
    recall_100: float
    queries: int


def evaluate(rankings: dict[str, list[str]], beir: BeirSet) -> BeirScores:
    """Mean nDCG@10 and Recall@100 over the set's queries; a query missing from `rankings` scores 0."""
    ids = list(beir.queries)
    n = len(ids) or 1
    return BeirScores(
        ndcg_10=sum(ndcg(rankings.get(q, []), beir.qrels[q]) for q in ids) / n,
        recall_100=sum(recall(rankings.get(q, []), beir.qrels[q]) for q in ids) / n,
        queries=len(ids),
    )


def parse_published(items: Iterable[str]) -> list[tuple[str, float]]:
    """`NAME=nDCG@10` figures the user supplies (from a paper or a leaderboard), in their order."""
    figures = []
    for item in items:
        name, sep, value = item.rpartition("=")
        try:
            figures.append((name.strip(), float(value)))
        except ValueError:
            sep = ""
        if not sep or not name.strip():
            raise ValueError(f"--published {item!r}: expected NAME=nDCG@10, e.g. BM25=0.325")
    return figures
