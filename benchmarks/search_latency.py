"""Search latency and memory over an ingested, indexed library (a benchmark, not a test).

Runs benchmark questions through the retriever after a warm-up and prints a Markdown table, per
search mode, p50 / p95 of the whole search, of the search without the query embedding (parsing,
engine search, fusion, fetching the chunks), of the engine search alone and of the query embedding,
plus the process's resident memory. `--year-min` filters every search (the temporal questions'
path: a pre-filter inside the engine). `--rerank FOLDER` adds the default hybrid search with the
second stage (a reranker trained by `make reranker`) as its own row. `--record FILE` also saves the figures as JSON for
benchmarks/targets.py. Example:

    .venv/bin/python benchmarks/search_latency.py --home .evidenceqa-bench \
        --questions ../shared/data/benchmarks/covidqa-dev.jsonl --limit 300 --year-min 2010
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
from pathlib import Path
from typing import Any

from evidenceqa.answer.engine import Engine
from evidenceqa.bench import machine
from evidenceqa.bench.retrieval import read_questions
from evidenceqa.index.base import Filters
from evidenceqa.settings import load_settings
from evidenceqa.text import markdown

WARM_UP = 10


def question_arguments(doc: str | None, limit: int) -> argparse.ArgumentParser:
    """A latency benchmark's command line: its docstring as help, the data home, the benchmark whose
    questions are asked and how many of them are measured (after the warm-up)."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--questions", type=Path, required=True)
    parser.add_argument("--limit", type=int, default=limit)
    return parser


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] if ordered else 0.0


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def write_record(path: Path | None, data: dict[str, Any]) -> None:
    """Save what a benchmark measured, and the machine it ran on, as JSON (for benchmarks/targets.py);
    nothing without a path."""
    if path:
        path.parent.mkdir(parents=True, exist_ok=True)
        record = data | {"machine": machine.current().as_dict()}
        path.write_text(json.dumps(record, indent=1), encoding="utf-8")


def measure(engine: Engine, questions: list[str], mode: str, filters: Filters) -> dict[str, float]:
    """The first WARM_UP questions only warm up: measured questions never hit the query-vector memory."""
    retriever = engine.retriever()
    warm_up, questions = questions[:WARM_UP], questions[WARM_UP:]
    for question in warm_up:
        retriever.search(question, mode=mode, filters=filters)
    stages: dict[str, list[float]] = {"total": [], "retrieval": [], "embed": [], "search": []}
    for question in questions:
        timings = retriever.search(question, mode=mode, filters=filters).timings_ms
        timings["retrieval"] = timings["total"] - timings.get("embed", 0.0)
        for stage, values in stages.items():
            values.append(timings.get(stage, 0.0))
    stats = {
        f"{stage}_p{q}": percentile(values, q / 100) for stage, values in stages.items() for q in (50, 95)
    }
    return {"queries": len(questions), **stats, "total_mean": statistics.mean(stages["total"])}


def table_row(mode: str, stats: dict[str, float]) -> list[object]:
    cells = [
        f"{stats[f'{stage}_p{q}']:.1f}"
        for stage in ("total", "retrieval", "search", "embed")
        for q in (50, 95)
    ]
    return [mode, int(stats["queries"]), *cells, f"{stats['total_mean']:.1f}"]


def main() -> None:
    parser = question_arguments(__doc__, limit=300)
    parser.add_argument("--backend", default=None)
    parser.add_argument("--modes", default="bm25,dense,hybrid")
    parser.add_argument("--rerank", type=Path, default=None, help="Also hybrid with this second stage.")
    parser.add_argument("--year-min", type=int, default=None, help="Only documents from this year on.")
    parser.add_argument("--record", type=Path, help="Also save the figures as JSON here.")
    args = parser.parse_args()
    filters = Filters(year_min=args.year_min)
    settings = load_settings(home=args.home, backend=args.backend)
    questions = [q.question for q in read_questions(args.questions, args.limit + WARM_UP)]
    measured = {}
    runs = [(mode, mode, settings) for mode in args.modes.split(",")]
    if args.rerank:
        reranked = settings.model_copy(update={"rerank": str(args.rerank)})
        runs.append((f"hybrid + rerank (top {settings.rerank_depth})", "hybrid", reranked))
    for label, mode, run_settings in runs:
        # A fresh engine per mode: the embedder remembers recent questions, which would flatter later modes.
        with Engine.open(run_settings) as engine:
            measured[label] = measure(engine, questions, mode, filters)
            chunks = engine.backend.count()
            described = (
                f"{chunks:,} chunks · backend {engine.backend.name} · embedder {engine.embedder.model_id}"
            )
    memory = (
        f"{rss_mb():.0f} MB resident, {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB peak"
    )
    headers = [
        "Mode",
        "Queries",
        "p50 ms",
        "p95 ms",
        "Without embedding p50",
        "Without embedding p95",
        "Search p50",
        "Search p95",
        "Embed p50",
        "Embed p95",
        "Mean ms",
    ]
    rows = [table_row(mode, stats) for mode, stats in measured.items()]
    print(markdown.table(headers, rows, [False] + [True] * 10), end="")
    scope = f" · every search filtered to year ≥ {args.year_min}" if args.year_min else ""
    print(f"\n{described}{scope} · {memory} · {machine.current().tag()}\n")
    write_record(args.record, {**measured, "chunks": chunks})


if __name__ == "__main__":
    main()
