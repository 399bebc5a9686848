"""Tables read from a PDF's layout, checked against the same articles' JATS and BMC XML; a table
whose layout does not give a dependable grid keeps its caption alone."""

from __future__ import annotations

from pathlib import Path

from evidenceqa.chunking import ChunkingConfig, chunk_document
from evidenceqa.documents import Document, Paragraph
from evidenceqa.loaders import LoadError, load
from evidenceqa.loaders.pdf_layout import Row
from evidenceqa.loaders.pdf_tables import table_paragraph
from evidenceqa.loaders.tables import TableText, parse_table


def _document(path: Path) -> Document:
    (doc,) = [d for d in load(path) if not isinstance(d, LoadError)]
    return doc


def _tables(path: Path) -> list[TableText]:
    parsed = [parse_table(p.text) for p in _document(path).paragraphs() if p.kind == "table"]
    return [table for table in parsed if table is not None]


def _values(row: list[str]) -> list[str]:
    return [cell for cell in row[1:] if cell]


def test_a_pdf_table_reads_as_the_same_table_in_the_articles_jats(formats_dir: Path) -> None:
    folder = "hindawi_epmc/PMC4736379"
    pdf = _tables(formats_dir / "pdf" / folder / "fulltext.pdf")
    jats = _tables(formats_dir / "jats_xml" / folder / "fulltext.xml")
    assert len(pdf) == 2  # Tables 3 and 4 are not in the PDF's text layer
    # Table 1: two stacked header lines over seven columns, a label set on two lines.
    assert pdf[0].header[1:] == jats[0].header[1:]
    assert pdf[0].rows == jats[0].rows
    assert ["Number of transfusion of packed erythrocytes (unit)", "1.91 ± 2.17", "0", "12", "2.72 ± 2.30",
            "0", "15", "0.0001"] in pdf[0].rows  # fmt: skip
    # Table 2: group rows, sub-rows and "p" rows in the JATS order, each with the same values (the PDF
    # sets a p-value once, between the groups; the JATS repeats it under each column).
    # "n %" comes as one piece of text over two columns: a name for each.
    assert [name for name in pdf[1].header[1:] if name] == jats[1].header[1:]
    assert [row[0] for row in pdf[1].rows] == [row[0] for row in jats[1].rows]
    for ours, theirs in zip(pdf[1].rows, jats[1].rows, strict=True):
        assert _values(ours) == _values(theirs) or {*_values(ours)} == {*_values(theirs)} == {
            _values(ours)[0]
        }


def test_a_pdf_table_with_a_header_on_its_label_column_and_wrapped_cells(formats_dir: Path) -> None:
    (pdf,) = _tables(formats_dir / "pdf/bmc_trials/trials_16_1_2/fulltext.pdf")
    (xml,) = _tables(formats_dir / "edge_cases/non_jats_bmc_xml/trials_16_1_2/fulltext.xml")
    assert pdf.header == ["Disease entity", "Drug classes included"] == xml.header
    # Labels and cells set on two or three lines ("Chronic obstructive" / "pulmonary disease") joined.
    assert pdf.rows == xml.rows
    assert pdf.after and pdf.after[0].startswith("Note: Participants will be enrolled")


def test_a_table_the_layout_does_not_give_keeps_its_caption_alone(formats_dir: Path) -> None:
    # Values shared by two columns (both hips of a case) are centred between them: no sure grid.
    doc = _document(formats_dir / "pdf/hindawi_epmc/PMC4745277/fulltext.pdf")
    assert not [p for p in doc.paragraphs() if p.kind == "table"]
    assert any(p.kind == "caption" and p.text.startswith("Table 1: Demographic") for p in doc.paragraphs())
    assert not any("Rifampicin + levofloxacin" in p.text for p in doc.paragraphs())


def test_a_pdf_table_is_a_table_chunk_with_its_caption_and_page(formats_dir: Path) -> None:
    doc = _document(formats_dir / "pdf/hindawi_epmc/PMC4736379/fulltext.pdf")
    (table,) = [p for p in doc.paragraphs() if p.kind == "table" and p.text.startswith("Table 1:")]
    assert table.page == 2
    chunks = [c for c in chunk_document(doc, ChunkingConfig()) if "| Length of stay (days) |" in c.body]
    assert len(chunks) == 1 and chunks[0].body.startswith("Table 1: Comparison of patients")


def _row(text: str, x0: float, y: float, size: float = 8.0, font: str = "Regular") -> Row:
    return Row(text, x0, x0 + 5.0 * len(text), y, y + size, size, font, page=1)


def _grid(*extra: Row) -> Paragraph | None:
    caption = [_row("Table 1: Doses of antibiotics before an operation, by age.", 50, 700, 9.0)]
    cells = [
        _row("Drug", 50, 680, font="Bold"), _row("Adult", 200, 680, font="Bold"), _row("Child", 300, 680, font="Bold"),
        _row("Cefazolin", 50, 665), _row("2 g", 200, 665), _row("30 mg/kg", 300, 665),
        _row("Vancomycin", 50, 650), _row("15 mg/kg", 200, 650), _row("15 mg/kg", 300, 650),
        _row("over one hour", 50, 641),  # the label's second line
        _row("p", 50, 628), _row("0.04", 250, 628),  # a p-value set between the columns: a row of its own
    ]  # fmt: skip
    body = [_row("The body text goes on below the table in a larger font.", 50, 600, 10.0)]
    return table_paragraph(caption, "Table 1: Doses.", [*caption, *cells, *extra, *body], 10.0)


def test_labels_set_on_two_lines_join_and_a_p_value_row_stays_apart() -> None:
    table = _grid()
    parsed = parse_table(table.text) if table else None
    assert parsed is not None
    assert parsed.header == ["Drug", "Adult", "", "Child"]
    assert parsed.rows == [
        ["Cefazolin", "2 g", "", "30 mg/kg"],
        ["Vancomycin over one hour", "15 mg/kg", "", "15 mg/kg"],
        ["p", "", "0.04", ""],
    ]


def test_a_value_across_two_columns_gives_no_table() -> None:
    assert _grid(_row("1 g once daily for both", 190, 620)) is None
