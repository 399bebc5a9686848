"""Markdown tables for generated docs and reports."""

from __future__ import annotations

from collections.abc import Sequence


def table(headers: Sequence[str], rows: Sequence[Sequence[object]], numeric: Sequence[bool] = ()) -> str:
    """A GitHub Markdown table; columns flagged in `numeric` are right-aligned."""
    align = ["---:" if i < len(numeric) and numeric[i] else "---" for i in range(len(headers))]
    lines = [_row(headers), _row(align)]
    lines.extend(_row(["" if cell is None else cell for cell in row]) for row in rows)
    return "\n".join(lines) + "\n"


def _row(cells: Sequence[object]) -> str:
    return "| " + " | ".join(str(cell).replace("|", "\\|").replace("\n", " ") for cell in cells) + " |"
