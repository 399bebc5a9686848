"""The benchmark grid: every cell of chunking × embedder × mode × backend, on every benchmark file.

Each chunking strategy gets its own data home, `<work>/<strategy>`; all homes share one embedding
cache and one models folder, so text that two strategies cut alike is embedded once and a re-run
embeds nothing. Embedders and backends live side by side in a home (one vector table per embedder,
see `indexing.space_name`). Library files already ingested unchanged are skipped, so a re-run
mostly searches. A home keeps what earlier runs put in it: a different library wants a new work
folder.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field, replace
from itertools import product
from pathlib import Path
from typing import Any, Literal

import numpy as np

from evidenceqa import registry
from evidenceqa.answer.engine import Engine, EngineOptions
from evidenceqa.bench import retrieval as bench_retrieval
from evidenceqa.bench import slices
from evidenceqa.bench.machine import Machine, current
from evidenceqa.bench.metrics import CUTOFF
from evidenceqa.bench.retrieval import Question
from evidenceqa.chunking import STRATEGIES, ChunkingConfig, stats_of_chunks
from evidenceqa.embeddings import CachedEmbedder, Embedder
from evidenceqa.library.catalogue import Catalogue
from evidenceqa.library.ingest import Ingestor
from evidenceqa.library.vocabulary import Vocabulary, vocabulary_from_counts
from evidenceqa.loaders import iter_files
from evidenceqa.retrieval.retriever import Retriever, SearchMode


@dataclass(frozen=True)
class Mode:
    search: SearchMode
    fusion: Literal["rrf", "weighted"] | None = None  # None: the mode does not fuse


MODES = {
    "bm25": Mode("bm25"),
    "dense": Mode("dense"),
    "hybrid-rrf": Mode("hybrid", "rrf"),
    "hybrid-alpha": Mode("hybrid", "weighted"),  # at the configured dense weight, `alpha`
}
AXES = ("chunking", "embedder", "mode", "backend")
ALLOWED: dict[str, Sequence[str] | None] = {
    "chunking": tuple(STRATEGIES),
    "embedder": None,  # any name the settings accept; a bad one fails when it is loaded
    "mode": tuple(MODES),
    "backend": tuple(registry.names("backend")),
}


class GridError(ValueError):
    """A grid that cannot run as asked; the message says why, on one line."""


def parse_axis(axis: str, value: str) -> list[str]:
    """Comma-separated values of one axis, checked, duplicates dropped."""
    values = list(dict.fromkeys(v.strip() for v in value.split(",")))
    if "" in values:
        raise GridError(f"--{axis}: empty value in {value!r}")
    allowed = ALLOWED[axis]
    for v in values:
        if allowed is not None and v not in allowed:
            raise GridError(f"unknown {axis} {v!r}; choose from: {', '.join(allowed)}")
    return values


def parse_scopes(values: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """`nq-open=nq-wikipedia` → {"nq-open": ("nq-wikipedia",)}: the collections a benchmark searches."""
    scopes: dict[str, tuple[str, ...]] = {}
    for value in values:
        name, sep, collections = value.partition("=")
        wanted = tuple(c.strip() for c in collections.split(",") if c.strip())
        if not sep or not name.strip() or not wanted:
            raise GridError(f"--scope {value!r}: expected BENCHMARK=COLLECTION[,COLLECTION]")
        scopes[name.strip()] = wanted
    return scopes


@dataclass(frozen=True)
class GridSpec:
    library: list[Path]
    benchmarks: list[Path]
    axes: dict[str, list[str]]  # axis → its values, in AXES order
    work: Path
    limit: int | None = None
    # benchmark name → the collections it searches (the shared data's "retrieve from"); absent: all
    scopes: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def check(self, settings: EngineOptions) -> None:
        stems = [path.stem for path in self.benchmarks]
        unknown = sorted(set(self.scopes) - set(stems))
        if unknown:
            raise GridError(f"--scope names no benchmark given: {', '.join(unknown)}")
        if len(set(stems)) < len(stems):
            raise GridError(f"two benchmark files share a name: {', '.join(stems)}")
        if settings.milvus_uri and "milvus" in self.axes["backend"] and len(self.axes["chunking"]) > 1:
            raise GridError(
                "a Milvus server holds one collection per embedder, so chunking strategies would "
                "overwrite each other there: unset milvus_uri (Milvus Lite in each home) or grid one strategy"
            )


@dataclass(frozen=True)
class Cell:
    chunking: str
    embedder: str
    mode: str
    backend: str

    def label(self, axes: Sequence[str]) -> str:
        return " · ".join(getattr(self, axis) for axis in axes)


@dataclass
class CellResult:
    cell: Cell
    benchmark: str
    model_id: str
    dim: int
    questions: int
    metrics: dict[str, dict[str, float]]  # level → metric → value
    latency_ms: dict[str, float]  # p50, p95
    slices: slices.Slices

    def value(self, level: str, metric: str = "MRR@10") -> float | None:
        """A metric at a level; None when the benchmark has no gold items at that level."""
        values = self.metrics.get(level)
        return values[metric] if values else None

    def slice_value(
        self, key: str, value: str, level: str = "document", metric: str = "MRR@10"
    ) -> float | None:
        scores = self.slices.get(key, {}).get(value)
        values = scores.metrics.get(level) if scores else None
        return values[metric] if values else None


@dataclass(frozen=True)
class HomeStats:
    """A strategy's chunks as indexed: the chunking table's row."""

    chunking: str
    documents: int
    chunks: int
    avg_words: float
    context_loss: float


@dataclass(frozen=True)
class Build:
    chunking: str
    embedder: str
    backend: str
    chunks_indexed: int  # embedded (or taken from the cache) and written by this run


@dataclass
class GridResult:
    spec: GridSpec
    settings: dict[str, Any]
    homes: list[HomeStats] = field(default_factory=list)
    builds: list[Build] = field(default_factory=list)
    cells: list[CellResult] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    machine: Machine = field(default_factory=current)

    @property
    def benchmarks(self) -> list[str]:
        return [path.stem for path in self.spec.benchmarks]

    def of(self, benchmark: str) -> list[CellResult]:
        """A benchmark's cells in the order of the axes' values as given."""
        cells = [c for c in self.cells if c.benchmark == benchmark]
        return sorted(cells, key=lambda c: [self.spec.axes[a].index(getattr(c.cell, a)) for a in AXES])

    def questions(self, benchmark: str) -> int:
        return next((c.questions for c in self.cells if c.benchmark == benchmark), 0)

    def find(self, cell: Cell, benchmark: str) -> CellResult | None:
        return next((c for c in self.cells if c.cell == cell and c.benchmark == benchmark), None)

    def label_axes(self, without: str | None = None) -> list[str]:
        """The axes (but `without`) that tell cells apart, for legends; all of them when none do."""
        axes = [axis for axis in AXES if axis != without]
        return [axis for axis in axes if len(self.spec.axes[axis]) > 1] or axes


# Progress: `track(description, total)` opens a stage and yields the function that advances it by n.
Track = Callable[[str, int], AbstractContextManager[Callable[[int], None]]]


@contextmanager
def no_progress(description: str, total: int) -> Iterator[Callable[[int], None]]:
    yield lambda n: None


def run(spec: GridSpec, settings: EngineOptions, track: Track = no_progress) -> GridResult:
    """Ingest and index each home, then score every cell on every benchmark."""
    spec.check(settings)
    questions = {path.stem: bench_retrieval.read_questions(path, spec.limit) for path in spec.benchmarks}
    result = GridResult(spec, recorded_settings(settings))
    for strategy in spec.axes["chunking"]:
        home = home_settings(settings, spec.work, strategy)
        result.warnings += ingest(home, spec.library, track)
        result.homes.append(home_stats(home))
        for embedder, backend in product(spec.axes["embedder"], spec.axes["backend"]):
            with Engine.open(home.model_copy(update={"embedder": embedder}), backend) as engine:
                result.builds.append(index(engine, strategy, embedder, track))
                cells = [Cell(strategy, embedder, mode, backend) for mode in spec.axes["mode"]]
                result.cells += measure(engine, cells, questions, spec.scopes, track, result.cells)
    return result


def recorded_settings(settings: EngineOptions) -> dict[str, Any]:
    """The settings a cell's figures depend on, for the report."""
    keys = {"chunk_max_words", "fixed_chunk_words", "overview_max_words", "alpha", "rrf_k", "fusion_depth"}
    return {"k": CUTOFF, **settings.model_dump(mode="json", include=keys)}


def home_settings(settings: EngineOptions, work: Path, strategy: str) -> EngineOptions:
    """One strategy's home; a cache or models folder set explicitly is kept (tests share one)."""
    return settings.model_copy(
        update={
            "home": work / strategy,
            "chunk_strategy": strategy,
            "embedding_cache": settings.embedding_cache or work / "embeddings.sqlite3",
            "models_dir": settings.models_dir or work / "models",
        }
    )


def ingest(settings: EngineOptions, library: list[Path], track: Track) -> list[str]:
    """Ingest the library into a home; returns the warnings (bad records, repeated ids)."""
    files = list(iter_files(library))
    warnings: list[str] = []
    with (
        Catalogue(settings.catalogue_path) as catalogue,
        track(f"ingest · {settings.chunk_strategy}", len(files)) as advance,
    ):
        ingestor = Ingestor(catalogue, ChunkingConfig.of(settings))
        for path in files:
            report = ingestor.ingest_file(path)
            if report.status == "failed":
                raise GridError(str(report.errors[0]))
            warnings += [*map(str, report.errors), *report.warnings]
            advance(1)
    return warnings


def home_stats(settings: EngineOptions) -> HomeStats:
    with Catalogue(settings.catalogue_path) as catalogue:
        documents = list(catalogue.iter_documents())
        stats = stats_of_chunks(documents, list(catalogue.chunks()), ChunkingConfig.of(settings))
    return HomeStats(settings.chunk_strategy, stats.documents, stats.chunks, stats.avg_words,
                     stats.loss.context_loss)  # fmt: skip


def index(engine: Engine, strategy: str, embedder: str, track: Track) -> Build:
    description = f"index · {strategy} · {engine.embedder.model_id} · {engine.backend.name}"
    with track(description, engine.pending()) as advance:
        report = engine.sync(advance)
    return Build(strategy, embedder, engine.backend.name, report.chunks_added)


def measure(engine: Engine, cells: list[Cell], questions: dict[str, list[Question]],
            scopes: dict[str, tuple[str, ...]], track: Track,
            done: Sequence[CellResult] = ()) -> list[CellResult]:  # fmt: skip
    """The cells of one opened home, embedder and backend (they differ by mode) on every benchmark.

    BM25 does not use the embedder: a bm25 cell already measured with another embedder is copied."""
    vocabulary = vocabulary_from_counts(engine.catalogue.abbreviation_counts())
    year_of = _year_of(engine.catalogue)
    results = []
    for benchmark, rows in questions.items():
        labels = [slices.labels(q, year_of) for q in rows]
        for cell in cells:
            mode = MODES[cell.mode]
            same = _keyword_twin(cell, benchmark, done) if mode.search == "bm25" else None
            if same:
                results.append(
                    replace(same, cell=cell, model_id=engine.embedder.model_id, dim=engine.embedder.dim)
                )
                continue
            with track(f"{benchmark} · {cell.label(AXES)}", len(rows)) as advance:
                scored = bench_retrieval.run(
                    cell_retriever(engine, mode, vocabulary),
                    rows,
                    mode.search,
                    CUTOFF,
                    lambda: advance(1),
                    scopes.get(benchmark, ()),
                )
            results.append(
                CellResult(
                    cell=cell,
                    benchmark=benchmark,
                    model_id=engine.embedder.model_id,
                    dim=engine.embedder.dim,
                    questions=len(rows),
                    metrics=scored.metrics,
                    latency_ms=latency(scored.latency_ms),
                    slices=slices.slice_scores(scored.per_query, labels),
                )
            )
    return results


def _keyword_twin(cell: Cell, benchmark: str, done: Sequence[CellResult]) -> CellResult | None:
    return next(
        (r for r in done if r.benchmark == benchmark and r.cell.mode == cell.mode
         and (r.cell.chunking, r.cell.backend) == (cell.chunking, cell.backend)),
        None,
    )  # fmt: skip


def cell_retriever(engine: Engine, mode: Mode, vocabulary: Vocabulary) -> Retriever:
    settings = engine.settings.model_copy(update={"fusion": mode.fusion}) if mode.fusion else engine.settings
    return Retriever(settings, engine.catalogue, engine.backend, _model_only(engine.embedder), vocabulary)


def _model_only(embedder: Embedder) -> Embedder:
    """The embedder without the cache's memory of recent questions: otherwise the first mode that
    embeds pays for every later one, and latencies would not compare across modes."""
    return embedder.embedder if isinstance(embedder, CachedEmbedder) else embedder


def _year_of(catalogue: Catalogue) -> Callable[[str], int | None]:
    def year(doc_id: str) -> int | None:
        record = catalogue.document(doc_id)
        return record.year if record else None

    return year


def latency(timings_ms: list[float]) -> dict[str, float]:
    if not timings_ms:
        return {"p50": 0.0, "p95": 0.0}
    p50, p95 = np.percentile(timings_ms, [50, 95])
    return {"p50": round(float(p50), 2), "p95": round(float(p95), 2)}
