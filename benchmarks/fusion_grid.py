"""Choose the fusion method and the dense weight by measurement, on a held-apart split.

For each benchmark, every question's keyword and dense candidate lists are retrieved once (with
the retriever's own parsing, filters and expansion), then fused offline by `evidenceqa.fusion`
for each method and alpha. Questions are split by position: even ones choose, odd ones report,
so no figure in the "held-out" columns was tuned on.

It also learns a dense weight per query class (`evidenceqa.query.classify`) on the even halves of
all the benchmarks together, compares it on the odd halves with the fixed default and the seed's
rules, and with `--write-alpha FILE` saves it for `alpha = "learned"` (FILE = <home>/alpha.json).
Prints Markdown. Example:

    .venv/bin/python benchmarks/fusion_grid.py --home .evidenceqa-bench \
        ../shared/data/benchmarks/covidqa-dev.jsonl ../shared/data/benchmarks/medquad-sample.jsonl
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from evidenceqa import markdown
from evidenceqa.bench.metrics import Ranked, gold_positions, score
from evidenceqa.bench.retrieval import Question, read_questions
from evidenceqa.config import load_settings
from evidenceqa.documents import Chunk
from evidenceqa.engine import Engine
from evidenceqa.fusion import Fusion, dense_weights, fuse
from evidenceqa.index.base import Hit
from evidenceqa.query import SEED_ALPHA
from evidenceqa.retrieval import Retriever

DEPTH = 100
DEFAULT_ALPHA = 0.3
MIN_CLASS_QUESTIONS = 20  # fewer tune questions than this: the class takes the overall best weight


@dataclass(frozen=True)
class Candidate:
    question: Question
    query_class: str
    lists: dict[str, list[Hit]]
    chunks: dict[str, Chunk]


def candidates(retriever: Retriever, question: Question) -> Candidate:
    lists: dict[str, list[Hit]] = {}
    chunks: dict[str, Chunk] = {}
    for mode, name in (("bm25", "keyword"), ("dense", "dense")):
        response = retriever.search(question.question, k=DEPTH, mode=mode)
        lists[name] = [Hit(r.chunk.chunk_id, r.chunk.doc_id, r.score) for r in response.results]
        chunks.update((r.chunk.chunk_id, r.chunk) for r in response.results)
    return Candidate(question, response.query_class, lists, chunks)


def ranking(c: Candidate, method: str, alpha: float) -> list[Chunk]:
    if method in ("bm25", "dense"):
        hits = c.lists["keyword" if method == "bm25" else "dense"][:10]
    else:
        hits = fuse(c.lists, dense_weights(alpha), Fusion(method, alpha, 60, DEPTH), 10)
    return [c.chunks[h.chunk_id] for h in hits]


def reciprocal_ranks(q: Question, ranked_chunks: list[Chunk]) -> tuple[float, float | None]:
    ranked = [Ranked(c.doc_id, c.body) for c in ranked_chunks]
    doc = score(gold_positions(ranked, q.gold_doc_ids, [], "document"), len(q.gold_doc_ids)).rr
    if not q.gold_passages:
        return doc, None
    return doc, score(gold_positions(ranked, [], q.gold_passages, "passage"), len(q.gold_passages)).rr


def mrr(pairs: list[tuple[float, float | None]]) -> tuple[str, str]:
    docs = [d for d, _ in pairs]
    passages = [p for _, p in pairs if p is not None]
    return _mean(docs), _mean(passages)


def _mean(values: list[float]) -> str:
    return f"{sum(values) / len(values):.3f}" if values else "–"


def grid(data: list[Candidate], alphas: list[float]) -> list[list[str]]:
    configs = [("bm25", 0.0), ("dense", 1.0)] + [(m, a) for m in ("rrf", "weighted") for a in alphas]
    rows = []
    for method, alpha in configs:
        halves = [[reciprocal_ranks(c.question, ranking(c, method, alpha)) for c in data[start::2]]
                  for start in (0, 1)]  # fmt: skip
        label = method if method in ("bm25", "dense") else f"{method} α={alpha:.1f}"
        rows.append([label, *mrr(halves[0]), *mrr(halves[1])])
    return rows


def objective(c: Candidate, alpha: float) -> float:
    """What the learning maximises per question: passage RR where there is a passage, else document RR."""
    doc, passage = reciprocal_ranks(c.question, ranking(c, "weighted", alpha))
    return doc if passage is None else passage


def learn_alphas(tune: list[Candidate], alphas: list[float]) -> dict[str, float]:
    by_class: dict[str, list[Candidate]] = defaultdict(list)
    for c in tune:
        by_class[c.query_class].append(c)

    def best(items: list[Candidate]) -> float:
        # Ties go to the weight nearest the default.
        return max(alphas, key=lambda a: (sum(objective(c, a) for c in items), -abs(a - DEFAULT_ALPHA)))

    overall = best(tune)
    return {
        name: best(items) if len(items) >= MIN_CLASS_QUESTIONS else overall
        for name, items in by_class.items()
    }


def compare(held_out: list[Candidate], table: dict[str, float]) -> list[list[str]]:
    settings: list[tuple[str, Callable[[Candidate], float]]] = [
        (f"fixed α={DEFAULT_ALPHA}", lambda c: DEFAULT_ALPHA),
        ("seed rules", lambda c: SEED_ALPHA[c.query_class]),
        ("learned per class", lambda c: table.get(c.query_class, DEFAULT_ALPHA)),
    ]
    return [[name, *mrr([reciprocal_ranks(c.question, ranking(c, "weighted", pick(c))) for c in held_out])]
            for name, pick in settings]  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("benchmarks", type=Path, nargs="+")
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--alphas", default="0.1,0.2,0.3,0.4,0.5,0.6")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument(
        "--write-alpha", type=Path, default=None, help="save the learned per-class table here"
    )
    args = parser.parse_args()
    alphas = [float(a) for a in args.alphas.split(",")]
    headers = [
        "Method",
        "Tune: doc MRR@10",
        "Tune: passage MRR@10",
        "Held-out: doc MRR@10",
        "Held-out: passage MRR@10",
    ]
    data: dict[str, list[Candidate]] = {}
    with Engine.open(load_settings(home=args.home)) as engine:
        retriever = engine.retriever()
        for path in args.benchmarks:
            data[path.stem] = [candidates(retriever, q) for q in read_questions(path, args.limit)]
    for name, items in data.items():
        print(f"**{name}** ({len(items)} questions: {len(items[0::2])} tune, {len(items[1::2])} held out)\n")
        print(markdown.table(headers, grid(items, alphas), [False, True, True, True, True]))
    table = learn_alphas([c for items in data.values() for c in items[0::2]], alphas)
    print("**Dense weight per query class**, learned on the tune halves of all benchmarks together:\n")
    print(
        markdown.table(
            ["Class", "Learned α", "Seed rule α"], [[k, v, SEED_ALPHA[k]] for k, v in sorted(table.items())]
        )
    )
    rows = [[name, *row] for name, items in data.items() for row in compare(items[1::2], table)]
    print(
        markdown.table(
            ["Benchmark", "Weighted fusion", "Held-out: doc MRR@10", "Held-out: passage MRR@10"], rows
        )
    )
    if args.write_alpha:
        args.write_alpha.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
