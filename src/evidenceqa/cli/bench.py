"""Benchmark commands."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from evidenceqa.bench import retrieval as bench_retrieval
from evidenceqa.bench.metrics import METRICS
from evidenceqa.cli.app import bench_app
from evidenceqa.cli.common import emit, err, fail, out, progress_bar, settings_of
from evidenceqa.cli.search import open_engine, open_retriever

MODES = ("bm25", "dense", "hybrid")


@bench_app.command("retrieval")
def retrieval(
    ctx: typer.Context,
    benchmark: Annotated[
        Path, typer.Option(help="Benchmark JSONL (query_id, question, gold_doc_ids, gold_passages).")
    ],
    mode: Annotated[str, typer.Option(help="bm25, dense, hybrid, or all.")] = "all",
    k: Annotated[int, typer.Option("--k", help="Results per question.")] = 10,
    limit: Annotated[int | None, typer.Option(help="Only the first N questions.")] = None,
    out_dir: Annotated[Path, typer.Option("--out", help="Where the JSON report goes.")] = Path("reports"),
    markdown_output: Annotated[bool, typer.Option("--markdown", help="Print a Markdown table.")] = False,
) -> None:
    """MRR@10, P@1/3/5, Recall@10, nDCG@10 at the document and passage level, per search mode."""
    modes = MODES if mode == "all" else (mode,)
    if any(m not in MODES for m in modes):
        fail(f"--mode is one of {', '.join(MODES)} or all")
    try:
        questions = bench_retrieval.read_questions(benchmark, limit)
    except (OSError, ValueError) as exc:
        fail(str(exc))
    settings = settings_of(ctx)
    with open_engine(settings) as engine:
        if not engine.is_current():
            fail(f"{engine.pending()} chunks are not indexed yet: run `evidenceqa index` first")
        retriever = open_retriever(engine)
        results = []
        for m in modes:
            with progress_bar(f"{benchmark.stem} · {m}", len(questions)) as bar:
                results.append(
                    bench_retrieval.run(retriever, questions, m, k, lambda: bar.advance(bar.task_ids[0]))
                )
        recorded = {"embedder": engine.embedder.model_id, "backend": engine.backend.name, "k": k,
                    "fusion": settings.fusion, "alpha": settings.alpha, "rrf_k": settings.rrf_k}  # fmt: skip
    path = bench_retrieval.write_report(results, benchmark, out_dir, recorded)
    headers = ["Mode", "Level", *METRICS]
    title = f"{benchmark.stem}: {len(questions)} questions"
    emit(
        headers,
        list(bench_retrieval.table_rows(results)),
        markdown_output,
        [False, False] + [True] * 6,
        title,
    )
    err.print(f"report: {path}")
    if not markdown_output:
        out.print(f"embedder {recorded['embedder']} · backend {recorded['backend']}", highlight=False)
