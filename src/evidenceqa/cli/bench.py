"""Benchmark commands."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer

from evidenceqa.answer.abstain import Abstainer
from evidenceqa.answer.cache import MemoryCache
from evidenceqa.answer.calibration import calibrate, library_size
from evidenceqa.bench import answers as bench_answers
from evidenceqa.bench import gaps as bench_gaps
from evidenceqa.bench import grid as bench_grid
from evidenceqa.bench import machine
from evidenceqa.bench import plots as bench_plots
from evidenceqa.bench import report as bench_report
from evidenceqa.bench import retrieval as bench_retrieval
from evidenceqa.bench import temporal as bench_temporal
from evidenceqa.bench.metrics import METRICS
from evidenceqa.cli.app import bench_app
from evidenceqa.cli.common import emit, err, fail, out, progress_bar, settings_of, warn
from evidenceqa.cli.search import open_engine, open_retriever
from evidenceqa.embeddings import EmbeddingError
from evidenceqa.retrieval.retriever import SearchMode

MODES: tuple[SearchMode, ...] = ("bm25", "dense", "hybrid")
# Options of the commands that build a content-gap set (gaps, abstention): one wording for both.
GapSource = Annotated[
    Path, typer.Option(help="A benchmark whose gold documents can be held out (covidqa-dev).")
]
HeldOutShare = Annotated[float, typer.Option(help="Share of the gold documents held out.")]


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
    """MRR@10, Success@1/3/5, Recall@10, nDCG@10 at the document and passage level, per search mode."""
    if mode != "all" and mode not in MODES:
        fail(f"--mode is one of {', '.join(MODES)} or all")
    modes = [m for m in MODES if mode in ("all", m)]
    try:
        questions = [q for q in bench_retrieval.read_questions(benchmark, limit) if q.answerable]
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
                    "fusion": settings.fusion, "alpha": settings.alpha, "rrf_k": settings.rrf_k,
                    "machine": machine.current().as_dict()}  # fmt: skip
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
    _measured_on(markdown_output)


@bench_app.command("temporal")
def temporal(
    ctx: typer.Context,
    benchmark: Annotated[
        Path, typer.Option(help="A dated benchmark (PubMedQA) to turn into temporal questions.")
    ],
    limit: Annotated[int | None, typer.Option(help="Only the first N source questions.")] = None,
    seed: Annotated[int, typer.Option(help="Seed for the years the phrases name.")] = 13,
    out_dir: Annotated[Path, typer.Option("--out", help="Where the generated questions go.")] = Path(
        "reports"
    ),
    markdown_output: Annotated[bool, typer.Option("--markdown", help="Print a Markdown table.")] = False,
) -> None:
    """Build the temporal benchmark and score it with temporal handling on and off."""
    try:
        questions = bench_retrieval.read_questions(benchmark, limit)
    except (OSError, ValueError) as exc:
        fail(str(exc))
    with open_engine(settings_of(ctx)) as engine:
        retriever = open_retriever(engine)

        def found(question: str, handling: bool = False) -> list[bench_temporal.Found]:
            results = retriever.search(question, k=10, temporal=handling).results
            return [bench_temporal.Found(r.chunk.doc_id, r.chunk.year) for r in results]

        def year_of(doc_id: str) -> int | None:
            record = engine.catalogue.document(doc_id)
            return record.year if record else None

        rows = bench_temporal.build(questions, year_of, lambda q: [f.year for f in found(q)], seed)
        table = bench_temporal.evaluate(rows, found)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"temporal-{benchmark.stem}.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    headers = ["Constraint", "Questions", "Temporal handling", "Doc MRR@10", "Top-10 results breaking it"]
    emit(
        headers,
        table,
        markdown_output,
        [False, True, False, True, True],
        f"temporal questions from {benchmark.stem}",
    )
    _measured_on(markdown_output)
    err.print(f"{len(rows)} temporal questions from {len(questions)} → {path}")


@bench_app.command("gaps")
def gaps(
    ctx: typer.Context,
    benchmark: GapSource,
    fraction: HeldOutShare = bench_gaps.FRACTION,
    seed: Annotated[int, typer.Option(help="Seed for which documents are held out.")] = bench_gaps.SEED,
    out_dir: Annotated[Path, typer.Option("--out", help="Where the content-gap set goes.")] = Path("reports"),
    markdown_output: Annotated[bool, typer.Option("--markdown", help="Print a Markdown table.")] = False,
) -> None:
    """Build a content-gap set and measure how well the best score separates it from answerable questions."""
    if not 0 < fraction < 1:
        fail("--fraction is between 0 and 1")
    try:
        questions = bench_retrieval.read_questions(benchmark)
    except (OSError, ValueError) as exc:
        fail(str(exc))
    rows = bench_gaps.build(questions, fraction, seed)
    with open_engine(settings_of(ctx)) as engine:
        retriever = open_retriever(engine)

        def top_score(row: dict) -> tuple[float, bool]:
            question = bench_retrieval.Question.from_row(row)
            results = retriever.search(
                question.question, k=10, filters=bench_retrieval.question_filters(question)
            ).results
            best = results[0].score if results else 0.0
            return best, any(r.chunk.doc_id in row["gold_doc_ids"] for r in results)

        table, separability = bench_gaps.separation(rows, top_score)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"gaps-{benchmark.stem}.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    headers = ["Questions", "Count", "Gold in top 10", "Best score Q1", "Median", "Q3"]
    emit(
        headers,
        table,
        markdown_output,
        [False, True, True, True, True, True],
        f"content gaps in {benchmark.stem}",
    )
    print(f"\nAUC of the best score as a detector of answerable questions: {separability:.3f}")
    _measured_on(markdown_output)
    err.print(
        f"{len(rows)} questions ({sum(not r['meta']['answerable'] for r in rows)} content gaps) → {path}"
    )


@bench_app.command("grid")
def grid(
    ctx: typer.Context,
    library: Annotated[list[Path], typer.Option(help="Library file or folder to ingest; repeat for more.")],
    benchmark: Annotated[list[Path], typer.Option(help="Benchmark JSONL; repeat for more.")],
    chunking: Annotated[
        str | None, typer.Option(help="Chunking strategies, comma-separated (default from settings).")
    ] = None,
    embedder: Annotated[
        str | None,
        typer.Option(help="Embedders, comma-separated: minilm-onnx, onnx:PATH, … (default from settings)."),
    ] = None,
    mode: Annotated[str, typer.Option(help="Search modes, comma-separated.")] = ",".join(bench_grid.MODES),
    backend: Annotated[
        str | None,
        typer.Option(help="Search backends, comma-separated: lancedb, milvus (default from settings)."),
    ] = None,
    work: Annotated[
        Path,
        typer.Option(help="Where the data homes (one per strategy) and the shared embedding cache live."),
    ] = Path(".evidenceqa-grid"),
    out_dir: Annotated[Path, typer.Option("--out", help="Where grid.json, grid.md and the plots go.")] = Path(
        "reports/grid"
    ),
    limit: Annotated[
        int | None, typer.Option(min=1, help="Only the first N questions of each benchmark.")
    ] = None,
    link_base: Annotated[
        str | None, typer.Option(help="Prefix of the Markdown image links (default: the --out folder).")
    ] = None,
    scope: Annotated[
        list[str] | None,
        typer.Option(
            help=r"BENCHMARK=COLLECTION\[,COLLECTION]: what a benchmark searches (default all); repeat."
        ),
    ] = None,
    markdown_output: Annotated[bool, typer.Option("--markdown", help="Print the Markdown report.")] = False,
) -> None:
    """Every cell of chunking × embedder × mode × backend on every benchmark: tables, slices and plots."""
    settings = settings_of(ctx)
    try:
        axes = {
            "chunking": bench_grid.parse_axis("chunking", chunking or settings.chunk_strategy),
            "embedder": bench_grid.parse_axis("embedder", embedder or settings.embedder),
            "mode": bench_grid.parse_axis("mode", mode),
            "backend": bench_grid.parse_axis("backend", backend or settings.backend),
        }
        spec = bench_grid.GridSpec(
            library, benchmark, axes, work, limit, bench_grid.parse_scopes(scope or [])
        )
        result = bench_grid.run(spec, settings, _track)
    except (EmbeddingError, ValueError, OSError) as exc:
        fail(str(exc))
    for line in dict.fromkeys(result.warnings):
        warn(line)
    plots = bench_plots.write_plots(result, out_dir)
    json_path, md_path = bench_report.write(
        result, plots, out_dir, str(out_dir) if link_base is None else link_base
    )
    if markdown_output:
        print(md_path.read_text(encoding="utf-8"), end="")
    else:
        for name in result.benchmarks:
            headers, rows = bench_report.summary(result, name)
            title = f"{name}: {result.questions(name)} questions"
            emit(headers, rows, False, [False] * 4 + [True] * 5, title)
    err.print(f"report: {md_path}, {json_path} and {len(plots.paths())} plots")


def _measured_on(as_markdown: bool) -> None:
    """The machine under a benchmark's table: dense scores, not only timings, move with its kernels."""
    if as_markdown:
        print(f"\n{machine.measured_on()}")
    else:
        out.print(machine.measured_on(), highlight=False)


@contextmanager
def _track(description: str, total: int) -> Iterator[Callable[[int], None]]:
    with progress_bar(description, total) as bar:
        yield lambda n: bar.advance(bar.task_ids[0], n)


@bench_app.command("abstention")
def abstention(
    ctx: typer.Context,
    benchmark: GapSource,
    fraction: HeldOutShare = bench_gaps.FRACTION,
    max_false: Annotated[
        float, typer.Option(help="Most answerable questions abstained on, when fitting.")
    ] = 0.10,
    seed: Annotated[int, typer.Option(help="Seed for which documents are held out.")] = bench_gaps.SEED,
    review: Annotated[
        Path | None,
        typer.Option(help="A review of the gap questions' evidence (JSONL): who is answered elsewhere."),
    ] = None,
    write: Annotated[bool, typer.Option(help="Save the calibration in the data home for `ask`.")] = False,
    markdown_output: Annotated[bool, typer.Option("--markdown", help="Print a Markdown table.")] = False,
) -> None:
    """Calibrate abstention on a content-gap set: fit on the even questions, report on the odd ones."""
    if not 0 < fraction < 1 or not 0 <= max_false < 1:
        fail("--fraction is between 0 and 1, --max-false from 0 to below 1")
    try:
        rows = bench_gaps.build(bench_retrieval.read_questions(benchmark), fraction, seed)
        answering = bench_gaps.read_review(review) if review else {}
    except (OSError, ValueError) as exc:
        fail(str(exc))
    settings = settings_of(ctx)
    with open_engine(settings) as engine, progress_bar(f"{benchmark.stem} · search", len(rows)) as bar:
        found = bench_answers.samples(open_retriever(engine), rows, settings.evidence_k, answering,
                                      lambda: bar.advance(bar.task_ids[0]))  # fmt: skip
        chunks = library_size(engine.catalogue)  # the calibration is keyed to it, as `calibrate` does
    fitting, held_out = bench_answers.halves(found)
    model = calibrate(fitting, max_false, f"{benchmark.name} (even questions), seed {seed}")
    calibrated = f"calibrated (≤ {max_false:.0%} false on the fit half)"
    # The halves swapped: how much the figures owe to which questions fell in which half.
    swapped = calibrate(held_out, max_false, "")
    table = [
        bench_answers.evaluate(Abstainer(), held_out).row("uncalibrated floor", "as held out"),
        bench_answers.evaluate(model, held_out).row(calibrated, "as held out"),
        bench_answers.evaluate(model, held_out, verified=True).row(calibrated, "verified"),
        bench_answers.evaluate(swapped, fitting, verified=True).row(
            "the same, fitted on the odd half, reported on the even", "verified"
        ),
    ]
    title = f"abstention on the odd questions of {benchmark.stem}'s content-gap set"
    emit(bench_answers.ABSTENTION_HEADERS, table, markdown_output, [False] * 2 + [True] * 6, title)
    if markdown_output:
        print()  # the two Markdown tables apart
    emit(bench_answers.LEFT_OUT_HEADERS, bench_answers.left_out(model, held_out), markdown_output,
         [False, True, True], "left out of the verified labels")  # fmt: skip
    _measured_on(markdown_output)
    if write:
        model.library_chunks = chunks
        err.print(f"calibration: {model.save(settings.home)}")


@bench_app.command("answers")
def answers(
    ctx: typer.Context,
    benchmark: Annotated[list[Path] | None, typer.Option(help="Benchmark JSONL; repeat for more.")] = None,
    gaps: Annotated[
        Path | None,
        typer.Option(
            help="Also its content-gap set (as `bench abstention` builds it): the held-out odd half."
        ),
    ] = None,
    limit: Annotated[int | None, typer.Option(help="Only the first N questions of each.")] = None,
    markdown_output: Annotated[bool, typer.Option("--markdown", help="Print a Markdown table.")] = False,
) -> None:
    """Answer each question: hit rate (cites gold, contains a gold span), abstentions and what they cost,
    unsupported sentences."""
    try:
        sets = [
            group
            for path in benchmark or []
            for group in bench_answers.by_answerability(
                path.stem, bench_retrieval.read_questions(path, limit)
            )
        ]
        if gaps:
            rows = bench_gaps.build(bench_retrieval.read_questions(gaps))[1::2][:limit]
            questions = [bench_retrieval.Question.from_row(r) for r in rows]
            sets += bench_answers.by_answerability(f"{gaps.stem} gap set", questions)
    except (OSError, ValueError) as exc:
        fail(str(exc))
    if not sets:
        fail("give --benchmark FILE and/or --gaps FILE")
    table = []
    with open_engine(settings_of(ctx)) as engine:
        answerer = engine.answerer(MemoryCache(1))
        for name, questions in sets:
            with progress_bar(f"{name} · answer", len(questions)) as bar:
                scores = []
                for q in questions:
                    scores.append(bench_answers.answer_and_score(answerer, q))
                    bar.advance(bar.task_ids[0])
            table.append(bench_answers.answer_row(name, scores, answerer.generator.name))
    emit(bench_answers.ANSWER_HEADERS, table, markdown_output, [False, False] + [True] * 6, "answers")
    _measured_on(markdown_output)
