"""Tables in PDF articles, read from where their cells sit on the page.

A PDF keeps no table structure, and the reading order scatters a table's cells (one box per column
or per cell, a column's values after the next paragraph). So the table is read as a region: the
rows below its caption, set smaller than the body text, down to the first body line or a wide
vertical gap. In it, the row labels are the cells at its left edge; each value belongs to the label
nearest it in height (values are centred on a label set on two lines); the value columns are
where the values' horizontal extents overlap; each header line names the column it stands over.

Only a table that reads this way dependably becomes a table paragraph (`tables.grid_paragraph`):
a left column of labels with a clear gutter before the values, at least two rows of values, and
every value within one column. Anything else (no label column in the text layer, a value shared
by several columns or run together with its neighbour) keeps its caption alone, as before.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from evidenceqa.documents import Paragraph
from evidenceqa.loaders.pdf_layout import Row
from evidenceqa.loaders.tables import grid_paragraph

GAP_LINES = 3.0  # a vertical gap of this many font sizes between lines ends the table
INDENT = 12.0  # points: label cells start this close to the table's left edge (sub-labels indented)
NEAR_HEADER = 2.0  # font sizes: how far a header cell may sit from the column it names
MIN_ROWS = 2  # rows with values: fewer is not a table worth trusting
NOTE_SHARE = 0.5  # a line wider than this share of the table is a note, not a cell


@dataclass
class _Line:
    """A row label and the values beside it."""

    label: Row
    texts: list[str] = field(default_factory=list)
    values: list[Row] = field(default_factory=list)


def table_paragraph(
    caption: Sequence[Row], caption_text: str, page: Sequence[Row], body_size: float
) -> Paragraph | None:
    """The table under `caption` on its page (`page`: that page's rows) as a table paragraph, or
    None when its layout does not give rows and columns dependably."""
    cells, notes = _region(caption, page, body_size)
    labels = _labels(cells)
    if labels is None:
        return None
    labels.sort(key=lambda r: -r.y1)
    usual = Counter(r.font for r in labels).most_common(1)[0][0]
    if labels[0].font != usual:  # the label column's own header ("Disease entity"), set apart
        labels = labels[1:]
    top = max(r.y1 for r in labels)
    header = [r for r in cells if _middle(r) > top]
    body = [r for r in cells if _middle(r) <= top]
    values = [r for r in body if not any(r is label for label in labels)]
    columns = _columns(values)
    lines = _continued(_lines(labels, values), columns)
    if sum(bool(line.values) for line in lines) < MIN_ROWS or not columns:
        return None
    if any(len(_columns_of(value, columns)) > 1 for value in values):
        return None  # a value across columns: shared by several, or cells run together; no sure grid
    grid = []
    for line in lines:
        by_column: list[list[str]] = [[] for _ in columns]
        for value in sorted(line.values, key=lambda r: -r.y1):  # a cell on two lines, top first
            by_column[_columns_of(value, columns)[0]].append(value.text)
        grid.append([" ".join(line.texts), *(" ".join(texts) for texts in by_column)])
    names = _header(header, columns)
    return grid_paragraph(caption_text, names, grid, [" ".join(r.text for r in notes)] if notes else [])


def _region(caption: Sequence[Row], page: Sequence[Row], body_size: float) -> tuple[list[Row], list[Row]]:
    """The table's cells and the notes under them: the rows below the caption, in the page's column
    the caption spans (both columns when it crosses the middle), until body text or a wide gap."""
    left, right = min(r.x0 for r in page), max(r.x1 for r in page)
    middle = (left + right) / 2
    x0, x1 = min(r.x0 for r in caption), max(r.x1 for r in caption)
    if x1 <= middle:
        right = middle
    elif x0 >= middle:
        left = middle
    bottom = min(r.y0 for r in caption)
    ids = {id(r) for r in caption}
    below = [r for r in page if id(r) not in ids and r.y1 <= bottom + 1 and r.x1 > left and r.x0 < right]
    cells: list[Row] = []
    notes: list[Row] = []
    last = bottom
    for row in sorted(below, key=lambda r: -r.y0):
        if row.size >= body_size - 0.5 or last - row.y0 > GAP_LINES * row.size:
            break
        # A footnote runs from the table's left edge across most of it; a long value starts in its column.
        edge = min((cell.x0 for cell in cells), default=row.x0)
        if notes or (row.x0 <= edge + INDENT and row.x1 - row.x0 > NOTE_SHARE * (right - left)):
            notes.append(row)
        else:
            cells.append(row)
        last = row.y0
    return cells, notes


def _labels(cells: list[Row]) -> list[Row] | None:
    """The cells of the left column, or None when there is no such column with a gutter after it."""
    if not cells:
        return None
    edge = min(r.x0 for r in cells)
    labels = [r for r in cells if r.x0 <= edge + INDENT]
    rest = [r for r in cells if r.x0 > edge + INDENT]
    if len(labels) < MIN_ROWS or not rest or max(r.x1 for r in labels) >= min(r.x0 for r in rest):
        return None
    return labels


def _lines(labels: list[Row], values: list[Row]) -> list[_Line]:
    """One line per label, top to bottom, each with the values nearest it in height."""
    lines = [_Line(label, [label.text]) for label in sorted(labels, key=lambda r: -r.y1)]
    for value in values:
        nearest = min(lines, key=lambda line: abs(_middle(line.label) - _middle(value)))
        nearest.values.append(value)
    return lines


def _continued(lines: list[_Line], columns: list[tuple[float, float]]) -> list[_Line]:
    """Labels set on two lines joined: a label that does not start a name (lower case, a bracket)
    continues the one above when its values only continue that line's cells ("Chronic obstructive" /
    "pulmonary disease"), or it has none ("Number of transfusion of" / "packed erythrocytes
    (unit)"); a "p" with a value in a column of its own stays a row."""
    joined: list[_Line] = []
    for line in lines:
        above = {i for value in joined[-1].values for i in _columns_of(value, columns)} if joined else set()
        own = {i for value in line.values for i in _columns_of(value, columns)}
        if joined and not line.label.text[:1].isupper() and own <= above:
            joined[-1].texts.append(line.label.text)
            joined[-1].values.extend(line.values)
        else:
            joined.append(line)
    return joined


def _columns(values: list[Row]) -> list[tuple[float, float]]:
    """The value columns, left to right: the horizontal extents of the values, narrowest first; a
    value over one column widens it, a value over none starts one, a value over several spans them
    (a cell shared by columns, or two cells the text layer ran together)."""
    columns: list[tuple[float, float]] = []
    for row in sorted(values, key=lambda r: r.x1 - r.x0):
        over = _columns_of(row, columns)
        if not over:
            columns.append((row.x0, row.x1))
        elif len(over) == 1:
            x0, x1 = columns[over[0]]
            columns[over[0]] = (min(x0, row.x0), max(x1, row.x1))
            columns = _merged(columns)
    return sorted(columns)


def _merged(columns: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """Columns that a widened one now overlaps, joined."""
    joined: list[tuple[float, float]] = []
    for x0, x1 in sorted(columns):
        if joined and x0 < joined[-1][1]:
            joined[-1] = (joined[-1][0], max(joined[-1][1], x1))
        else:
            joined.append((x0, x1))
    return joined


def _columns_of(row: Row, columns: list[tuple[float, float]]) -> list[int]:
    """The columns a cell overlaps."""
    return [i for i, (x0, x1) in enumerate(columns) if row.x0 < x1 and row.x1 > x0]


def _header(cells: list[Row], columns: list[tuple[float, float]]) -> list[str]:
    """A name per column (the label column first): each header line, top down, gives a column the
    cell over most of it (a group name over several), else the nearest one close by; stacked names
    are joined ("Patients <65 years" over "Mean ± SD"). A cell of one word per column it spans is
    the column names run together by the text layer ("n %" over the n and the % column)."""
    names: list[list[str]] = [[] for _ in range(len(columns) + 1)]
    for line in _header_lines(cells):
        split: dict[int, str] = {}
        for cell in line:
            over, words = _columns_of(cell, columns), cell.text.split()
            if len(over) > 1 and len(words) == len(over):
                split.update({i + 1: word for i, word in zip(over, words, strict=True)})
        for i, (x0, x1) in enumerate(columns, start=1):
            # overlap (positive) or gap (negative) between the cell and the column
            fit, cell = max(((min(r.x1, x1) - max(r.x0, x0), r) for r in line), key=lambda d: d[0])
            name = split.get(i, cell.text if fit >= -NEAR_HEADER * cell.size else None)
            if name and name not in names[i]:
                names[i].append(name)
        names[0].extend(r.text for r in line if r.x1 <= columns[0][0])
    return [" ".join(parts) for parts in names]


def _header_lines(cells: list[Row]) -> list[list[Row]]:
    """Header cells by line, top down: cells whose middles are within half a font size of the line's
    first (a "p" set between two header lines joins the upper)."""
    lines: list[list[Row]] = []
    for row in sorted(cells, key=lambda r: -_middle(r)):
        if lines and _middle(lines[-1][0]) - _middle(row) <= row.size / 2:
            lines[-1].append(row)
        else:
            lines.append([row])
    return lines


def _middle(row: Row) -> float:
    return (row.y0 + row.y1) / 2
