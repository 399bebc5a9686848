"""Search latency and memory over an ingested, indexed library (a benchmark, not a test).

Runs benchmark questions through the retriever after a warm-up and prints a Markdown table, per
search mode,
p50 / p95 of the whole search and of its stages (query embedding, engine search), plus the
process's resident memory. Example:

    .venv/bin/python benchmarks/search_latency.py --home .evidenceqa-bench \
        --questions ../shared/data/benchmarks/covidqa-dev.jsonl --limit 300
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
from pathlib import Path

from evidenceqa import markdown
from evidenceqa.bench.retrieval import read_questions
from evidenceqa.config import load_settings
from evidenceqa.engine import Engine

WARM_UP = 10


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] if ordered else 0.0


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def measure(engine: Engine, questions: list[str], mode: str) -> list[object]:
    retriever = engine.retriever()
    for question in questions[:WARM_UP]:
        retriever.search(question, mode=mode)
    stages: dict[str, list[float]] = {"total": [], "embed": [], "search": []}
    for question in questions:
        timings = retriever.search(question, mode=mode).timings_ms
        for stage, values in stages.items():
            values.append(timings.get(stage, 0.0))
    row: list[object] = [mode, len(questions)]
    for stage in ("total", "search", "embed"):
        row += [f"{percentile(stages[stage], 0.5):.1f}", f"{percentile(stages[stage], 0.95):.1f}"]
    row.append(f"{statistics.mean(stages['total']):.1f}")
    return row


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--questions", type=Path, required=True)
    parser.add_argument("--limit", type=int, default=300)
    parser.add_argument("--backend", default=None)
    parser.add_argument("--modes", default="bm25,dense,hybrid")
    args = parser.parse_args()
    settings = load_settings(home=args.home, backend=args.backend)
    questions = [q.question for q in read_questions(args.questions, args.limit)]
    rows = []
    for mode in args.modes.split(","):
        # A fresh engine per mode: the embedder remembers recent questions, which would flatter later modes.
        with Engine.open(settings) as engine:
            rows.append(measure(engine, questions, mode))
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
        "Search p50",
        "Search p95",
        "Embed p50",
        "Embed p95",
        "Mean ms",
    ]
    print(markdown.table(headers, rows, [False] + [True] * 8), end="")
    print(f"\n{described} · {memory} · {platform.machine()}, {len(os.sched_getaffinity(0))} cores\n")


if __name__ == "__main__":
    main()
