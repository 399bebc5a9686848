"""Library commands: ingest, remove, library, preview, chunk-stats."""

from __future__ import annotations

from itertools import islice
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from evidenceqa.chunking import STRATEGIES, ChunkStats, chunk_stats
from evidenceqa.cli.app import app
from evidenceqa.cli.calibrate import calibrate_library
from evidenceqa.cli.common import (
    chunking,
    document_labels,
    emit,
    err,
    fail,
    labelled,
    note,
    out,
    settings_of,
    skipped,
)
from evidenceqa.cli.search import open_engine, sync_engine
from evidenceqa.documents import Document
from evidenceqa.library import preview
from evidenceqa.library.catalogue import Catalogue
from evidenceqa.library.ingest import FileReport, Ingestor
from evidenceqa.loaders import LoadError, iter_files, load
from evidenceqa.settings import Settings


@app.command()
def ingest(
    ctx: typer.Context,
    paths: Annotated[
        list[Path],
        typer.Argument(help="Files or folders (JSONL, JATS XML, PDF, HTML, MedQuAD XML, Markdown)."),
    ],
    strategy: Annotated[str | None, typer.Option(help="Chunking strategy (default from settings).")] = None,
    index: Annotated[bool, typer.Option(help="Bring the search index up to date afterwards.")] = True,
) -> None:
    """Add documents to the library and index them; unchanged files are skipped, changed ones replaced."""
    settings = settings_of(ctx)
    files = list(iter_files(paths))
    with Catalogue(settings.catalogue_path) as catalogue:
        ingestor = Ingestor(
            catalogue, chunking(settings, strategy), settings.max_file_mb, settings.max_read_seconds
        )
        reports = _run_ingest(ingestor, files)
        version = catalogue.index_version
    for report in reports:
        for error in report.errors:
            skipped(str(error))
        for line in report.warnings:
            note(line)
    _print_ingest_summary(reports, version)
    if not any(r.status != "failed" for r in reports):
        raise typer.Exit(1)
    if index:
        _index_and_calibrate(settings)


def _index_and_calibrate(settings: Settings) -> None:
    """The index brought up to the library, then abstention refitted if the library is new to it or
    has changed enough since (`calibration_questions` 0: never here)."""
    with open_engine(settings) as engine:  # one embedder load for both
        sync_engine(engine)
        if settings.calibration_questions:
            calibrate_library(engine, settings.calibration_questions)


def _run_ingest(ingestor: Ingestor, files: list[Path]) -> list[FileReport]:
    sizes = {path: path.stat().st_size if path.is_file() else 0 for path in files}
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.fields[docs]} docs"),
        TimeElapsedColumn(),
    )
    reports = []
    with Progress(*columns, console=err, transient=False) as progress:
        task = progress.add_task("ingest", total=sum(sizes.values()) or 1, docs=0)
        counter = {"docs": 0}

        def tick() -> None:
            counter["docs"] += 1
            progress.update(task, docs=counter["docs"])

        for path in files:
            progress.update(task, description=f"ingest {path.name[:40]}")
            reports.append(ingestor.ingest_file(path, on_document=tick))
            progress.advance(task, sizes[path])
        progress.update(task, description="ingest done")
    return reports


def _print_ingest_summary(reports: list[FileReport], version: int) -> None:
    total = {
        key: sum(getattr(r, key) for r in reports)
        for key in ("added", "updated", "unchanged", "removed", "chunks")
    }
    statuses = [r.status for r in reports]
    out.print(
        f"files: {statuses.count('ingested')} read, {statuses.count('unchanged')} unchanged, "
        f"{statuses.count('failed')} failed · documents: {total['added']} added, {total['updated']} updated, "
        f"{total['unchanged']} unchanged, {total['removed']} removed · {total['chunks']} chunks written · "
        f"index version {version}",
        highlight=False,
    )


@app.command()
def remove(
    ctx: typer.Context,
    doc_ids: Annotated[list[str], typer.Argument(help="Document ids to remove.")],
    index: Annotated[bool, typer.Option(help="Remove them from the search index too.")] = True,
) -> None:
    """Remove documents (and their chunks) from the library."""
    with Catalogue(settings_of(ctx).catalogue_path) as catalogue:
        ingestor = Ingestor(catalogue, chunking(settings_of(ctx)))
        missing = [doc_id for doc_id in doc_ids if not ingestor.remove(doc_id)]
    for doc_id in missing:
        err.print(labelled("not in the library", "yellow", doc_id))
    out.print(f"removed {len(doc_ids) - len(missing)} document(s)")
    if len(missing) == len(doc_ids):
        raise typer.Exit(1)
    if index:
        _index_and_calibrate(settings_of(ctx))


@app.command()
def library(
    ctx: typer.Context,
    documents: Annotated[
        bool, typer.Option("--documents", help="List documents, not just collections.")
    ] = False,
    collection: Annotated[str | None, typer.Option(help="Only this collection.")] = None,
    limit: Annotated[int, typer.Option(help="How many documents to list.")] = 50,
) -> None:
    """What is in the library: collections, documents, chunks, years."""
    with Catalogue(settings_of(ctx).catalogue_path) as catalogue:
        table = Table(
            "Collection",
            "Documents",
            "Chunks",
            "Years",
            title=f"Library · index version {catalogue.index_version}",
        )
        rows = [row for row in catalogue.summary() if collection in (None, row[0])]
        for name, docs, chunks, first, last in rows:
            table.add_row(name, f"{docs:,}", f"{chunks:,}", f"{first}–{last}" if first else "–")
        table.add_row(
            "total", f"{sum(r[1] for r in rows):,}", f"{sum(r[2] for r in rows):,}", "", style="bold"
        )
        out.print(table)
        if documents:
            listed = list(islice(catalogue.documents(collection), limit))
            # A title-less document (a PubMed abstract) is named as the chat names it, not left blank.
            labels = document_labels(catalogue, ((r.doc_id, r.title, "") for r in listed))
            listing = Table("doc_id", "Year", "Chunks", "Title")
            for record in listed:
                listing.add_row(
                    record.doc_id, str(record.year or ""), str(record.chunks), labels[record.doc_id][:80]
                )
            out.print(listing)


@app.command("preview")
def preview_command(
    ctx: typer.Context,
    paths: Annotated[list[Path], typer.Argument(help="Files or folders to try, nothing is stored.")],
    markdown_output: Annotated[bool, typer.Option("--markdown", help="Print a Markdown table.")] = False,
) -> None:
    """What ingesting these files would give: per document its id, title, size and chunks, or the error."""
    base = paths[0] if len(paths) == 1 and paths[0].is_dir() else None
    rows = preview.preview(paths, chunking(settings_of(ctx)), relative_to=base)
    emit(preview.HEADERS, [preview.cells(r) for r in rows], markdown_output, numeric=preview.NUMERIC)


@app.command("chunk-stats")
def chunk_stats_command(
    ctx: typer.Context,
    files: Annotated[
        list[Path] | None, typer.Argument(help="Files or folders; default: the ingested library.")
    ] = None,
    strategy: Annotated[str, typer.Option(help="One strategy, or 'all'.")] = "all",
    collection: Annotated[str | None, typer.Option(help="Only this collection (ingested library).")] = None,
    markdown_output: Annotated[bool, typer.Option("--markdown", help="Print a Markdown table.")] = False,
) -> None:
    """The chunking table: chunks, sizes and context loss for each strategy."""
    settings = settings_of(ctx)
    names = list(STRATEGIES) if strategy == "all" else [strategy]
    configs = [chunking(settings, name) for name in names]
    docs = _load_for_stats(settings, files, collection)
    if not docs:
        fail("no documents to measure: ingest some, or name files")
    rows = [_stats_cells(chunk_stats(docs, config)) for config in configs]
    headers = ["Strategy", "Docs", "Chunks", "Avg words", "Max words", f"Over {settings.chunk_max_words} words",
               "Ends mid-sentence", "Context loss"]  # fmt: skip
    title = "Chunking strategies (context loss = chunks ending mid-sentence or mid-paragraph)"
    emit(headers, rows, markdown_output, numeric=[False] + [True] * 7, title=title)


def _load_for_stats(settings: Settings, files: list[Path] | None, collection: str | None) -> list[Document]:
    if not files:
        with Catalogue(settings.catalogue_path) as catalogue:
            return list(catalogue.iter_documents(collection))
    docs = []
    for path in iter_files(files):
        for item in load(path, settings.max_file_mb, settings.max_read_seconds):
            if isinstance(item, LoadError):
                skipped(str(item))
            elif collection in (None, item.collection):
                docs.append(item)
    return docs


def _stats_cells(row: ChunkStats) -> list[str]:
    return [
        row.strategy, f"{row.documents:,}", f"{row.chunks:,}", f"{row.avg_words:.0f}", f"{row.max_words:,}",
        f"{row.over_limit:.1%}", f"{row.loss.mid_sentence:.1%}", f"{row.loss.context_loss:.1%}",
    ]  # fmt: skip
