"""The seed's chunking table on our library: each strategy ingested, indexed and benchmarked.

For every chunking strategy, the medical library is ingested into its own data home under
`--base` (all homes share one embedding cache, so text that two strategies cut alike is embedded
once), indexed, and searched with the default hybrid settings. Prints Markdown: chunks, average
size, context loss, and MRR@10 at the document and passage level per benchmark. Example:

    .venv/bin/python benchmarks/chunking_bench.py --base .evidenceqa-chunking \
        --library ../shared/data/library/covidqa_articles.jsonl ../shared/data/library/pubmedqa_abstracts.jsonl \
        ../shared/data/library/medquad_nih.jsonl.gz \
        --benchmarks ../shared/data/benchmarks/covidqa-dev.jsonl ../shared/data/benchmarks/medquad-sample.jsonl
"""

from __future__ import annotations

import argparse
from pathlib import Path

from evidenceqa import markdown
from evidenceqa.bench import retrieval as bench_retrieval
from evidenceqa.chunking import STRATEGIES, ChunkingConfig, chunk_stats
from evidenceqa.config import Settings, load_settings
from evidenceqa.engine import Engine
from evidenceqa.ingest import Ingestor


def build(settings: Settings, library: list[Path], strategy: str) -> None:
    with Engine.open(settings) as engine:
        ingestor = Ingestor(engine.catalogue, ChunkingConfig(strategy=strategy))
        for path in library:
            report = ingestor.ingest_file(path)
            if report.errors:
                raise SystemExit(f"{path}: {report.errors[0]}")
        engine.sync()


def measure(settings: Settings, strategy: str, benchmarks: list[Path], limit: int | None) -> list[str]:
    with Engine.open(settings) as engine:
        docs = list(engine.catalogue.iter_documents())
        stats = chunk_stats(docs, ChunkingConfig(strategy=strategy))
        row = [strategy, f"{stats.chunks:,}", f"{stats.avg_words:.0f}", f"{stats.loss.context_loss:.1%}"]
        retriever = engine.retriever()
        for path in benchmarks:
            result = bench_retrieval.run(retriever, bench_retrieval.read_questions(path, limit), "hybrid")
            row.append(f"{result.metrics['document']['MRR@10']:.3f}")
            passage = result.metrics.get("passage")
            row.append(f"{passage['MRR@10']:.3f}" if passage else "–")
    return row


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--base", type=Path, required=True, help="one data home per strategy goes under it")
    parser.add_argument("--library", type=Path, nargs="+", required=True)
    parser.add_argument("--benchmarks", type=Path, nargs="+", required=True)
    parser.add_argument("--strategies", default=",".join(STRATEGIES))
    parser.add_argument("--limit", type=int, default=None)
    args = parser.parse_args()
    headers = ["Strategy", "Chunks", "Avg words", "Context loss"]
    for path in args.benchmarks:
        headers += [f"{path.stem} doc MRR@10", f"{path.stem} passage MRR@10"]
    rows = []
    for strategy in args.strategies.split(","):
        settings = load_settings(
            home=args.base / strategy,
            embedding_cache=args.base / "embeddings.sqlite3",
            models_dir=args.base / "models",
        )
        build(settings, args.library, strategy)
        rows.append(measure(settings, strategy, args.benchmarks, args.limit))
    print(markdown.table(headers, rows, [False] + [True] * (len(headers) - 1)), end="")


if __name__ == "__main__":
    main()
