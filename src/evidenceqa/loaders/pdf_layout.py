"""Page layout of PDF articles: pdfminer's text boxes turned into positioned text lines (rows), one per
baseline, in reading order, with running headers, footers and page numbers removed.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

from pdfminer.high_level import extract_pages
from pdfminer.layout import LAParams, LTChar, LTFigure, LTItem, LTTextBox, LTTextLine

from evidenceqa.documents import normalize_space
from evidenceqa.loaders import limits
from evidenceqa.loaders.errors import LoadError
from evidenceqa.loaders.limits import LimitExceeded
from evidenceqa.loaders.pdf_limits import MAX_PAGES

_LAPARAMS = LAParams(all_texts=True)  # also lay out text wrapped in form XObjects (LTFigure)
_SUBSET = re.compile(r"^[A-Z]{0,6}\+")
BOLD = re.compile(r"bold|black|heavy|semibold|demi|[.,-]B$", re.I)
_ACCENTS = {"´": "\u0301", "¨": "\u0308", "˜": "\u0303", "ˆ": "\u0302", "ˇ": "\u030c"}


@dataclass
class Row:
    """One visual line of text: the parts sharing a baseline, with the font most of it is set in."""

    text: str
    x0: float
    x1: float
    y0: float
    y1: float
    size: float
    font: str
    page: int
    box: int = 0  # number of its text box in reading order

    @property
    def height(self) -> float:
        return self.y1 - self.y0

    @property
    def style(self) -> tuple[str, float]:
        return self.font, self.size

    @property
    def bold(self) -> bool:
        return bool(BOLD.search(self.font))


def describe(exc: Exception) -> str:
    return normalize_space(f"{type(exc).__name__}: {exc}".rstrip(": "))[:200]


def read_pages(path: Path) -> list[list[Row]]:
    """Rows of every page in reading order, running headers and footers removed: at most MAX_PAGES
    pages, within the file's reading time (LimitExceeded past either)."""
    pages: list[tuple[float, list[Row]]] = []
    try:
        for number, page in enumerate(extract_pages(path, laparams=_LAPARAMS, maxpages=MAX_PAGES + 1), 1):
            if number > MAX_PAGES:
                raise LimitExceeded(f"more than {MAX_PAGES} pages")
            limits.check("page", number)
            boxes = [[r for line in box if (r := _row(line, number))] for box in _text_boxes(page)]
            pages.append((page.height, _reading_order(_merge_fragments([b for b in boxes if b]), page.width)))
    except LimitExceeded:
        raise
    except Exception as exc:  # pdfminer raises many unrelated types on broken files
        raise LoadError(path, f"damaged PDF: {describe(exc)}") from None
    if not pages:
        raise LoadError(path, "damaged PDF: no pages")
    return _drop_running_lines(pages)


def _text_boxes(container: Iterable[LTItem]) -> Iterator[LTTextBox]:
    for item in container:
        if isinstance(item, LTTextBox):
            yield item
        elif isinstance(item, LTFigure):
            yield from _text_boxes(item)


def _row(line: LTItem, page: int) -> Row | None:
    if not isinstance(line, LTTextLine):
        return None
    chars = [c for c in line if isinstance(c, LTChar)]
    text = _fix_text(line.get_text()) if chars else ""
    if not text or sum(c.upright for c in chars) < len(chars) / 2:  # rotated text: a landscape table
        return None
    sizes = Counter(round(c.size, 1) for c in chars)
    fonts = Counter(_SUBSET.sub("", c.fontname) for c in chars)
    size, font = sizes.most_common(1)[0][0], fonts.most_common(1)[0][0]
    return Row(text, line.x0, line.x1, line.y0, line.y1, size, font, page)


def _fix_text(text: str) -> str:
    """Ligatures and math letters to plain letters; TeX's spacing accents composed onto their letter."""
    text = re.sub(
        r"[\ufb00-\ufb06\U0001d400-\U0001d7ff]", lambda m: unicodedata.normalize("NFKC", m[0]), text
    )
    text = re.sub(r"([´¨˜ˆˇ])([A-Za-zı])", lambda m: _compose(m[2].replace("ı", "i"), _ACCENTS[m[1]]), text)
    text = re.sub(r"([cCsS])¸", lambda m: _compose(m[1], "\u0327"), text)
    return normalize_space(text)


def _compose(letter: str, mark: str) -> str:
    return unicodedata.normalize("NFC", letter + mark)


def _merge_fragments(boxes: list[list[Row]]) -> list[list[Row]]:
    """Rows per box. A one-line box sitting on a line of a wider box is a fragment of that line:
    pdfminer cuts justified lines with wide word gaps into pieces."""
    hosts = [rows for rows in boxes if len(rows) > 1]
    kept: list[list[Row]] = []
    for rows in boxes:
        host = _host(rows[0], hosts) if len(rows) == 1 else None
        if host is None:
            kept.append(rows)
        else:
            host.append(rows[0])
    return [_merge_rows(rows) for rows in kept]


def _host(frag: Row, hosts: list[list[Row]]) -> list[Row] | None:
    for rows in hosts:
        inside = min(r.x0 for r in rows) - 2 <= frag.x0 and frag.x1 <= max(r.x1 for r in rows) + 2
        if inside and any(_same_line(frag, r) for r in rows):
            return rows
    return None


def _same_line(a: Row, b: Row) -> bool:
    return _overlap(a, b) > 0.3


def _overlap(a: Row, b: Row) -> float:
    return (min(a.y1, b.y1) - max(a.y0, b.y0)) / max(min(a.height, b.height), 0.1)


def _merge_rows(lines: list[Row]) -> list[Row]:
    """Lines on one baseline become one row; tallest first, so a superscript joins its line."""
    rows: list[list[Row]] = []
    for line in sorted(lines, key=lambda r: -r.height):
        row = max(rows, key=lambda row: _overlap(row[0], line), default=None)
        if row is None or not _same_line(row[0], line):
            rows.append([line])
        else:
            row.append(line)
    return sorted((_join_parts(sorted(r, key=lambda p: p.x0)) for r in rows), key=lambda r: -r.y1)


def _join_parts(parts: list[Row]) -> Row:
    main = max(parts, key=lambda p: len(p.text))
    tall = max(parts, key=lambda p: p.height)
    text = parts[0].text
    for left, part in pairwise(parts):  # a superscript sticks to its neighbours: "10" "9" "/L"
        text += ("" if min(left.size, part.size) < 0.8 * main.size else " ") + part.text
    return Row(text, parts[0].x0, max(p.x1 for p in parts), tall.y0, tall.y1, main.size, main.font, main.page)


def _reading_order(boxes: list[list[Row]], width: float) -> list[Row]:
    """Two-column reading order: a box crossing the page middle separates bands; within a band the
    left column is read before the right one."""
    mid = width / 2
    spans = [b for b in boxes if min(r.x0 for r in b) < mid - 5 and max(r.x1 for r in b) > mid + 5]

    def key(box: list[Row]) -> tuple[int, int, int, float]:
        top = box[0].y1
        above = sum(1 for s in spans if s is not box and (s[0].y1 + s[-1].y0) / 2 > top)
        if any(box is s for s in spans):
            return above + 1, 0, 0, -top
        return above, 1, int(box[0].x0 >= mid), -top

    ordered = sorted(boxes, key=key)
    for number, box in enumerate(ordered):
        for row in box:
            row.box = number
    return [row for box in ordered for row in box]


def _drop_running_lines(pages: list[tuple[float, list[Row]]]) -> list[list[Row]]:
    """Running heads and feet: rows in the page margins that recur on other pages (numbers aside),
    and bare page numbers."""

    def margin_key(row: Row, height: float) -> str | None:
        in_margin = row.y0 > 0.9 * height or row.y1 < 0.07 * height
        return re.sub(r"\d+", "#", row.text.lower()) if in_margin else None

    seen = Counter(k for height, rows in pages for k in {margin_key(r, height) for r in rows} if k)
    repeats = max(2, len(pages) // 3)

    def running(row: Row, height: float) -> bool:
        key = margin_key(row, height)
        return key is not None and (key == "#" or seen[key] >= repeats)

    return [[r for r in rows if not running(r, height)] for height, rows in pages]
