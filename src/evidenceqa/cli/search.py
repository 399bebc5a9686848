"""Search commands: search (one question or a batch file) and index (status and sync)."""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Annotated, Any, Literal, cast

import typer
from rich.table import Table

from evidenceqa.answer.engine import Engine
from evidenceqa.cli.app import app
from evidenceqa.cli.common import (
    EvidenceTypes,
    PreferEvidence,
    checked_evidence_types,
    checked_question,
    document_labels,
    fail,
    note,
    out,
    progress_bar,
    settings_of,
)
from evidenceqa.embeddings import EmbeddingError
from evidenceqa.evidence_types import type_name
from evidenceqa.index.base import Filters
from evidenceqa.retrieval.question import QuestionError
from evidenceqa.retrieval.retriever import Retriever, SearchMode, SearchResponse
from evidenceqa.settings import Settings


def open_engine(settings: Settings) -> Engine:
    try:
        return Engine.open(settings)
    except (EmbeddingError, ValueError, FileNotFoundError) as exc:
        fail(str(exc))


def open_retriever(engine: Engine) -> Retriever:
    try:
        return engine.retriever()
    except ValueError as exc:
        fail(str(exc))


def sync_index(settings: Settings) -> None:
    """Bring the search index up to the catalogue, with a progress bar; says what it did."""
    with open_engine(settings) as engine:
        sync_engine(engine)


def sync_engine(engine: Engine) -> None:
    """`sync_index` on an engine the caller holds open."""
    pending = engine.pending()
    with progress_bar(f"index ({engine.backend.name}, {engine.embedder.model_id})", pending) as bar:
        try:
            report = engine.sync(lambda n: bar.advance(bar.task_ids[0], n))
        except EmbeddingError as exc:  # what is indexed so far stays; running `index` again resumes
            fail(str(exc))
    out.print(
        f"index: {report.chunks_added} chunks embedded and written for {report.documents_added} documents, "
        f"{report.documents_deleted} documents removed · at version {report.to_version}",
        highlight=False,
    )


@app.command()
def index(ctx: typer.Context) -> None:
    """Bring the search index up to date with the library (ingest and remove do this themselves)."""
    sync_index(settings_of(ctx))


@app.command()
def search(
    ctx: typer.Context,
    question: Annotated[str | None, typer.Argument(help="The question.")] = None,
    k: Annotated[int | None, typer.Option("--k", help="How many results.")] = None,
    mode: Annotated[str, typer.Option(help="hybrid, bm25 or dense.")] = "hybrid",
    level: Annotated[str, typer.Option(help="content (passages) or document (overviews).")] = "content",
    year_min: Annotated[int | None, typer.Option(help="Only documents from this year on.")] = None,
    year_max: Annotated[int | None, typer.Option(help="Only documents up to this year.")] = None,
    collection: Annotated[list[str] | None, typer.Option(help="Only these collections.")] = None,
    doc_type: Annotated[list[str] | None, typer.Option(help="Only these document types.")] = None,
    evidence_type: EvidenceTypes = None,
    prefer_evidence: PreferEvidence = False,
    topic: Annotated[list[str] | None, typer.Option(help="Only documents with any of these topics.")] = None,
    temporal: Annotated[bool, typer.Option(help="Read 'since 2020', 'recent'… as year filters.")] = True,
    json_output: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    queries: Annotated[
        Path | None, typer.Option(help="Batch: JSONL rows with query_id and question.")
    ] = None,
    out_path: Annotated[Path | None, typer.Option("--out", help="Batch: where to write result rows.")] = None,
) -> None:
    """Search the library: hybrid BM25 + vector search, overview chunks left out unless asked for."""
    if mode not in ("hybrid", "bm25", "dense") or level not in ("content", "document"):
        fail("--mode is hybrid, bm25 or dense; --level is content or document")
    if (question is None) == (queries is None):
        fail("give a question, or --queries FILE (with --out FILE)")
    if question is not None:
        question = checked_question(settings_of(ctx), question)
    filters = Filters(
        year_min=year_min, year_max=year_max, collections=tuple(collection or ()),
        doc_types=tuple(doc_type or ()), evidence_types=checked_evidence_types(evidence_type),
        topics=tuple(topic or ()), prefer_evidence=prefer_evidence,
    )  # fmt: skip
    if problem := filters.year_problem():
        fail(f"--year-min/--year-max: {problem}")
    with open_engine(settings_of(ctx)) as engine:
        if not engine.is_current():
            note(f"{engine.pending()} chunks are not indexed yet: run `evidenceqa index`")
        retriever = open_retriever(engine)
        # Typer options cannot be typed as Literals: mode and level were checked above.
        run = partial(
            retriever.search,
            k=k,
            mode=cast(SearchMode, mode),
            filters=filters,
            level=cast(Literal["content", "document"], level),
            temporal=temporal,
        )
        if queries is not None:
            _batch(run, queries, out_path)
            return
        assert question is not None  # exactly one of a question and --queries, checked above
        response = run(question)
        found = [(r.chunk.doc_id, r.chunk.title, r.chunk.body) for r in response.results]
        labels = document_labels(engine.catalogue, found)
    if json_output:
        print(json.dumps(response.to_dict(), ensure_ascii=False, indent=1))
    else:
        _print_response(response, labels)


def _batch(search: Callable[[str], SearchResponse], queries: Path, out_path: Path | None) -> None:
    if out_path is None:
        fail("--queries needs --out FILE")
    rows = read_queries(queries)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    with out_path.open("w", encoding="utf-8") as stream, progress_bar("search", len(rows)) as bar:
        for query_id, question in rows:
            try:
                response = search(question)
            except QuestionError as exc:  # one empty or overlong question does not lose the batch
                record: dict[str, Any] = {"query_id": query_id, "error": str(exc)}
            else:
                record = {"query_id": query_id, "filters": response.filters,
                          "results": [r.to_dict() for r in response.results]}  # fmt: skip
            stream.write(json.dumps(record, ensure_ascii=False) + "\n")
            bar.advance(bar.task_ids[0])
    out.print(f"{len(rows)} questions searched → {out_path}")


def read_queries(path: Path) -> list[tuple[str, str]]:
    rows = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        fail(f"{path}: cannot be read ({exc})")
    for line_no, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            rows.append((str(row["query_id"]), str(row["question"])))
        except (json.JSONDecodeError, KeyError, TypeError):
            fail(f"{path}:{line_no}: each line must be a JSON object with 'query_id' and 'question'")
    return rows


def _print_response(response: SearchResponse, labels: dict[str, str]) -> None:
    notes = [f"mode {response.mode}"]
    if response.alpha is not None:
        notes.append(f"dense weight {response.alpha:.2f} ({response.query_class})")
    if response.temporal:
        notes.append(response.temporal)
    if response.expansions:
        notes.append("expanded " + ", ".join(f"{a} → {b}" for a, b in response.expansions))
    notes.append(f"{response.timings_ms.get('total', 0):.0f} ms")
    out.print(" · ".join(notes), highlight=False)
    table = Table("#", "Score", "Year", "Document / section", "Passage", show_lines=True)
    for r in response.results:
        kind = type_name(r.chunk.evidence_type)
        where = f"{labels[r.chunk.doc_id]}\n{' > '.join(r.chunk.section_path)}" + (
            f"\n{kind}" if kind else ""
        )
        if r.superseded_by:
            where += f"\nsuperseded by {r.superseded_by.label()}"
        table.add_row(str(r.rank), f"{r.score:.4f}", str(r.chunk.year or ""), where, _short(r.chunk.body))
    out.print(table)


def _short(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
