"""What every command shares: the consoles, settings from the context, errors, tables, progress."""

from __future__ import annotations

import errno
import sys
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Annotated, NoReturn

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from evidenceqa import evidence_types
from evidenceqa.chunking import STRATEGIES, ChunkingConfig
from evidenceqa.library.catalogue import Catalogue
from evidenceqa.retrieval.question import QuestionError, clean_question
from evidenceqa.settings import Settings
from evidenceqa.text import markdown

# Tables are wider than the 80 columns rich assumes when output goes to a file or a pipe. No markup:
# the library's text is printed as written ("[see below]", "[e.g. IL-8]" are text, not style tags);
# what is styled is styled with Text.
out = Console(width=None if sys.stdout.isatty() else 140, markup=False)
err = Console(stderr=True, width=None if sys.stderr.isatty() else 140, markup=False)


def labelled(label: str, style: str, message: str) -> Text:
    """`label: message`, the label in `style`, the message as written."""
    return Text.assemble((f"{label}:", style), " ", message)


def document_labels(catalogue: Catalogue, passages: Iterable[tuple[str, str | None, str]]) -> dict[str, str]:
    """What a reader calls the document of each (doc_id, title, passage), as the web app and MCP name
    it: its title, or for a title-less PubMed abstract its kind and topics, never a bare id when
    there is more. A document gone from the library is named by the title it was found with."""
    passages = list(passages)
    documents = catalogue.documents_as_found((doc_id, title) for doc_id, title, _ in passages)
    # The first passage of a document names it.
    return {doc_id: documents[doc_id].label(passage) for doc_id, _, passage in reversed(passages)}


def settings_of(ctx: typer.Context) -> Settings:
    return ctx.obj


def fail(message: str, code: int = 2) -> NoReturn:
    err.print(labelled("error", "red", message), soft_wrap=True)
    raise typer.Exit(code)


def checked_question(settings: Settings, question: str) -> str:
    """The question cleaned, or exit with why it cannot be asked (empty, too long), before any model loads."""
    try:
        return clean_question(question, settings.max_question_chars)
    except QuestionError as exc:
        fail(str(exc))


EvidenceTypes = Annotated[
    list[str] | None,
    typer.Option("--evidence-type", help=f"Only these kinds of evidence: {', '.join(evidence_types.KEYS)}."),
]
PreferEvidence = Annotated[
    bool, typer.Option(help="Rank stronger evidence (guidelines, systematic reviews, trials) higher.")
]


def checked_evidence_types(keys: list[str] | None) -> tuple[str, ...]:
    """The --evidence-type values, or exit naming the one that is not a type."""
    if problem := evidence_types.unknown_types(keys or ()):
        fail(f"--evidence-type: {problem}")
    return tuple(keys or ())


def disk_full(exc: BaseException) -> str | None:
    """What said the disk is full, when `exc` (or what caused it) did: an OSError ENOSPC, SQLite's
    "database or disk is full", LanceDB's "No space left on device"; else None."""
    seen: BaseException | None = exc
    while seen is not None:
        text = str(seen).splitlines()[0] if str(seen) else type(seen).__name__
        if isinstance(seen, OSError) and seen.errno == errno.ENOSPC:
            return text
        if "database or disk is full" in text or "No space left on device" in text:
            return text
        seen = seen.__cause__ or seen.__context__
    return None


def _labelled(label: str, message: str) -> None:
    err.print(labelled(label, "yellow", message), soft_wrap=True)


def skipped(message: str) -> None:
    """Something the command could not use (a bad file, a bad record); the rest went on."""
    _labelled("skipped", message)


def warn(message: str) -> None:
    """Done as asked, but with a risk the user should know of."""
    _labelled("warning", message)


def note(message: str) -> None:
    """Something done differently from what the user may expect, nothing lost."""
    _labelled("note", message)


def chunking(settings: Settings, strategy: str | None = None) -> ChunkingConfig:
    name = strategy or settings.chunk_strategy
    if name not in STRATEGIES:
        fail(f"unknown strategy {name!r}; choose one of: {', '.join(STRATEGIES)}")
    return ChunkingConfig.of(settings, name)


def emit(
    headers: Sequence[str],
    rows: Sequence[Sequence[object]],
    as_markdown: bool,
    numeric: Sequence[bool] = (),
    title: str | None = None,
) -> None:
    """Print a table for a person (rich) or for a generated document (Markdown)."""
    if as_markdown:
        print(markdown.table(headers, rows, numeric), end="")
        return
    table = Table(*headers, title=title)
    for row in rows:
        table.add_row(*("" if cell is None else str(cell) for cell in row))
    out.print(table)


@contextmanager
def progress_bar(description: str, total: int) -> Iterator[Progress]:
    """A progress bar on stderr with one task; advance it with `bar.advance(bar.task_ids[0], n)`."""
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=err) as bar:
        bar.add_task(description, total=total or 1)
        yield bar
