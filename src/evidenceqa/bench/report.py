"""The grid's report: every figure as JSON, the tables as Markdown, and a summary for the terminal."""

from __future__ import annotations

import json
from dataclasses import asdict
from itertools import product
from pathlib import Path
from typing import Any

from evidenceqa.bench.grid import AXES, Cell, CellResult, GridResult
from evidenceqa.bench.plots import Plots
from evidenceqa.bench.retrieval import LEVELS
from evidenceqa.bench.slices import MIN_QUESTIONS, shown_values
from evidenceqa.text import markdown

TABLE_METRICS = ("MRR@10", "Success@1", "Success@3", "Success@5", "Recall@10")
LEVEL_NAMES = {"document": "Doc", "passage": "Passage"}
# The chunking table's MRR comes from this mode when the grid has it (the default search).
CHUNKING_MODE = "hybrid-alpha"


def to_json(result: GridResult) -> dict[str, Any]:
    spec = result.spec
    return {
        "grid": {
            "library": [str(path) for path in spec.library],
            "benchmarks": [str(path) for path in spec.benchmarks],
            **spec.axes,
            "work": str(spec.work),
            "limit": spec.limit,
            "scopes": {name: list(collections) for name, collections in spec.scopes.items()},
        },
        "settings": result.settings,
        "machine": result.machine.as_dict(),
        "homes": [asdict(home) for home in result.homes],
        "indexing": [asdict(build) for build in result.builds],
        "cells": [_cell_json(c) for c in result.cells],
    }


def _cell_json(result: CellResult) -> dict[str, Any]:
    fields = asdict(result)
    return {**fields.pop("cell"), **fields}


def write(result: GridResult, plots: Plots, out: Path, link_base: str) -> tuple[Path, Path]:
    """grid.json and grid.md in `out`."""
    out.mkdir(parents=True, exist_ok=True)
    json_path, md_path = out / "grid.json", out / "grid.md"
    json_path.write_text(json.dumps(to_json(result), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    md_path.write_text(to_markdown(result, plots, link_base), encoding="utf-8")
    return json_path, md_path


def to_markdown(result: GridResult, plots: Plots, link_base: str) -> str:
    """Sections at level 3, so the report can sit inside a docs page."""
    parts = [_intro(result)]
    if len(result.spec.axes["chunking"]) > 1:
        parts.append(_chunking_section(result))
    parts += [_benchmark_section(result, b, plots.mrr.get(b), link_base) for b in result.benchmarks]
    if len(result.spec.axes["embedder"]) > 1:
        parts.append(_crossover_section(result, plots.crossover, link_base))
    for (benchmark, key), path in plots.slices.items():
        parts.append(_slice_section(result, benchmark, key, path, link_base))
    return "\n\n".join(parts) + "\n"


def _intro(result: GridResult) -> str:
    axes = " × ".join(f"{axis} ({', '.join(result.spec.axes[axis])})" for axis in AXES)
    limit = f", the first {result.spec.limit} questions of each benchmark" if result.spec.limit else ""
    s = result.settings
    return (
        f"{len({c.cell for c in result.cells})} cells: {axes}{limit}. Top {s['k']} results; dense weight {s['alpha']} "
        f"(hybrid-alpha), RRF k = {s['rrf_k']} (hybrid-rrf), fusion depth {s['fusion_depth']}. "
        + result.machine.measured_on()
    )


def _image(path: Path, alt: str, link_base: str) -> str:
    prefix = link_base.rstrip("/")
    return f"![{alt}]({prefix + '/' if prefix else ''}{path.name})"


def _chunking_section(result: GridResult) -> str:
    spec = result.spec
    mode = CHUNKING_MODE if CHUNKING_MODE in spec.axes["mode"] else spec.axes["mode"][0]
    embedder, backend = spec.axes["embedder"][0], spec.axes["backend"][0]
    headers = ["Strategy", "Chunks", "Avg words", "Context loss"]
    for benchmark in result.benchmarks:
        headers += [f"{benchmark} doc MRR@10", f"{benchmark} passage MRR@10"]
    rows = []
    for home in result.homes:
        row = [home.chunking, f"{home.chunks:,}", f"{home.avg_words:.0f}", f"{home.context_loss:.1%}"]
        for benchmark in result.benchmarks:
            found = result.find(Cell(home.chunking, embedder, mode, backend), benchmark)
            row += [_metric(found, level, "MRR@10") for level in LEVELS]
        rows.append(row)
    table = markdown.table(headers, rows, [False] + [True] * (len(headers) - 1))
    return f"### Chunking strategies\n\nMRR@10 with {embedder} · {mode} · {backend}.\n\n{table}".rstrip()


def _crossover_section(result: GridResult, plot: Path | None, link_base: str) -> str:
    """Each embedder and mode on every benchmark side by side: where a model gains and where it loses."""
    spec = result.spec
    chunking, backend = spec.axes["chunking"][0], spec.axes["backend"][0]
    headers = ["Embedder", "Dimensions", "Mode", *(f"{b} doc MRR@10" for b in result.benchmarks)]
    rows = []
    for embedder, mode in product(spec.axes["embedder"], spec.axes["mode"]):
        found = [result.find(Cell(chunking, embedder, mode, backend), b) for b in result.benchmarks]
        dim = next((c.dim for c in found if c), "–")
        rows.append([embedder, dim, mode, *(_metric(c, "document", "MRR@10") for c in found)])
    table = markdown.table(headers, rows, [False, True, False] + [True] * len(result.benchmarks))
    image = f"\n{_image(plot, 'crossover', link_base)}" if plot else ""
    return f"### Embedders across benchmarks\n\nWith {chunking} · {backend}.\n\n{table}{image}".rstrip()


def _metric(cell: CellResult | None, level: str, metric: str) -> str:
    return _number(cell.value(level, metric) if cell else None)


def _number(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def _benchmark_section(result: GridResult, benchmark: str, plot: Path | None, link_base: str) -> str:
    cells = result.of(benchmark)
    levels = [level for level in LEVELS if any(level in c.metrics for c in cells)]
    headers = ["Chunking", "Embedder", "Dimensions", "Mode", "Backend"]
    headers += [f"{LEVEL_NAMES[level]} {metric}" for level in levels for metric in TABLE_METRICS]
    rows = [
        [c.cell.chunking, c.cell.embedder, c.dim, c.cell.mode, c.cell.backend,
         *(_metric(c, level, metric) for level in levels for metric in TABLE_METRICS)]
        for c in cells
    ]  # fmt: skip
    table = markdown.table(headers, rows, [False, False, True, False, False] + [True] * (len(headers) - 5))
    image = f"\n\n{_image(plot, f'{benchmark}: MRR@10 per cell', link_base)}" if plot else ""
    return f"### {benchmark} ({result.questions(benchmark)} questions)\n\n{table.rstrip()}{image}"


def _slice_section(result: GridResult, benchmark: str, key: str, plot: Path, link_base: str) -> str:
    cells = result.of(benchmark)
    values = shown_values(cells[0].slices[key])
    headers = ["Chunking", "Embedder", "Mode", "Backend"]
    headers += [f"{value} ({cells[0].slices[key][value].questions})" for value in values]
    rows = [
        [c.cell.chunking, c.cell.embedder, c.cell.mode, c.cell.backend,
         *(_number(c.slice_value(key, value)) for value in values)]
        for c in cells
    ]  # fmt: skip
    table = markdown.table(headers, rows, [False] * 4 + [True] * len(values))
    title = key.replace("_", " ")
    return (
        f"### {benchmark} by {title}\n\nDocument-level MRR@10 per {title} (questions); values with fewer "
        f"than {MIN_QUESTIONS} questions are in grid.json only.\n\n{table}\n"
        f"{_image(plot, f'{benchmark} by {title}', link_base)}"
    )


def summary(result: GridResult, benchmark: str) -> tuple[list[str], list[list[str]]]:
    """Headers and rows of a benchmark's terminal table: the headline figures and latency."""
    headers = [
        *(axis.title() for axis in AXES),
        "Doc MRR@10",
        "Doc Success@1",
        "Passage MRR@10",
        "p50 ms",
        "p95 ms",
    ]
    rows = [
        [*(getattr(c.cell, axis) for axis in AXES), _metric(c, "document", "MRR@10"),
         _metric(c, "document", "Success@1"), _metric(c, "passage", "MRR@10"),
         f"{c.latency_ms['p50']:.1f}", f"{c.latency_ms['p95']:.1f}"]
        for c in result.of(benchmark)
    ]  # fmt: skip
    return headers, rows
