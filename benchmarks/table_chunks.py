"""Every table of the shared format files and the chunks it became (docs/evidence.md).

Per file: the tables it holds (a JATS `<table-wrap>` or BMC `<table>` with rows; an HTML `<table>`
that names its columns or has a caption, the loader's test for a data table; in a PDF, the table
captions of its text layer), the table paragraphs the loader made (a PDF's only where its layout
gives rows and columns dependably: `loaders/pdf_tables.py`) and the table chunks the default
chunking cut from them.

    .venv/bin/python benchmarks/table_chunks.py ../shared/data/formats
"""

from __future__ import annotations

import argparse
from pathlib import Path

import lxml.html
from lxml import etree

from evidenceqa.chunking import ChunkingConfig, chunk_document
from evidenceqa.documents import Document
from evidenceqa.loaders import LoadError, detect_format, load
from evidenceqa.loaders.tables import is_data, parse_table
from evidenceqa.text import markdown


def tables_in_file(path: Path, fmt: str, docs: list[Document]) -> int:
    if fmt == "pdf":  # no markup: the captions the loader found ("Table 1: …")
        return sum(
            p.kind in ("caption", "table") and p.text.startswith("Table")
            for d in docs
            for p in d.paragraphs()
        )
    if fmt == "html":
        root = lxml.html.parse(str(path)).getroot()
        return sum(is_data(table) for table in root.iter("table"))
    root = etree.parse(str(path)).getroot()
    if fmt == "bmc":
        return sum(1 for t in root.iter("table") if next(t.iter("row"), None) is not None)
    return sum(1 for w in root.iter("{*}table-wrap") if w.find(".//{*}table") is not None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("formats", type=Path, help="the shared formats folder")
    args = parser.parse_args()
    rows = []
    for path in sorted(args.formats.rglob("*")):
        if not path.is_file() or path.suffix.lower() not in {".xml", ".nxml", ".html", ".pdf"}:
            continue
        try:
            fmt = detect_format(path)
        except LoadError:
            continue
        if fmt not in ("jats", "bmc", "html", "pdf"):
            continue
        docs = [d for d in load(path) if not isinstance(d, LoadError)]
        paragraphs = sum(p.kind == "table" for d in docs for p in d.paragraphs())
        chunks = sum(
            parse_table(c.body) is not None for d in docs for c in chunk_document(d, ChunkingConfig())
        )
        rows.append(
            [
                path.relative_to(args.formats).as_posix(),
                fmt,
                tables_in_file(path, fmt, docs),
                paragraphs,
                chunks,
            ]
        )
    totals = ["**all**", "", *(sum(row[i] for row in rows) for i in (2, 3, 4))]
    headers = ["File", "Format", "Tables in the file", "Table paragraphs", "Table chunks"]
    print(markdown.table(headers, [*rows, totals], numeric=[False, False, True, True, True]), end="")


if __name__ == "__main__":
    main()
