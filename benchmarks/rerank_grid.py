"""What the second stage buys and costs: the cross-encoder over the first stage's top candidates.

Every answerable question of each benchmark is searched once with the first stage as configured
(`--alpha`, default the settings'), its top `max(DEPTHS)` chunks are scored by the reranker in
`--reranker` (trained by `make reranker`), and `evidenceqa.retrieval.rerank.blend` re-orders the top
`depth` at each blend weight offline. Printed, in Markdown: doc / passage MRR@10 per benchmark
at each depth and weight; leave-one-benchmark-out (depth and weight chosen on the other
benchmarks, scored on the one left out, against the first stage alone); and the reranking time
per question at each depth (p50 / p95 ms, 2 cores, int8 ONNX). Example:

    .venv/bin/python benchmarks/rerank_grid.py --home .evidenceqa-bench \
        --reranker .evidenceqa-bench/models/reranker ../shared/data/benchmarks/clinician-dev.jsonl
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from fusion_grid import benchmark_arguments, cell
from search_latency import percentile

from evidenceqa.answer.engine import Engine
from evidenceqa.bench import machine
from evidenceqa.bench.fusion import reciprocal_ranks
from evidenceqa.bench.metrics import Ranked
from evidenceqa.bench.retrieval import Question, read_questions
from evidenceqa.index.base import Hit
from evidenceqa.retrieval.rerank import CrossEncoder, blend
from evidenceqa.settings import load_settings
from evidenceqa.text import markdown

DEPTHS = (5, 10, 20, 30)
WEIGHTS = (0.0, 0.25, 0.5, 0.75, 1.0)
TIMED = 100  # questions per benchmark whose reranking is timed at each depth


@dataclass(frozen=True)
class Candidates:
    question: Question
    hits: list[Hit]  # first-stage order, fused scores
    bodies: dict[str, str]
    logits: np.ndarray  # the reranker's, for hits in order
    seconds: dict[int, float]  # depth → time to score the top `depth` (the first TIMED questions)


def collect(engine: Engine, reranker: CrossEncoder, questions: list[Question]) -> list[Candidates]:
    retriever = engine.retriever()
    out = []
    for q in questions:
        response = retriever.search(q.question, k=max(DEPTHS))
        hits = [Hit(r.chunk.chunk_id, r.chunk.doc_id, r.score) for r in response.results]
        texts = [r.chunk.text for r in response.results]
        logits = reranker.score(response.query_text, texts)
        seconds = {}
        if len(out) < TIMED:  # timed apart, on the first questions: a deployment scores only its own depth
            for depth in DEPTHS:
                started = time.perf_counter()
                reranker.score(response.query_text, texts[:depth])
                seconds[depth] = time.perf_counter() - started
        bodies = {r.chunk.chunk_id: r.chunk.body for r in response.results}
        out.append(Candidates(q, hits, bodies, logits, seconds))
    return out


def mrr(items: list[Candidates], depth: int, weight: float) -> tuple[float, float | None]:
    docs, passages = [], []
    for c in items:
        top = blend(c.hits[:depth], c.logits[:depth], weight) + c.hits[depth:]
        ranked = [Ranked(h.doc_id, c.bodies[h.chunk_id]) for h in top[:10]]
        doc, passage = reciprocal_ranks(ranked, c.question.gold_doc_ids, c.question.gold_passages)
        docs.append(doc)
        if passage is not None:
            passages.append(passage)
    return float(np.mean(docs)), (float(np.mean(passages)) if passages else None)


def objective(pair: tuple[float, float | None]) -> float:
    doc, passage = pair
    return doc if passage is None else (doc + passage) / 2


def main() -> None:
    parser = benchmark_arguments(__doc__)
    parser.add_argument("--reranker", type=Path, required=True)
    parser.add_argument("--alpha", default=None, help="the first stage's dense weight setting")
    args = parser.parse_args()
    settings = load_settings(home=args.home, alpha=args.alpha, rerank="off")
    reranker = CrossEncoder(args.reranker)
    sets: dict[str, list[Candidates]] = {}
    with Engine.open(settings) as engine:
        for path in args.benchmarks:
            questions = [q for q in read_questions(path, args.limit) if q.answerable]
            sets[path.stem] = collect(engine, reranker, questions)
    grid = list(itertools.product(DEPTHS, WEIGHTS[1:]))
    scores = {name: {cell: mrr(items, *cell) for cell in grid} for name, items in sets.items()}
    first = {name: mrr(items, DEPTHS[0], 0.0) for name, items in sets.items()}
    print(f"**Second stage** (first stage: alpha = {settings.alpha}): doc / passage MRR@10\n")
    headers = ["Benchmark", "first stage", *(f"top {d}, w={w}" for d, w in grid)]
    rows = [[f"{n} ({len(sets[n])})", cell(*first[n]), *(cell(*scores[n][c]) for c in grid)] for n in sets]
    print(markdown.table(headers, rows, [False] + [True] * (len(headers) - 1)))
    print("**Leave one benchmark out**: depth and weight chosen on the other benchmarks\n")
    rows = []
    for held in sets:
        rest = [n for n in sets if n != held]
        best = max(grid, key=lambda c: np.mean([objective(scores[n][c]) for n in rest]))
        rows.append([held, cell(*first[held]), f"top {best[0]}, w={best[1]}", cell(*scores[held][best])])
    print(markdown.table(["Left out", "First stage", "Chosen on the others", "With the second stage"], rows))
    print("**Reranking time per question** (the cross-encoder alone; first-stage search is extra)\n")
    every = [c for items in sets.values() for c in items if c.seconds]
    rows = [[f"top {d}", f"{1000 * percentile([c.seconds[d] for c in every], 0.5):.1f}",
             f"{1000 * percentile([c.seconds[d] for c in every], 0.95):.1f}"] for d in DEPTHS]  # fmt: skip
    print(markdown.table(["Candidates", "p50 ms", "p95 ms"], rows, [False, True, True]))
    print(machine.measured_on())


if __name__ == "__main__":
    main()
