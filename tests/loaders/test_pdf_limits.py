"""A PDF is read within bounds: streams that inflate past the size limit, too many pages and too much
time each stop that file with a one-line error, memory stays near the limit, and the rest of a batch
is ingested."""

from __future__ import annotations

import tracemalloc
import zlib
from pathlib import Path

import pytest

from evidenceqa.chunking import ChunkingConfig
from evidenceqa.library.catalogue import Catalogue
from evidenceqa.library.ingest import Ingestor
from evidenceqa.loaders import LoadError, load, pdf_layout
from evidenceqa.loaders.pdf_limits import MB

WORDS = " ".join(["Clipping", "hair", "before", "surgery", "lowered", "the", "infection", "rate."] * 6)


def write_pdf(path: Path, pages: list[bytes]) -> Path:
    """A valid PDF (with its cross-reference table) whose pages' content streams are Flate-compressed."""
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b""]
    kids = []
    for content in pages:
        stream = zlib.compress(content, 9)
        page_id, content_id = len(objects) + 1, len(objects) + 2
        kids.append(f"{page_id} 0 R".encode())
        objects.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {content_id} 0 R "
                       "/Resources << /Font << /F1 << /Type /Font /Subtype /Type1 /BaseFont /Helvetica >> >> >> >>"
                       .encode())  # fmt: skip
        objects.append(
            b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream + b"\nendstream"
        )
    objects[1] = b"<< /Type /Pages /Kids [" + b" ".join(kids) + b"] /Count %d >>" % len(pages)
    out, offsets = bytearray(b"%PDF-1.4\n"), []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    path.write_bytes(bytes(out))
    return path


def text_page(text: str = WORDS) -> bytes:
    return b"BT /F1 10 Tf 50 700 Td (" + text.encode() + b") Tj ET"


def test_a_plain_generated_pdf_reads(tmp_path: Path) -> None:
    [doc] = list(load(write_pdf(tmp_path / "plain.pdf", [text_page()])))
    assert not isinstance(doc, LoadError)
    assert "lowered the infection rate." in " ".join(p.text for p in doc.paragraphs())


def test_a_compression_bomb_stops_at_the_limit_without_filling_memory(tmp_path: Path) -> None:
    # 64 MB of spaces after the text compress to about 64 KB; the limit is 4 MB.
    bomb = write_pdf(tmp_path / "bomb.pdf", [text_page() + b" " * (64 * MB)])
    assert bomb.stat().st_size < MB
    tracemalloc.start()
    try:
        [error] = list(load(bomb, max_mb=4))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert isinstance(error, LoadError)
    assert (
        str(error)
        == f"{bomb}: refused: its compressed streams inflate to more than 4 MB (setting max_file_mb)"
    )
    assert peak < 16 * MB, f"reading held {peak / MB:.0f} MB"


def test_the_inflation_budget_is_for_the_whole_file(tmp_path: Path) -> None:
    # Forty pages of 0.2 MB each pass any one-stream check; together they are 8 MB, over the 4 MB limit.
    pages = [text_page() + b" " * (MB // 5) for _ in range(40)]
    [error] = list(load(write_pdf(tmp_path / "many.pdf", pages), max_mb=4))
    assert isinstance(error, LoadError) and "inflate to more than 4 MB" in str(error)
    [doc] = list(load(write_pdf(tmp_path / "fine.pdf", pages), max_mb=20))
    assert not isinstance(doc, LoadError)


def test_too_many_pages_or_too_long_a_read_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_pdf(tmp_path / "long.pdf", [text_page() for _ in range(4)])
    monkeypatch.setattr(pdf_layout, "MAX_PAGES", 3)
    [error] = list(load(path))
    assert isinstance(error, LoadError) and str(error) == f"{path}: refused: more than 3 pages"
    monkeypatch.setattr(pdf_layout, "MAX_PAGES", 10)
    [error] = list(load(path, max_seconds=1e-9))
    assert isinstance(error, LoadError) and str(error) == (
        f"{path}: refused: reading took longer than 1e-09 s (setting max_read_seconds; stopped at page 1)"
    )


def test_a_refused_pdf_costs_only_itself_in_a_batch(tmp_path: Path) -> None:
    bomb = write_pdf(tmp_path / "a-bomb.pdf", [text_page() + b" " * (16 * MB)])
    good = write_pdf(tmp_path / "b-good.pdf", [text_page()])
    with Catalogue(tmp_path / "home" / "catalogue.sqlite3") as catalogue:
        ingestor = Ingestor(catalogue, ChunkingConfig(), max_file_mb=4)
        refused, ingested = ingestor.ingest_file(bomb), ingestor.ingest_file(good)
        assert [d.source for d in catalogue.iter_documents()] == [str(good)]
    assert refused.status == "failed" and "inflate to more than 4 MB" in str(refused.errors[0])
    assert ingested.status == "ingested" and ingested.added == 1
