"""The grid's figures as PNG files (matplotlib).

Figures have fixed sizes and carry no software version, so the same figures give the same bytes
and a re-run does not churn the files a docs page links to. They are made without pyplot: no
global state, no display, and `savefig` renders PNG with Agg whatever backend the environment names.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from matplotlib import colormaps
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from evidenceqa.bench.grid import Cell, GridResult
from evidenceqa.bench.retrieval import LEVELS
from evidenceqa.bench.slices import shown_values

SIZE = (10.0, 4.8)
LEGEND_CHARS = 130  # characters of a legend row across the figure's width, at the legend's font size
LEGEND_ROW_INCHES = 0.22
DPI = 100
METRIC = "MRR@10"
CROSSOVER_MODES = ("dense", "hybrid-alpha")


@dataclass
class Plots:
    mrr: dict[str, Path]  # benchmark → MRR@10 per cell
    crossover: Path | None  # embedders across benchmarks, when there are two or more
    slices: dict[tuple[str, str], Path]  # (benchmark, slice key) → MRR@10 per slice value

    def paths(self) -> list[Path]:
        return [*self.mrr.values(), *([self.crossover] if self.crossover else []), *self.slices.values()]


def write_plots(result: GridResult, out: Path) -> Plots:
    out.mkdir(parents=True, exist_ok=True)
    mrr = {b: mrr_plot(result, b, out / f"mrr-{b}.png") for b in result.benchmarks}
    slice_plots = {}
    for benchmark in result.benchmarks:
        cells = result.of(benchmark)
        for key, values in cells[0].slices.items() if cells else ():
            shown = shown_values(values)
            if shown:
                path = out / f"slice-{benchmark}-{key}.png"
                slice_plots[benchmark, key] = slice_plot(result, benchmark, key, shown, path)
    return Plots(mrr, crossover_plot(result, out / "crossover.png"), slice_plots)


def mrr_plot(result: GridResult, benchmark: str, path: Path) -> Path:
    """Bars grouped by mode, one per other combination of axes; a panel per level."""
    cells = result.of(benchmark)
    levels = [level for level in LEVELS if any(level in c.metrics for c in cells)]
    modes = result.spec.axes["mode"]
    axes_of_series = result.label_axes(without="mode")
    figure = Figure(figsize=SIZE, layout="constrained")
    panels = figure.subplots(1, len(levels), sharey=True, squeeze=False)
    for panel, level in zip(panels[0], levels, strict=True):
        series: dict[str, list[float]] = {}
        for c in cells:
            values = series.setdefault(c.cell.label(axes_of_series), [0.0] * len(modes))
            values[modes.index(c.cell.mode)] = c.value(level, METRIC) or 0.0
        _bars(panel, modes, series)
        panel.set_title(f"{level} level")
    panels[0][0].set_ylabel(METRIC)
    figure.suptitle(f"{benchmark}: {METRIC} per cell")
    _legend(figure, panels[0][0])
    return _save(figure, path)


def crossover_plot(result: GridResult, path: Path) -> Path | None:
    """Each embedder's document-level MRR@10 across benchmarks, for the modes that embed the question.

    Other axes are held at their first value, so lines differ by embedder alone.
    """
    modes = [m for m in CROSSOVER_MODES if m in result.spec.axes["mode"]]
    embedders = result.spec.axes["embedder"]
    if len(embedders) < 2 or not modes:
        return None
    chunking, backend = result.spec.axes["chunking"][0], result.spec.axes["backend"][0]
    figure = Figure(figsize=SIZE, layout="constrained")
    panels = figure.subplots(1, len(modes), sharey=True, squeeze=False)
    for panel, mode in zip(panels[0], modes, strict=True):
        for embedder in embedders:
            found = [result.find(Cell(chunking, embedder, mode, backend), b) for b in result.benchmarks]
            values = [(c.value("document", METRIC) if c else None) or 0.0 for c in found]
            panel.plot(result.benchmarks, values, marker="o", label=embedder)
        panel.set_title(mode)
        panel.set_ylim(0, 1)
        panel.grid(axis="y", alpha=0.3)
    panels[0][0].set_ylabel(f"{METRIC} (document)")
    figure.suptitle(f"Embedders across benchmarks ({chunking} · {backend})")
    _legend(figure, panels[0][0])
    return _save(figure, path)


def slice_plot(result: GridResult, benchmark: str, key: str, values: Sequence[str], path: Path) -> Path:
    """Document-level MRR@10 per slice value (those with enough questions), a bar per cell."""
    cells = result.of(benchmark)
    axes = result.label_axes()
    series = {c.cell.label(axes): [c.slice_value(key, value) or 0.0 for value in values] for c in cells}
    counts = [cells[0].slices[key][value].questions for value in values]
    figure = Figure(figsize=SIZE, layout="constrained")
    panel = figure.subplots()
    _bars(panel, [f"{value}\n({n})" for value, n in zip(values, counts, strict=True)], series)
    panel.set_ylabel(f"{METRIC} (document)")
    panel.set_title(f"{benchmark}: {METRIC} by {key.replace('_', ' ')} (questions)")
    _legend(figure, panel)
    return _save(figure, path)


def _bars(panel: Axes, groups: Sequence[str], series: dict[str, list[float]]) -> None:
    width = 0.8 / max(len(series), 1)
    colours = colormaps["tab10" if len(series) <= 10 else "tab20"]  # an integer picks a listed colour
    for i, (name, values) in enumerate(series.items()):
        offsets = [g - 0.4 + width * (i + 0.5) for g in range(len(groups))]
        panel.bar(offsets, values, width, label=name, color=colours(i % colours.N))
    panel.set_xticks(range(len(groups)), groups, fontsize="small")
    panel.set_ylim(0, 1)
    panel.grid(axis="y", alpha=0.3)


def _legend(figure: Figure, panel: Axes) -> None:
    """A legend under the panels, in as many columns as its labels fit; the figure grows to hold it."""
    handles, labels = panel.get_legend_handles_labels()
    columns = max(1, min(len(labels), LEGEND_CHARS // (max(map(len, labels), default=1) + 6)))
    rows = -(-len(labels) // columns)
    figure.set_size_inches(SIZE[0], SIZE[1] + LEGEND_ROW_INCHES * max(rows - 2, 0))
    figure.legend(handles, labels, loc="outside lower center", ncols=columns, fontsize="small")


def _save(figure: Figure, path: Path) -> Path:
    figure.savefig(path, dpi=DPI, metadata={"Software": None})
    return path
