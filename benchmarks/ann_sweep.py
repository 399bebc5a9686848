"""Choose the vector index's probe settings by measurement: latency and recall against exact search.

On an indexed library with a vector index (LanceDB builds one from `ann_min_chunks`), embeds benchmark
questions, takes the exact (brute-force) top 100 of each as the reference, then for each probe
setting (nprobes / ef / refine factor) times the dense search with the default filters and measures
recall@10 and recall@100: the share of results at least as close as the exact k-th neighbour
(distance-based, so chunks with identical vectors — the scale library's copies — count alike).
The settings' defaults (`ann_nprobes`, `ann_ef`, `ann_refine_factor`) come from this table. Example:

    .venv/bin/python benchmarks/ann_sweep.py --home .evidenceqa-scale \\
        --questions ../shared/data/benchmarks/covidqa-dev.jsonl --limit 100
"""

from __future__ import annotations

import dataclasses
import statistics
import time

import numpy as np
from search_latency import WARM_UP, percentile, question_arguments

from evidenceqa.answer.engine import Engine
from evidenceqa.bench import machine
from evidenceqa.bench.retrieval import read_questions
from evidenceqa.index.base import Filters, Hit
from evidenceqa.index.lancedb import LanceDBBackend
from evidenceqa.settings import load_settings
from evidenceqa.text import markdown

DEPTH = 100
# (nprobes, ef, refine factor): from few probes to many, with and without exact re-ranking.
SETTINGS = [(4, 100, 1), (8, 100, 1), (8, 200, 2), (16, 100, 1), (16, 200, 2), (16, 300, 2), (32, 200, 2),
            (32, 400, 4)]  # fmt: skip


def recall(found: list[Hit], exact: list[Hit], k: int) -> float:
    if len(exact) < k:
        return 1.0
    cut = exact[k - 1].score - 1e-6
    return sum(1 for hit in found[:k] if hit.score >= cut) / k


def timed(
    backend: LanceDBBackend, vectors: list[np.ndarray], exact: bool
) -> tuple[list[float], list[list[Hit]]]:
    for vector in vectors[:WARM_UP]:
        backend.search_dense(vector, DEPTH, Filters(), exact=exact)
    latencies, results = [], []
    for vector in vectors:
        start = time.perf_counter()
        results.append(backend.search_dense(vector, DEPTH, Filters(), exact=exact))
        latencies.append((time.perf_counter() - start) * 1000)
    return latencies, results


def row(label: str, latencies: list[float], found: list[list[Hit]], reference: list[list[Hit]]) -> list[str]:
    recalls = [
        f"{statistics.mean(recall(f, e, k) for f, e in zip(found, reference, strict=True)):.3f}"
        for k in (10, 100)
    ]
    return [label, f"{percentile(latencies, 0.5):.1f}", f"{percentile(latencies, 0.95):.1f}", *recalls]


def main() -> None:
    parser = question_arguments(__doc__, limit=100)
    args = parser.parse_args()
    with Engine.open(load_settings(home=args.home, backend="lancedb")) as engine:
        backend = engine.backend
        assert isinstance(backend, LanceDBBackend)
        if backend.trained_rows() is None:
            raise SystemExit(
                f"{args.home}: the index has no vector index (fewer chunks than ann_min_chunks?)"
            )
        vectors = [
            engine.embedder.embed_query(q.question) for q in read_questions(args.questions, args.limit)
        ]
        latencies, reference = timed(backend, vectors, exact=True)
        rows = [row("exact (brute force)", latencies, reference, reference)]
        default = backend.ann
        for nprobes, ef, refine in SETTINGS:
            backend.ann = dataclasses.replace(default, nprobes=nprobes, ef=ef, refine_factor=refine)
            latencies, found = timed(backend, vectors, exact=False)
            chosen = (
                " (default)"
                if (nprobes, ef, refine) == (default.nprobes, default.ef, default.refine_factor)
                else ""
            )
            rows.append(
                row(f"nprobes {nprobes}, ef {ef}, refine ×{refine}{chosen}", latencies, found, reference)
            )
        chunks = backend.count()
    headers = ["Dense search (top 100)", "p50 ms", "p95 ms", "Recall@10", "Recall@100"]
    print(markdown.table(headers, rows, [False, True, True, True, True]), end="")
    print(
        f"\n{len(vectors)} questions · {chunks:,} chunks · IVF_HNSW_SQ, {default.partition_rows:,} rows per "
        f"partition · {machine.current().tag()}\n"
    )


if __name__ == "__main__":
    main()
