"""A data table (JATS `<table-wrap>`, BMC's CALS `<table>`, HTML `<table>`) as one paragraph of
kind "table".

Its text is the caption, then the table in Markdown (a header row, then one line per row), then
its footnotes: BM25 and the embedder match the cells with their column names beside them, a
chunk body stays plain text, and the source viewer can draw it as rows and columns again
(`parse_table`). Cells spanning columns are repeated in each, and stacked header rows are joined
per column ("Goats" over "n" → "Goats n"), so every cell keeps the header that names it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from lxml import etree

from evidenceqa.documents import Paragraph, normalize_space
from evidenceqa.text import markdown

_MAX_SPAN = 50  # a colspan beyond this is damage, not layout
_ROWS = frozenset({"tr", "row"})  # HTML and JATS; CALS (BMC)
_CELLS = frozenset({"td", "th", "entry"})


def _local(el: etree._Element) -> str:
    return etree.QName(el).localname if isinstance(el.tag, str) else ""


def _cells(tr: etree._Element, text_of: Callable[[etree._Element], str]) -> list[str]:
    cells: list[str] = []
    for cell in tr:
        if _local(cell) in _CELLS:
            try:
                span = max(1, min(int(cell.get("colspan") or 1), _MAX_SPAN))
            except ValueError:
                span = 1
            cells.extend([normalize_space(text_of(cell))] * span)
    return cells


def table_paragraph(
    table: etree._Element,
    text_of: Callable[[etree._Element], str],
    caption: str | None = None,
    notes: Sequence[str] = (),
) -> Paragraph | None:
    """The table under `table` (its header from `<thead>` or `<th>` rows) as a table paragraph;
    None when it has no body row with text (a layout table holds no header either: see `is_data`)."""
    header_rows: list[list[str]] = []
    body_rows: list[list[str]] = []
    notes = list(notes)
    for el in table.iter():
        name = _local(el)
        if name == "tfoot":
            notes.append(normalize_space(text_of(el)))
        if name not in _ROWS or any(_local(a) == "tfoot" for a in el.iterancestors()):
            continue
        cells = _cells(el, text_of)
        parent = el.getparent()
        in_head = parent is not None and _local(parent) == "thead"
        all_th = bool(cells) and all(_local(c) == "th" for c in el if _local(c) in _CELLS)
        if in_head or (all_th and not body_rows):
            header_rows.append(cells)
        elif any(cells):
            body_rows.append(cells)
    if not body_rows:
        return None
    width = max(len(row) for row in header_rows + body_rows)
    header = [
        normalize_space(" ".join(dict.fromkeys(row[i] for row in header_rows if i < len(row) and row[i])))
        for i in range(width)
    ]
    rows = [row + [""] * (width - len(row)) for row in body_rows]
    return grid_paragraph(caption, header, rows, notes)


def grid_paragraph(
    caption: str | None, header: Sequence[str], rows: Sequence[Sequence[str]], notes: Sequence[str] = ()
) -> Paragraph:
    """A table paragraph from its cells: the caption, the Markdown table, then its notes."""
    parts = [caption] if caption else []
    parts.append(markdown.table(header, rows).rstrip("\n"))
    parts.extend(f"Note: {note}" for note in notes if note)
    return Paragraph("\n".join(parts), kind="table")


def is_data(table: etree._Element) -> bool:
    """A table of data (it names its columns or has a caption), not one that lays out a page."""
    return bool(table.xpath(".//*[local-name()='th' or local-name()='thead' or local-name()='caption']"))


@dataclass(frozen=True)
class TableText:
    """A table paragraph's text read back: what precedes the table (its caption), the header, the
    rows (each also as its line of text, to find which a citation quotes), what follows (notes)."""

    before: list[str]
    header: list[str]
    rows: list[list[str]]
    lines: list[str]
    after: list[str]


def parse_table(text: str) -> TableText | None:
    """The table in `text` as `table_paragraph` writes it; None when `text` holds no table rows."""
    before: list[str] = []
    found: list[tuple[list[str], str]] = []
    after: list[str] = []
    for line in text.split("\n"):
        row = line.strip()
        if row.startswith("|") and row.endswith("|") and len(row) > 1 and not after:
            cells = [cell.strip().replace("\\|", "|") for cell in _split_row(row[1:-1])]
            if not all(cell and set(cell) <= set("-:") for cell in cells):
                found.append((cells, row))
        elif found:
            after.append(line)
        else:
            before.append(line)
    if len(found) < 2:
        return None
    return TableText(
        before, found[0][0], [cells for cells, _ in found[1:]], [row for _, row in found[1:]], after
    )


def _split_row(inner: str) -> list[str]:
    """Cells of a Markdown row, an escaped pipe ("\\|") kept inside its cell."""
    cells, current, i = [], "", 0
    while i < len(inner):
        if inner.startswith("\\|", i):
            current += "\\|"
            i += 2
        elif inner[i] == "|":
            cells.append(current)
            current, i = "", i + 1
        else:
            current += inner[i]
            i += 1
    cells.append(current)
    return cells
