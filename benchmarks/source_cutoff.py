"""Which sources should an extractive answer quote? The source cut, chosen left-out.

An answer quotes the source retrieval ranks first and each source whose best sentence scores at
least the cut's share of the best sentence (`ExtractiveGenerator(source_cutoff=…)`). A low cut lets
in sources that share the question's words and not its subject; a high one can drop the source
that holds the answer. Each answerable question of each benchmark is searched once and answered at
every cut (extractive, the adequacy check off), and scored on:
- the share of quoted sentences that cite a gold article, and of first sentences that do;
- the hit rate: the answer cites a gold article and, where the benchmark has answer spans, holds one.
The cut is then chosen leave-one-benchmark-out: fitted on the sum of the three measures over all
benchmarks but one, and reported on the one left out, beside the cut of 0.8 used before.
Example:

    .venv/bin/python benchmarks/source_cutoff.py --home .evidenceqa-bench --limit 200 \\
        ../shared/data/benchmarks/clinician-dev.jsonl ../shared/data/benchmarks/covidqa-dev.jsonl \\
        ../shared/data/benchmarks/medquad-sample.jsonl ../shared/data/benchmarks/pubmedqa.jsonl
"""

from __future__ import annotations

from dataclasses import replace

from fusion_grid import benchmark_arguments

from evidenceqa.answer.abstain import Abstainer
from evidenceqa.answer.cache import MemoryCache
from evidenceqa.answer.engine import Engine
from evidenceqa.answer.extractive import SOURCE_CUTOFF, ExtractiveGenerator
from evidenceqa.answer.pipeline import Pending
from evidenceqa.bench import machine
from evidenceqa.bench.answers import score_answer, score_sources, source_shares
from evidenceqa.bench.retrieval import Question, question_filters, read_questions
from evidenceqa.records import Answer
from evidenceqa.settings import load_settings
from evidenceqa.text import markdown

CUTOFFS = (0.8, 0.85, 0.9, 0.925, 0.95, 0.975, 1.0)
BEFORE = 0.8  # the cut before it was chosen here

Measures = tuple[float, float, float]  # sentences from gold, first sentence from gold, hit rate


def objective(measures: Measures) -> float:
    return sum(measures)


def cell(measures: Measures) -> str:
    return " / ".join(f"{m:.1%}" for m in measures)


def main() -> None:
    args = benchmark_arguments(__doc__).parse_args()
    results: dict[str, dict[float, Measures]] = {}
    with Engine.open(load_settings(home=args.home)) as engine:
        answerer = replace(engine.answerer(MemoryCache(1)), abstainer=Abstainer())
        by_cut = {c: replace(answerer, generator=ExtractiveGenerator(answerer.retriever.embedder, source_cutoff=c))
                  for c in CUTOFFS}  # fmt: skip
        for path in args.benchmarks:
            questions = [q for q in read_questions(path, args.limit) if q.answerable]
            answers: dict[float, list[tuple[Question, Answer]]] = {c: [] for c in CUTOFFS}
            for q in questions:
                pending = answerer.prepare(q.question, question_filters(q), use_cache=False)
                assert isinstance(pending, Pending)  # no cache: always searched
                for c, at_cut in by_cut.items():
                    answers[c].append((q, at_cut.finish(pending)))
            results[path.stem] = {}
            for c, answered in answers.items():
                _, from_gold, first = source_shares([score_sources(q, a) for q, a in answered])
                hits = sum(score_answer(q, a).hit for q, a in answered) / len(answered)
                results[path.stem][c] = (from_gold, first, hits)
    names = list(results)
    print(markdown.table(["Source cut", *names], [[f"{c:g}", *(cell(results[n][c]) for n in names)] for c in CUTOFFS],
                         [True, *(True for _ in names)]))  # fmt: skip
    print()
    rows = []
    for left in names:
        fitted = max(CUTOFFS, key=lambda c: sum(objective(results[n][c]) for n in names if n != left))
        rows.append([left, f"{fitted:g}", cell(results[left][fitted]), cell(results[left][BEFORE])])
    print(markdown.table(["Left out", "Cut fitted on the others", "Left out at that cut", f"Left out at {BEFORE:g}"],
                         rows, [False, True, True, True]))  # fmt: skip
    best = max(CUTOFFS, key=lambda c: sum(objective(results[n][c]) for n in names))
    print(f"\nFitted on all {len(names)}: {best:g} (the default: {SOURCE_CUTOFF:g}).")
    print(machine.measured_on())


if __name__ == "__main__":
    main()
