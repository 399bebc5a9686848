"""Build a library from nothing and measure it: ingest, embedding and indexing time, size, memory.

Creates a fresh data home (`--fresh` removes an existing one first), ingests the given files into
the catalogue, then brings the search index up to date (embedding every chunk the embedding cache
has not seen, writing the index, building its keyword, scalar and — from `ann_min_chunks` — vector
indexes). Prints a Markdown table: time and chunks per second of each phase, how many chunk texts
were embedded rather than found in the cache, the size on disk of each part and the process's peak
resident memory. With an empty cache the indexing phase's chunks per second is the ingest
throughput of the embedder. `--record FILE` also saves the figures as JSON. Examples:

    # cold ingest throughput of the default embedder on real text
    .venv/bin/python benchmarks/build_speed.py --home .evidenceqa-speed --fresh \\
        ../shared/data/library/covidqa_articles.jsonl ../shared/data/library/pubmedqa_abstracts.jsonl
    # the 300k-chunk scale library (benchmarks/scale_library.py)
    .venv/bin/python benchmarks/build_speed.py --home .evidenceqa-scale --fresh .evidenceqa-scale-library
"""

from __future__ import annotations

import argparse
import resource
import shutil
import sqlite3
import time
from pathlib import Path

from search_latency import write_record
from simulated_vectors import fill

from evidenceqa.answer.engine import Engine
from evidenceqa.bench import machine
from evidenceqa.chunking import ChunkingConfig
from evidenceqa.library.catalogue import Catalogue
from evidenceqa.library.ingest import Ingestor
from evidenceqa.loaders import iter_files
from evidenceqa.settings import Settings, load_settings
from evidenceqa.text import markdown


def size_mb(path: Path) -> float:
    files = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]
    return sum(p.stat().st_size for p in files) / 2**20


def cached_vectors(path: Path) -> int:
    if not path.exists():
        return 0
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT count(*) FROM embeddings").fetchone()[0]


def ingest(settings: Settings, files: list[Path]) -> tuple[int, int]:
    """(documents, chunks) put into the catalogue."""
    with Catalogue(settings.catalogue_path) as catalogue:
        ingestor = Ingestor(
            catalogue, ChunkingConfig.of(settings, settings.chunk_strategy), settings.max_file_mb
        )
        reports = [ingestor.ingest_file(path) for path in files]
    failed = [error for report in reports for error in report.errors]
    if failed:
        raise SystemExit(f"ingest failed: {failed[0]}")
    return sum(r.added + r.updated for r in reports), sum(r.chunks for r in reports)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("paths", type=Path, nargs="+", help="Library files or folders.")
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--fresh", action="store_true", help="Remove the data home first.")
    parser.add_argument("--record", type=Path, help="Also save the figures as JSON here.")
    parser.add_argument(
        "--simulate-vectors",
        action="store_true",
        help="Give chunks the mean of their sentences' true vectors instead of embedding them "
        "(simulated_vectors.py): for a library too large to embed on this machine.",
    )
    args = parser.parse_args()
    if args.home.exists():
        if not args.fresh:
            parser.error(f"--home {args.home} exists: pass --fresh to rebuild it from nothing")
        shutil.rmtree(args.home)
    settings = load_settings(home=args.home)
    vectors = settings.embedding_cache or settings.home / "embeddings.sqlite3"
    cached_before = cached_vectors(vectors)
    start = time.perf_counter()
    documents, chunks = ingest(settings, list(iter_files(args.paths)))
    ingested = time.perf_counter()
    with Engine.open(settings) as engine:
        opened = time.perf_counter()
        simulated = fill(engine.catalogue, engine.embedder) if args.simulate_vectors else None
        filled = time.perf_counter()
        engine.sync()
        model = engine.embedder.model_id
    indexed = time.perf_counter()
    embedded = cached_vectors(vectors) - cached_before
    phases = [
        ("ingest (parse, chunk, catalogue)", ingested - start),
        ("load the embedder (ONNX export on first use)", opened - ingested),
        *(
            [("simulate vectors (embed sentences, average them)", filled - opened)]
            if args.simulate_vectors
            else []
        ),
        ("index (embed, write, build indexes)", indexed - filled),
        ("total", indexed - start),
    ]
    rows = [[name, f"{seconds:,.1f}", f"{chunks / seconds:,.0f}"] for name, seconds in phases]
    print(markdown.table(["Phase", "Seconds", "Chunks/s"], rows, [False, True, True]), end="")
    parts = [
        ("catalogue", settings.catalogue_path),
        ("search index", settings.index_path),
        ("embedding cache", vectors),
    ]
    disk = {name: size_mb(path) for name, path in parts if path.exists()}
    sizes = " · ".join(f"{name} {mb:,.0f} MB" for name, mb in disk.items())
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    vectors_from = (
        f"{simulated:,} chunk vectors simulated from {embedded - simulated:,} sentences embedded"
        if simulated is not None
        else f"{embedded:,} texts embedded, the rest from the cache"
    )
    print(
        f"\n{documents:,} documents · {chunks:,} chunks · {vectors_from} · "
        f"{model} · on disk: {sizes} · peak {peak:,.0f} MB resident · "
        f"{machine.current().tag()}\n"
    )
    write_record(args.record, {"documents": documents, "chunks": chunks, "embedded": embedded,
                               "seconds": dict(phases), "index_chunks_per_s": chunks / (indexed - filled),
                               "simulated_vectors": simulated or 0,
                               "disk_mb": disk, "peak_rss_mb": peak})  # fmt: skip


if __name__ == "__main__":
    main()
