"""`evidenceqa adapt` and `evidenceqa train-reranker`: models trained on the library in the data home."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer

from evidenceqa import adapt as adaptation
from evidenceqa.adapt.cross_encoder import train_cross_encoder
from evidenceqa.cli.app import app
from evidenceqa.cli.common import emit, err, fail, progress_bar, settings_of, warn
from evidenceqa.documents import Document
from evidenceqa.embeddings import minilm_path
from evidenceqa.library.catalogue import Catalogue


@app.command()
def adapt(
    ctx: typer.Context,
    out_dir: Annotated[Path, typer.Option("--out", help="Folder the adapted model is written to.")],
    holdout: Annotated[
        list[Path] | None,
        typer.Option(help="Benchmark JSONL whose questions and gold passages must not train the model."),
    ] = None,
    collection: Annotated[
        list[str] | None, typer.Option(help="Train on these collections only (default: all).")
    ] = None,
    base: Annotated[Path | None, typer.Option(help="Model folder to start from (default MiniLM).")] = None,
    max_pairs: Annotated[int, typer.Option(help="Training pairs at most, shared between kinds.")] = 9600,
    batch_size: Annotated[int, typer.Option(help="Pairs per step (in-batch negatives).")] = 32,
    epochs: Annotated[int, typer.Option(help="Passes over the pairs.")] = 1,
    max_minutes: Annotated[float, typer.Option(help="Training stops (and saves) after this long.")] = 25.0,
    seed: Annotated[int, typer.Option(help="Seed for sampling and batching.")] = 13,
) -> None:
    """Fine-tune MiniLM on (heading → paragraph), (abstract → body) and (MedQuAD question → answer) pairs."""
    if max_pairs < batch_size or batch_size < 2 or epochs < 1 or max_minutes <= 0:
        fail("need --max-pairs ≥ --batch-size ≥ 2, --epochs ≥ 1 and --max-minutes > 0")
    if out_dir.exists() and any(out_dir.iterdir()) and not (out_dir / adaptation.MANIFEST).is_file():
        fail(
            f"{out_dir} exists and is not an adapted model (no {adaptation.MANIFEST}): refusing to replace it"
        )
    documents, data, mining_minutes = _training_set(ctx, holdout, collection, max_pairs, batch_size, seed)
    config = adaptation.TrainConfig(batch_size=batch_size, epochs=epochs, max_minutes=max_minutes, seed=seed)
    about = {
        **_about(base or minilm_path(), documents, data, holdout or []),
        "mining_minutes": mining_minutes,
    }
    with _training_bar() as on_step:
        report = adaptation.train(base or minilm_path(), data.triplets, out_dir, config, about, on_step)
    _summary(data, report, mining_minutes)
    print(f"model: {out_dir} — search with it: evidenceqa --embedder onnx:{out_dir} …")


@app.command("train-reranker")
def train_reranker(
    ctx: typer.Context,
    out_dir: Annotated[Path, typer.Option("--out", help="Folder the reranker is written to.")],
    holdout: Annotated[
        list[Path] | None,
        typer.Option(help="Benchmark JSONL whose questions and gold passages must not train the model."),
    ] = None,
    max_pairs: Annotated[int, typer.Option(help="Training pairs at most, shared between kinds.")] = 9600,
    batch_size: Annotated[int, typer.Option(help="Queries per step.")] = 16,
    # 128 (MiniLM's training length): all planned steps fit the 30-minute budget on 2 cores, and
    # re-scoring takes half the time of 192 (docs/retrieval.md).
    max_length: Annotated[int, typer.Option(help="Word pieces of question and passage together.")] = 128,
    max_minutes: Annotated[float, typer.Option(help="Training stops (and saves) after this long.")] = 30.0,
    seed: Annotated[int, typer.Option(help="Seed for sampling and batching.")] = 13,
) -> None:
    """Train the second-stage cross-encoder on the library's own pairs (never a benchmark question)."""
    if max_pairs < batch_size or batch_size < 2 or max_length < 16 or max_minutes <= 0:
        fail("need --max-pairs ≥ --batch-size ≥ 2, --max-length ≥ 16 and --max-minutes > 0")
    if out_dir.exists() and any(out_dir.iterdir()) and not (out_dir / "reranker.json").is_file():
        fail(f"{out_dir} exists and is not a reranker (no reranker.json): refusing to replace it")
    documents, data, mining_minutes = _training_set(ctx, holdout, None, max_pairs, batch_size, seed)
    config = adaptation.TrainConfig(batch_size=batch_size, max_seq_length=max_length, max_minutes=max_minutes,
                                    seed=seed)  # fmt: skip
    about = {**_about(minilm_path(), documents, data, holdout or []), "mining_minutes": mining_minutes}
    with _training_bar() as on_step:
        report = train_cross_encoder(minilm_path(), data.triplets, out_dir, config, about, on_step)
    _summary(data, report, mining_minutes)
    print(f"reranker: {out_dir} — search with it: EVIDENCEQA_RERANK={out_dir} evidenceqa search …")


def _training_set(
    ctx: typer.Context,
    holdout: list[Path] | None,
    collection: list[str] | None,
    max_pairs: int,
    batch_size: int,
    seed: int,
) -> tuple[list[Document], adaptation.TrainingSet, float]:
    """The library's documents, the triplets mined from them past the benchmark guard, and the
    minutes mining took; fails with a one-line reason when there is too little to train on."""
    guard = _holdout(holdout or [])
    settings = settings_of(ctx)
    if not settings.catalogue_path.is_file():
        fail(f"no library in {settings.home}: run `evidenceqa ingest` first")
    with Catalogue(settings.catalogue_path) as catalogue:
        wanted: Sequence[str | None] = collection or [None]  # None: every collection
        documents = [d for c in wanted for d in catalogue.iter_documents(c)]
    if not documents:
        fail(
            f"no documents in {settings.home}"
            + (f" for collection {', '.join(collection)}" if collection else "")
        )
    err.print(f"mining pairs from {len(documents):,} documents…")
    started = time.monotonic()
    data = adaptation.build(documents, guard, max_pairs, seed)
    mining_minutes = (time.monotonic() - started) / 60
    if len(data.triplets) < batch_size:
        fail(f"only {len(data.triplets)} training pairs found; need at least --batch-size ({batch_size})")
    return documents, data, mining_minutes


@contextmanager
def _training_bar() -> Iterator[Callable[[int, int, float], None]]:
    with progress_bar("training", 1) as bar:
        task = bar.task_ids[0]

        def on_step(step: int, total: int, loss: float) -> None:
            bar.update(task, completed=step, total=total, description=f"training · loss {loss:.3f}")

        yield on_step


def _holdout(paths: list[Path]) -> adaptation.Holdout:
    if not paths:
        warn("no --holdout benchmarks: nothing keeps benchmark questions out of training")
    try:
        return adaptation.Holdout.from_files(paths)
    except (OSError, ValueError) as exc:
        fail(str(exc))


def _about(base: Path, documents: list, data: adaptation.TrainingSet, holdout: list[Path]) -> dict:
    return {
        "base": str(base),
        "documents": len(documents),
        "holdout": [str(p) for p in holdout],
        "pairs_mined": dict(data.mined),
        "refused_by_guard": dict(data.refused),
        "without_negative": data.without_negative,
        "triplets": len(data.triplets),
        "triplets_by_kind": {k: sum(t.kind == k for t in data.triplets) for k in sorted(data.mined)},
    }


def _summary(data: adaptation.TrainingSet, report: adaptation.TrainReport, mining_minutes: float) -> None:
    rows = [
        [kind, f"{data.mined[kind]:,}", f"{sum(t.kind == kind for t in data.triplets):,}"]
        for kind in sorted(data.mined)
    ]
    emit(["Pair kind", "Mined", "Kept"], rows, False, [False, True, True], "training pairs")
    for reason, count in sorted(data.refused.items()):
        print(f"refused by the benchmark guard: {count:,} ({reason})")
    budget = " (stopped by the time budget)" if report.stopped_by_budget else ""
    print(
        f"pairs mined in {mining_minutes:.1f} min; "
        f"{report.steps} of {report.planned_steps} steps in {report.minutes:.1f} min{budget}; "
        f"loss {report.first_loss:.3f} → {report.last_loss:.3f}"
    )
