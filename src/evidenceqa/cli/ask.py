"""`evidenceqa ask`: a cited answer from the library, or the honest abstention."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.text import Text

from evidenceqa import DISCLAIMER
from evidenceqa.answer import GenerationError
from evidenceqa.answer.base import DISCARD_STREAMED, NEAREST_NOTE
from evidenceqa.answer.pipeline import Answerer
from evidenceqa.cli.app import app
from evidenceqa.cli.common import (
    EvidenceTypes,
    PreferEvidence,
    checked_evidence_types,
    checked_question,
    document_labels,
    err,
    fail,
    note,
    out,
    progress_bar,
    settings_of,
)
from evidenceqa.cli.search import open_engine, read_queries
from evidenceqa.evidence_types import type_name
from evidenceqa.index.base import Filters
from evidenceqa.library.versions import Successor
from evidenceqa.records import Answer, Citation, by_source_number
from evidenceqa.retrieval.question import QuestionError


@app.command()
def ask(
    ctx: typer.Context,
    question: Annotated[str | None, typer.Argument(help="The question.")] = None,
    k: Annotated[int | None, typer.Option("--k", help="Evidence chunks the answer is drawn from.")] = None,
    year_min: Annotated[int | None, typer.Option(help="Only evidence from this year on.")] = None,
    year_max: Annotated[int | None, typer.Option(help="Only evidence up to this year.")] = None,
    collection: Annotated[list[str] | None, typer.Option(help="Only these collections.")] = None,
    evidence_type: EvidenceTypes = None,
    prefer_evidence: PreferEvidence = False,
    cache: Annotated[bool, typer.Option(help="Reuse an identical earlier answer.")] = True,
    after: Annotated[
        list[str] | None,
        typer.Option(
            help="An earlier question of the conversation (repeat, oldest first): the question "
            "is a follow-up, resolved against them."
        ),
    ] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print the answer record as JSON.")] = False,
    queries: Annotated[
        Path | None, typer.Option(help="Batch: JSONL rows with query_id and question.")
    ] = None,
    out_path: Annotated[Path | None, typer.Option("--out", help="Batch: where to write answer rows.")] = None,
) -> None:
    r"""Answer from the library only, citing each sentence \[n]; or say the library does not hold the answer."""
    if (question is None) == (queries is None):
        fail("give a question, or --queries FILE (with --out FILE)")
    if queries is not None and out_path is None:
        fail("--queries needs --out FILE")
    if question is not None:
        question = checked_question(settings_of(ctx), question)
    filters = Filters(
        year_min=year_min, year_max=year_max, collections=tuple(collection or ()),
        evidence_types=checked_evidence_types(evidence_type), prefer_evidence=prefer_evidence,
    )  # fmt: skip
    if problem := filters.year_problem():
        fail(f"--year-min/--year-max: {problem}")
    with open_engine(settings_of(ctx)) as engine:
        if not engine.is_current():
            note(f"{engine.pending()} chunks are not indexed yet: run `evidenceqa index`")
        answerer = _answerer(engine)
        if queries is not None:
            assert out_path is not None  # checked above
            _batch(answerer, read_queries(queries), out_path, filters, k, cache)
            return
        assert question is not None  # exactly one of a question and --queries, checked above
        _one(answerer, question, filters, k, cache, json_output, after or [])


def _answerer(engine: Any) -> Answerer:
    try:
        return engine.answerer()
    except (GenerationError, ValueError) as exc:
        fail(str(exc))


def _one(answerer: Answerer, question: str, filters: Filters, k: int | None, cache: bool, as_json: bool,
         after: list[str]) -> None:  # fmt: skip
    stream = None if as_json else _print_delta
    try:
        previous = answerer.searched_forms(after)
        answer = answerer.ask(question, filters, k, on_delta=stream, use_cache=cache, previous=previous)
    except GenerationError as exc:
        fail(str(exc), code=1)
    if as_json:
        print(json.dumps(answer.to_row(), ensure_ascii=False, indent=1))
    else:
        catalogue = answerer.retriever.catalogue
        shown = answer.shown_passages()
        labels = document_labels(catalogue, ((c.doc_id, c.title, c.text) for c in shown))
        _print_answer(answer, labels, catalogue.superseded_by(c.doc_id for c in shown))


def _print_delta(text: str) -> None:
    if text == DISCARD_STREAMED:  # printed text cannot be taken back: say it is void
        sys.stdout.write("\n")
        err.print(
            "the LLM failed mid-answer: disregard the text above; the extractive answer follows",
            style="yellow",
        )
        return
    sys.stdout.write(text)
    sys.stdout.flush()


def _print_source(
    mark: Text, passages: list[Citation], labels: dict[str, str], replaced: dict[str, Successor]
) -> None:
    """One document: its mark ("[2] "), name, year and kind, then each passage quoted under its section."""
    first = passages[0]
    kind = type_name(first.evidence_type) or ""
    where = " — ".join(x for x in (labels[first.doc_id], str(first.year or ""), kind) if x)
    out.print(Text.assemble("\n", mark, where), soft_wrap=True)
    if successor := replaced.get(first.doc_id):
        out.print(f"    superseded by {successor.label()}", style="yellow", highlight=False)
    for citation in passages:
        section = f"{citation.section}: " if citation.section else ""
        out.print(f'    {section}"{citation.text}"', highlight=False, soft_wrap=True)


def _print_answer(answer: Answer, labels: dict[str, str], replaced: dict[str, Successor]) -> None:
    print()
    for n, passages in answer.sources():
        _print_source(Text.assemble((f"[{n}]", "bold"), " "), passages, labels, replaced)
    if answer.nearest:  # an abstention: what the library holds nearby, unnumbered, as the chat shows it
        out.print(f"\n{NEAREST_NOTE}", style="dim")
        for _, passages in by_source_number(answer.nearest):
            _print_source(Text("- "), passages, labels, replaced)
    if answer.unsupported:
        err.print(
            f"{answer.unsupported} sentence(s) could not be tied to their cited evidence", style="yellow"
        )
    if answer.searched_for:
        err.print(f"\nsearched for: {answer.searched_for}", highlight=False)
    cached = " · cached" if answer.cache_hit else ""
    err.print(
        f"\n{answer.generator} · {answer.timings_ms.get('total', 0):.0f} ms · ${answer.cost_usd['total']:.4f}{cached}",
        highlight=False,
    )
    err.print(DISCLAIMER, style="dim")


def _batch(answerer: Answerer, rows: list[tuple[str, str]], out_path: Path, filters: Filters,
           k: int | None, cache: bool) -> None:  # fmt: skip
    out_path.parent.mkdir(parents=True, exist_ok=True)
    failed = 0
    with out_path.open("w", encoding="utf-8") as stream, progress_bar("ask", len(rows)) as bar:
        for query_id, question in rows:
            try:
                record = answerer.ask(question, filters, k, use_cache=cache).to_row() | {"query_id": query_id}
            except (GenerationError, QuestionError) as exc:  # one failed question does not lose the batch
                failed += 1
                record = {"query_id": query_id, "question": question, "error": str(exc)}
            stream.write(json.dumps(record, ensure_ascii=False) + "\n")
            bar.advance(bar.task_ids[0])
    err.print(f"{len(rows) - failed} answered, {failed} failed → {out_path}")
    if rows and failed == len(rows):
        raise typer.Exit(1)
