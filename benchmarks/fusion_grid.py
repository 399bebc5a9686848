"""Choose the fusion by measurement: every weight on every benchmark, then leave-one-benchmark-out.

For each benchmark, every answerable question's keyword and dense candidate lists are retrieved
once (with the retriever's own parsing, filters and expansion) together with the adaptive
signals (`evidenceqa.retrieval.adaptive`), then fused offline by `evidenceqa.retrieval.fusion` at every dense weight
(`evidenceqa.bench.fusion`). Printed, in Markdown:

1. doc / passage MRR@10 of weighted fusion at a range of fixed weights, and plain RRF, per benchmark;
2. leave-one-benchmark-out: for each benchmark, BM25, dense, the fixed baseline weight (0.3), a fixed
   weight fitted on the other benchmarks and the adaptive model fitted on the other benchmarks,
   all scored on the benchmark left out;
   and the adaptive model over score-distribution fusion, its temperatures also chosen on the
   others (the lists are fused again at each pair of `TEMPERATURES`);
   and that model fitted with the library's own questions beside the benchmarks
   (`--library-questions N`, written from its sentences by `evidenceqa.answer.probes`, never a
   benchmark question; one intercept for every set);
3. that last model fitted on every benchmark and the library's questions, with `--write-model FILE`
   saved for `alpha = "adaptive"` (the packaged one is src/evidenceqa/retrieval/adaptive_alpha.json).

`--write-alpha FILE` also learns the per-query-class table of `alpha = "learned"`. Example:

    .venv/bin/python benchmarks/fusion_grid.py --home .evidenceqa-bench \
        ../shared/data/benchmarks/covidqa-dev.jsonl ../shared/data/benchmarks/clinician-dev.jsonl
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

import numpy as np

from evidenceqa.answer.engine import Engine
from evidenceqa.answer.probes import probes
from evidenceqa.bench import machine
from evidenceqa.bench.fusion import (
    DEPTH,
    GRID,
    Families,
    Scored,
    at_alpha,
    curve,
    fit_distribution_adaptive,
    leave_one_out,
    reciprocal_ranks,
    with_library,
)
from evidenceqa.bench.metrics import Ranked
from evidenceqa.bench.retrieval import Question, read_questions
from evidenceqa.index.base import Hit
from evidenceqa.retrieval.fusion import Fusion, dense_weights, fuse
from evidenceqa.retrieval.retriever import FIXED_ALPHA, Retriever
from evidenceqa.settings import load_settings
from evidenceqa.text import markdown

# (keyword, dense) temperatures of score-distribution fusion tried; BM25 scores are per unit of
# the question's idf mass, cosines as they are.
TEMPERATURES = tuple((k, d) for k in (0.2, 0.28, 0.4) for d in (0.065, 0.08, 0.11))
SOFTMAX = {(k, d): Fusion("softmax", 0.5, 60, DEPTH, {"keyword": k, "dense": d}) for k, d in TEMPERATURES}
Curves = dict[tuple[float, float], list[Scored]]  # one benchmark's curves per temperature pair
SHOWN = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8)
MIN_CLASS_QUESTIONS = 20  # fewer questions than this: the class takes the overall best weight
# The library's own questions fitted beside the benchmarks: more than any benchmark holds, so a few
# odd ones do not decide.
LIBRARY_QUESTIONS = 1200


def candidates(
    retriever: Retriever, q: Question
) -> tuple[dict[str, list[Hit]], dict[str, str], dict[str, float], dict[str, float], str]:
    """(each retriever's list, chunk id → body, the adaptive signals, each list's score scale, the
    query class)."""
    lists: dict[str, list[Hit]] = {}
    text: dict[str, str] = {}
    for mode, name in (("bm25", "keyword"), ("dense", "dense")):
        response = retriever.search(q.question, k=DEPTH, mode=mode)
        lists[name] = [Hit(r.chunk.chunk_id, r.chunk.doc_id, r.score) for r in response.results]
        text.update((r.chunk.chunk_id, r.chunk.body) for r in response.results)
    signals, scales = retriever.adaptive_inputs(lists, response.keyword_terms)
    return lists, text, signals, scales, response.query_class


def score_benchmark(
    retriever: Retriever, questions: list[Question]
) -> tuple[list[Scored], Curves, list[tuple[float, float | None]], list[str]]:
    """Each question's curve over GRID (weighted fusion, and score distributions at each pair of
    TEMPERATURES), its plain-RRF reciprocal ranks and its query class."""
    scored, rrf, classes = [], [], []
    families: Curves = {pair: [] for pair in TEMPERATURES}
    for q in questions:
        lists, text, signals, scales, query_class = candidates(retriever, q)
        scored.append(curve(lists, text, q.gold_doc_ids, q.gold_passages, signals))
        for pair, softmax in SOFTMAX.items():
            families[pair].append(
                curve(lists, text, q.gold_doc_ids, q.gold_passages, signals, softmax, scales)
            )
        hits = fuse(lists, dense_weights(0.5), Fusion("rrf", 0.5, 60, DEPTH), 10)
        rrf.append(
            reciprocal_ranks(
                [Ranked(h.doc_id, text[h.chunk_id]) for h in hits], q.gold_doc_ids, q.gold_passages
            )
        )
        classes.append(query_class)
    return scored, families, rrf, classes


def cell(doc: float, passage: float | None) -> str:
    """ "doc / passage" MRR@10, or doc alone where the benchmark has no gold passages."""
    return f"{doc:.3f} / {passage:.3f}" if passage is not None else f"{doc:.3f}"


def benchmark_arguments(doc: str | None) -> argparse.ArgumentParser:
    """A fusion benchmark's command line: its docstring as help, the benchmarks, the data home and
    how many questions of each are asked."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("benchmarks", type=Path, nargs="+")
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--limit", type=int, default=None)
    return parser


def fixed_table(sets: dict[str, list[Scored]], rrf: dict[str, list[tuple[float, float | None]]]) -> str:
    headers = ["Benchmark", "bm25", "dense", "RRF", *(f"α={a}" for a in SHOWN)]
    rows = []
    for name, data in sets.items():
        pairs = rrf[name]
        passages = [p for _, p in pairs if p is not None]
        cells = [cell(*at_alpha(data, np.full(len(data), a))) for a in (0.0, 1.0)]
        cells.append(
            cell(float(np.mean([d for d, _ in pairs])), float(np.mean(passages)) if passages else None)
        )
        cells += [cell(*at_alpha(data, np.full(len(data), a))) for a in SHOWN]
        rows.append([f"{name} ({len(data)})", *cells])
    return markdown.table(headers, rows, [False] + [True] * (len(headers) - 1))


def by_pair(families: dict[str, Curves]) -> Families:
    """benchmark → pair → curves, turned into pair → benchmark → curves."""
    return {pair: {name: curves[pair] for name, curves in families.items()} for pair in TEMPERATURES}


def left_out_table(sets: dict[str, list[Scored]], families: dict[str, Curves], library: Curves) -> str:
    rows = [
        [r.benchmark, r.method, f"{r.doc:.3f}", "–" if r.passage is None else f"{r.passage:.3f}",
         "" if r.mean_alpha is None else f"{r.mean_alpha:.2f}"]
        for r in leave_one_out(sets, FIXED_ALPHA, by_pair(families), library or None)
    ]  # fmt: skip
    headers = [
        "Left out",
        "Method (fitted on the other benchmarks)",
        "Doc MRR@10",
        "Passage MRR@10",
        "Mean α",
    ]
    return markdown.table(headers, rows, [False, False, True, True, True])


def learn_alphas(sets: dict[str, list[Scored]], classes: dict[str, list[str]]) -> dict[str, float]:
    """The per-query-class weights of alpha = "learned", on every benchmark together."""
    by_class: dict[str, list[Scored]] = defaultdict(list)
    for name, data in sets.items():
        for item, query_class in zip(data, classes[name], strict=True):
            by_class[query_class].append(item)

    def best(items: list[Scored]) -> float:
        totals = np.sum([r.objective for r in items], axis=0)
        return GRID[int(np.argmax(totals - 1e-9 * np.abs(np.array(GRID) - FIXED_ALPHA)))]

    overall = best([r for data in sets.values() for r in data])
    return {c: best(items) if len(items) >= MIN_CLASS_QUESTIONS else overall for c, items in by_class.items()}


def main() -> None:
    parser = benchmark_arguments(__doc__)
    parser.add_argument("--write-model", type=Path, default=None, help="save the adaptive model here")
    parser.add_argument("--write-alpha", type=Path, default=None, help="save the per-class table here")
    parser.add_argument("--library-questions", type=int, default=LIBRARY_QUESTIONS,
                        help="the library's own questions fitted beside the benchmarks (0: none)")  # fmt: skip
    args = parser.parse_args()
    sets: dict[str, list[Scored]] = {}
    families: dict[str, Curves] = {}
    rrf: dict[str, list[tuple[float, float | None]]] = {}
    classes: dict[str, list[str]] = {}
    with Engine.open(load_settings(home=args.home)) as engine:
        retriever = engine.retriever()
        for path in args.benchmarks:
            questions = [q for q in read_questions(path, args.limit) if q.answerable]
            sets[path.stem], families[path.stem], rrf[path.stem], classes[path.stem] = score_benchmark(
                retriever, questions
            )
        asked = [Question(f"library-{i}", p.question, [p.doc_id], [p.passage], {"style": p.style})
                 for i, p in enumerate(probes(engine.catalogue, args.library_questions))]  # fmt: skip
        library = score_benchmark(retriever, asked)[1] if asked else {}
    print("**Fixed weights**: doc / passage MRR@10 of weighted fusion at each dense weight α, plain RRF, "
          "and each retriever alone (questions in brackets)\n")  # fmt: skip
    print(fixed_table(sets, rrf))
    print(
        "**Leave one benchmark out**: every method fitted on the other benchmarks, scored on the one left out\n"
    )
    print(left_out_table(sets, families, library))
    joined = with_library(by_pair(families), library) if library else by_pair(families)
    model = fit_distribution_adaptive(joined, shared_intercept=bool(library))
    weights = [[name, f"{w:+.2f}"] for name, w in zip(model.signals, model.weights, strict=True)]
    fitted_on = "every benchmark" + (f" and {len(asked):,} of the library's own questions" if asked else "")
    temperatures = f"temperatures: BM25 {model.temperatures['keyword']}, dense {model.temperatures['dense']}"
    print(
        f"**Adaptive model over score distributions, fitted on {fitted_on}** ({temperatures}; "
        f"intercept {model.intercept:+.2f}; a positive weight leans dense)\n"
    )
    print(markdown.table(["Signal (standardised)", "Weight"], weights, [False, True]))
    print(machine.measured_on())
    if args.write_model:
        model.write(args.write_model)
    if args.write_alpha:
        table = learn_alphas(sets, classes)
        args.write_alpha.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
