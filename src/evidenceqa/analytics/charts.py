"""The pilot report's charts as PNG (matplotlib without pyplot, as bench/plots.py: no global state,
Agg whatever the environment's backend, no software version in the file, so the same figures give
the same bytes)."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from evidenceqa.analytics.failures import CATEGORY_NAMES

if TYPE_CHECKING:  # the report writes these charts: a runtime import would be circular
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from evidenceqa.analytics.report import PilotReport

SIZE = (7.0, 3.6)
DPI = 100
# matplotlib's tab10 by name: the web app lists the charts without loading matplotlib until one is drawn.
COLOURS = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple")


def satisfaction(report: PilotReport) -> Figure:
    """How many ratings of each value: the distribution behind the average satisfaction."""
    counts = report.summary.satisfaction.counts
    figure, panel = _figure("Ratings given")
    labels = [f"{name}\n({value})" for name, value in zip(counts, (1.0, 0.6, 0.2), strict=True)]
    bars = panel.bar(labels, list(counts.values()), color=[COLOURS[2], COLOURS[1], COLOURS[3]])
    panel.bar_label(bars)
    panel.margins(y=0.12)  # room for the labels over the bars
    panel.set_ylabel("ratings")
    return figure


def weekly(report: PilotReport) -> Figure:
    """Success, response and abstention rates per week."""
    figure, panel = _figure("Per week")
    weeks = [w.start.isoformat() for w in report.weeks]
    lines = {
        "success rate": [w.summary.success_rate for w in report.weeks],
        "response rate": [w.summary.response_rate for w in report.weeks],
        "abstention rate": [w.summary.abstention_rate for w in report.weeks],
    }
    for i, (name, values) in enumerate(lines.items()):
        panel.plot(weeks, [v if v is not None else float("nan") for v in values], marker="o",
                   label=name, color=COLOURS[i])  # fmt: skip
    panel.set_ylim(0, 1.05)
    panel.set_xlabel("week of")
    panel.legend(fontsize="small")
    return figure


def latency(report: PilotReport) -> Figure:
    """Median and p95 latency per week against the target."""
    figure, panel = _figure("Latency per week")
    weeks = [w.start.isoformat() for w in report.weeks]
    for i, (name, attr) in enumerate((("median", "median_s"), ("p95", "p95_s"))):
        values = [getattr(w.summary.latency, attr) for w in report.weeks]
        panel.plot(weeks, [v if v is not None else float("nan") for v in values], marker="o",
                   label=name, color=COLOURS[i])  # fmt: skip
    target = report.summary.latency.target_s
    panel.axhline(target, color="grey", linestyle="--", label=f"target {target:g} s")
    panel.set_ylabel("seconds")
    panel.set_xlabel("week of")
    panel.legend(fontsize="small")
    return figure


def cost(report: PilotReport) -> Figure:
    """Mean cost per query of each stage and in total."""
    figure, panel = _figure("Cost per query (USD)")
    stages = report.summary.cost_per_query_usd
    panel.bar(list(stages), list(stages.values()), color=COLOURS[0])
    panel.set_ylabel("USD")
    return figure


def categories(report: PilotReport) -> Figure:
    """Failed answers per category in force."""
    figure, panel = _figure("Failures by category")
    counts = report.categories
    bars = panel.bar([CATEGORY_NAMES[c] for c in counts], list(counts.values()), color=COLOURS[3])
    panel.bar_label(bars)
    panel.margins(y=0.12)
    panel.set_ylabel("answers")
    return figure


CHARTS: dict[str, Callable[[PilotReport], Figure]] = {
    "satisfaction": satisfaction,
    "weekly": weekly,
    "latency": latency,
    "cost": cost,
    "categories": categories,
}


def _figure(title: str) -> tuple[Figure, Axes]:
    from matplotlib.figure import Figure

    figure = Figure(figsize=SIZE, layout="constrained")
    panel = figure.subplots()
    panel.set_title(title)
    panel.grid(axis="y", alpha=0.3)
    return figure, panel


def png(report: PilotReport, name: str) -> bytes:
    """One chart as PNG bytes (KeyError for an unknown name)."""
    buffer = io.BytesIO()
    CHARTS[name](report).savefig(buffer, format="png", dpi=DPI, metadata={"Software": None})
    return buffer.getvalue()


def write_charts(report: PilotReport, out: Path) -> dict[str, Path]:
    """Every chart as `<name>.png` in `out`."""
    paths = {}
    for name in CHARTS:
        path = out / f"{name}.png"
        path.write_bytes(png(report, name))
        paths[name] = path
    return paths
