"""Choose the fusion method and dense weight by measurement, on a held-apart split.

For each benchmark, every question's keyword and dense candidate lists are retrieved once (with
the retriever's own parsing, filters and expansion), then fused offline by `evidenceqa.fusion`
for each method and alpha. Questions are split by position: even ones choose, odd ones report,
so no figure in the "held-out" columns was tuned on. Prints Markdown. Example:

    .venv/bin/python benchmarks/fusion_grid.py --home .evidenceqa-bench \
        ../shared/data/benchmarks/covidqa-dev.jsonl ../shared/data/benchmarks/medquad-sample.jsonl
"""

from __future__ import annotations

import argparse
from pathlib import Path

from evidenceqa import markdown
from evidenceqa.bench.metrics import Ranked, aggregate, gold_positions, score
from evidenceqa.bench.retrieval import Question, read_questions
from evidenceqa.config import load_settings
from evidenceqa.documents import Chunk
from evidenceqa.engine import Engine
from evidenceqa.fusion import Fusion, dense_weights, fuse
from evidenceqa.index.base import Hit
from evidenceqa.retrieval import Retriever

DEPTH = 100
Lists = dict[str, list[Hit]]


def candidates(retriever: Retriever, question: Question) -> tuple[Lists, dict[str, Chunk]]:
    lists: Lists = {}
    chunks: dict[str, Chunk] = {}
    for mode, name in (("bm25", "keyword"), ("dense", "dense")):
        results = retriever.search(question.question, k=DEPTH, mode=mode).results
        lists[name] = [Hit(r.chunk.chunk_id, r.chunk.doc_id, r.score) for r in results]
        chunks.update((r.chunk.chunk_id, r.chunk) for r in results)
    return lists, chunks


def mrr(rows: list[tuple[Question, list[Chunk]]]) -> tuple[float, float | None]:
    levels: dict[str, list] = {"document": [], "passage": []}
    for question, ranked_chunks in rows:
        ranked = [Ranked(c.doc_id, c.body) for c in ranked_chunks]
        levels["document"].append(
            score(gold_positions(ranked, question.gold_doc_ids, [], "document"), len(question.gold_doc_ids))
        )
        if question.gold_passages:
            positions = gold_positions(ranked, [], question.gold_passages, "passage")
            levels["passage"].append(score(positions, len(question.gold_passages)))
    passage = aggregate(levels["passage"])["MRR@10"] if levels["passage"] else None
    return aggregate(levels["document"])["MRR@10"], passage


def ranking(lists: Lists, chunks: dict[str, Chunk], method: str, alpha: float) -> list[Chunk]:
    if method == "bm25":
        hits = lists["keyword"][:10]
    elif method == "dense":
        hits = lists["dense"][:10]
    else:
        hits = fuse(lists, dense_weights(alpha), Fusion(method, alpha, 60, DEPTH), 10)
    return [chunks[h.chunk_id] for h in hits]


def grid(data: list[tuple[Question, Lists, dict[str, Chunk]]], alphas: list[float]) -> list[list[object]]:
    configs = [("bm25", 0.0), ("dense", 1.0)] + [(m, a) for m in ("rrf", "weighted") for a in alphas]
    rows = []
    for method, alpha in configs:
        halves = [[(q, ranking(lists, chunks, method, alpha)) for q, lists, chunks in data[start::2]]
                  for start in (0, 1)]  # fmt: skip
        (tune_doc, tune_pass), (held_doc, held_pass) = mrr(halves[0]), mrr(halves[1])
        label = method if method in ("bm25", "dense") else f"{method} α={alpha:.1f}"
        rows.append([label, _f(tune_doc), _f(tune_pass), _f(held_doc), _f(held_pass)])
    return rows


def _f(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("benchmarks", type=Path, nargs="+")
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--alphas", default="0.1,0.2,0.3,0.4,0.5,0.6")
    parser.add_argument("--limit", type=int, default=None)
    args = parser.parse_args()
    alphas = [float(a) for a in args.alphas.split(",")]
    headers = [
        "Method",
        "Tune: doc MRR@10",
        "Tune: passage MRR@10",
        "Held-out: doc MRR@10",
        "Held-out: passage MRR@10",
    ]
    with Engine.open(load_settings(home=args.home)) as engine:
        retriever = engine.retriever()
        for path in args.benchmarks:
            questions = read_questions(path, args.limit)
            data = [(q, *candidates(retriever, q)) for q in questions]
            print(
                f"**{path.stem}** ({len(questions)} questions: {len(data[0::2])} tune, {len(data[1::2])} held out)\n"
            )
            print(markdown.table(headers, grid(data, alphas), [False, True, True, True, True]))


if __name__ == "__main__":
    main()
