"""Benchmark builder commands: build candidates, put them up for review, export the validated set."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Annotated

import typer

from evidenceqa.cli.app import app
from evidenceqa.cli.common import emit, err, fail, out, progress_bar, settings_of, skipped, warn
from evidenceqa.cli.search import open_engine, open_retriever
from evidenceqa.curation import candidates as files
from evidenceqa.curation import review_store
from evidenceqa.curation.build import build_candidates
from evidenceqa.curation.candidates import Candidate
from evidenceqa.curation.mapping import Mapper, MappingRules
from evidenceqa.curation.metadata import QUESTION_TYPES
from evidenceqa.curation.review import progress, validated_rows, write_benchmark
from evidenceqa.documents import Document
from evidenceqa.library.catalogue import Catalogue
from evidenceqa.loaders import LoadError, iter_files, load
from evidenceqa.settings import Settings
from evidenceqa.store import NotFound, Store, open_store

benchmark_app = typer.Typer(
    help="Build a benchmark from the library's own Q&A content, reviewed by clinicians.", no_args_is_help=True
)
app.add_typer(benchmark_app, name="benchmark")


@benchmark_app.command("build")
def build(
    ctx: typer.Context,
    out_path: Annotated[
        Path | None, typer.Option("--out", help="Candidates JSONL to write (omit to only print the summary).")
    ] = None,
    sources: Annotated[
        list[Path] | None,
        typer.Option(
            "--from", help="Files or folders to take pairs from (default: the library's documents)."
        ),
    ] = None,
    collection: Annotated[str | None, typer.Option(help="Only documents of this collection.")] = None,
    limit: Annotated[int | None, typer.Option(help="Only the first N documents.")] = None,
    mapping: Annotated[
        bool, typer.Option("--map/--no-map", help="Find the library documents that answer each question.")
    ] = True,
    k: Annotated[int, typer.Option("--k", help="How deep each question's search looks.")] = MappingRules.k,
    listing: Annotated[bool, typer.Option("--list", help="Print every pair, not only the counts.")] = False,
    markdown_output: Annotated[bool, typer.Option("--markdown", help="Print Markdown tables.")] = False,
) -> None:
    """Extract question–answer pairs, label them, map them to gold sources, and write the candidates."""
    settings = settings_of(ctx)
    documents = _documents(settings, sources, collection)[:limit]
    built = _mapped(settings, documents, k) if mapping else _built(documents, None)
    if out_path is not None:
        files.write_candidates(out_path, built)
        _say(f"{len(built)} candidates from {len(documents)} documents → {out_path}", to_stderr=True)
    _summary(built, listing, markdown_output)
    outside = sorted({s.doc_id for c in built for s in c.sources if s.in_library is False})
    if outside:
        warn(f"{len(outside)} source documents are not in the library (ingest them to make them findable): "
             + ", ".join(outside[:5]) + (" …" if len(outside) > 5 else ""))  # fmt: skip


def _documents(settings: Settings, sources: list[Path] | None, collection: str | None) -> list[Document]:
    if not sources:
        with Catalogue(settings.catalogue_path) as catalogue:
            return list(catalogue.iter_documents(collection))
    documents = []
    for path in iter_files(sources):
        for item in load(path):
            if isinstance(item, LoadError):
                skipped(str(item))
            elif collection is None or item.collection == collection:
                documents.append(item)
    return documents


def _mapped(settings: Settings, documents: list[Document], k: int) -> list[Candidate]:
    with open_engine(settings) as engine:
        if next(engine.catalogue.documents(), None) is None:
            fail("the library is empty: ingest documents first, or build with --no-map")
        if not engine.is_current():
            fail(f"{engine.pending()} chunks are not indexed yet: run `evidenceqa index` first")
        return _built(documents, Mapper(open_retriever(engine), MappingRules(k=k)))


def _built(documents: list[Document], mapper: Mapper | None) -> list[Candidate]:
    with progress_bar("benchmark build", len(documents)) as bar:
        return list(build_candidates(documents, mapper, lambda _doc, _n: bar.advance(bar.task_ids[0])))


def _summary(built: list[Candidate], listing: bool, as_markdown: bool) -> None:
    counts = Counter((c.pattern, c.metadata.question_type) for c in built)
    patterns = sorted({c.pattern for c in built}, key=files.PATTERNS.index)
    rows = [
        [p, sum(counts[p, t] for t in QUESTION_TYPES), *(counts[p, t] for t in QUESTION_TYPES)]
        for p in patterns
    ]
    rows.append(["all", len(built), *(sum(counts[p, t] for p in patterns) for t in QUESTION_TYPES)])
    emit(["Pattern", "Pairs", *QUESTION_TYPES], rows, as_markdown, [False] + [True] * 5, "pairs found")
    if listing:
        if as_markdown:
            print()  # two tables run together without a blank line between them
        headers = [
            "Document",
            "Question",
            "Pattern",
            "Location",
            "Type",
            "Precision",
            "Topic",
            "Gold sources",
        ]
        emit(headers, [_listing_row(c) for c in built], as_markdown, title="every pair")


def _listing_row(c: Candidate) -> list[str]:
    meta = c.metadata
    gold = ", ".join(f"{s.doc_id} ({s.confidence:.2f})" for s in c.sources)
    return [c.doc_id, c.question, c.pattern, c.location.describe(), meta.question_type, meta.expected_precision,
            meta.topic, gold]  # fmt: skip


@benchmark_app.command("review")
def review(
    ctx: typer.Context,
    name: Annotated[str | None, typer.Option(help="The benchmark's name on the review page.")] = None,
    candidates: Annotated[
        Path | None, typer.Option(help="Candidates JSONL (from `benchmark build`) to put up for review.")
    ] = None,
    csv_out: Annotated[
        Path | None, typer.Option("--csv", help="Write a CSV for experts who review offline.")
    ] = None,
    import_csv: Annotated[
        Path | None, typer.Option("--import-csv", help="Store the decisions of a reviewed CSV.")
    ] = None,
) -> None:
    """Load candidates into the review page (/review/NAME), export them as CSV, or import decisions."""
    proposals = _read_candidates(candidates) if candidates else None
    if name is None:  # a CSV straight from a candidates file: no store involved
        if proposals is None or csv_out is None or import_csv:
            fail("give --name (with --candidates, --csv or --import-csv), or --candidates with --csv")
        _say(f"{files.write_csv(csv_out, proposals)} candidates → {csv_out}")
        return
    if proposals is None and not (csv_out or import_csv):
        fail("give --candidates, --csv or --import-csv")
    with open_store(settings_of(ctx)) as store:
        try:
            if proposals is not None:
                added, updated = review_store.load_candidates(store, name, proposals)
                _say(f"{name}: {added} candidates added, {updated} updated · review them at /review/{name}")
            if import_csv:
                _import_decisions(store, name, import_csv)
            if csv_out:
                listed, decided = review_store.decisions_in_force(store, name)
                _say(f"{files.write_csv(csv_out, listed, decided)} candidates → {csv_out}")
        except (ValueError, NotFound) as exc:
            fail(str(exc))


def _read_candidates(path: Path) -> list[Candidate]:
    try:
        return files.read_candidates(path)
    except (OSError, ValueError) as exc:
        fail(str(exc))


def _say(message: str, to_stderr: bool = False) -> None:
    """One line, never wrapped: paths and counts are read by people and by scripts."""
    (err if to_stderr else out).print(message, soft_wrap=True, highlight=False)


def _import_decisions(store: Store, name: str, path: Path) -> None:
    """All or nothing: every decided row is checked before any is stored."""
    try:
        decisions = files.read_decisions_csv(path)
    except OSError as exc:
        fail(str(exc))
    known = {c.candidate_id for c in review_store.decisions_in_force(store, name)[0]}
    unknown = [d.candidate_id for d in decisions if d.candidate_id not in known]
    if unknown:
        fail(f"{path}: {len(unknown)} rows name no candidate of {name}: {', '.join(unknown[:5])}")
    for decision in decisions:
        review_store.record_decision(store, name, decision)
    _say(f"{name}: {len(decisions)} decisions imported from {path}")


@benchmark_app.command("export")
def export(
    ctx: typer.Context,
    name: Annotated[str, typer.Option(help="The benchmark under review.")],
    out_path: Annotated[Path, typer.Option("--out", help="The validated benchmark JSONL to write.")],
) -> None:
    """Write the accepted and edited pairs in the shared benchmark format (for `evidenceqa bench`)."""
    with open_store(settings_of(ctx)) as store:
        try:
            listed, decided = review_store.decisions_in_force(store, name)
        except NotFound as exc:
            fail(str(exc))
    count = write_benchmark(out_path, list(validated_rows(listed, decided)))
    done = progress(listed, decided)
    _say(
        f"{name}: {count} validated pairs ({done.accepted} accepted, {done.edited} edited) → {out_path} · "
        f"{done.rejected} rejected, {done.candidates - done.reviewed} not reviewed yet"
    )
