import json
from pathlib import Path

import pytest

from evidenceqa.chunking import ChunkingConfig
from evidenceqa.documents import Paragraph
from evidenceqa.library.catalogue import Catalogue
from evidenceqa.library.ingest import Ingestor


def _record(doc_id: str, text: str, **extra) -> dict:
    return {
        "doc_id": doc_id,
        "title": f"Title {doc_id}",
        "sections": [{"heading": "Body", "paragraphs": [text]}],
        **extra,
    }


def _write(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


@pytest.fixture
def catalogue(tmp_path):
    with Catalogue(tmp_path / "home" / "catalogue.sqlite3") as cat:
        yield cat


@pytest.fixture
def ingestor(catalogue):
    return Ingestor(catalogue, ChunkingConfig())


def test_first_ingest_adds_and_second_does_nothing(tmp_path, ingestor, catalogue):
    source = _write(tmp_path / "lib.jsonl", [_record("a", "Alpha text."), _record("b", "Beta text.")])
    first = ingestor.ingest_file(source)
    assert (first.status, first.added, first.chunks) == ("ingested", 2, 4)
    version = catalogue.index_version
    second = ingestor.ingest_file(source)
    assert (second.status, second.added, second.updated) == ("unchanged", 0, 0)
    assert catalogue.index_version == version


def test_changed_file_replaces_changed_documents_and_drops_vanished_ones(tmp_path, ingestor, catalogue):
    source = _write(
        tmp_path / "lib.jsonl", [_record("a", "Alpha."), _record("b", "Beta."), _record("c", "Gamma.")]
    )
    ingestor.ingest_file(source)
    old_a = [c.chunk_id for c in catalogue.chunks("a")]
    _write(source, [_record("a", "Alpha."), _record("b", "Beta, revised.")])
    report = ingestor.ingest_file(source)
    assert (report.added, report.updated, report.unchanged, report.removed) == (0, 1, 1, 1)
    assert [c.chunk_id for c in catalogue.chunks("a")] == old_a
    assert "Beta, revised." in [c.body for c in catalogue.chunks("b")]
    assert catalogue.document("c") is None and list(catalogue.chunks("c")) == []
    assert catalogue.changes_since(catalogue.index_version - 1) == [
        (catalogue.index_version, "b", "upsert"),
        (catalogue.index_version, "c", "delete"),
    ]


def test_a_file_with_bad_lines_keeps_good_ones_and_removes_nothing(tmp_path, ingestor, catalogue):
    source = _write(tmp_path / "lib.jsonl", [_record("a", "Alpha."), _record("b", "Beta.")])
    ingestor.ingest_file(source)
    source.write_text(json.dumps(_record("a", "Alpha 2.")) + "\n{broken json\n", encoding="utf-8")
    report = ingestor.ingest_file(source)
    assert report.updated == 1 and report.removed == 0
    assert [str(e) for e in report.errors] == [
        f"{source}:2: invalid JSON (Expecting property name enclosed in double quotes at column 2)"
    ]
    assert catalogue.document("b") is not None  # not proven gone: kept
    assert ingestor.ingest_file(source).status == "ingested"  # errors are reported again next time


def test_an_unreadable_file_loses_nothing(tmp_path, ingestor, catalogue):
    source = _write(tmp_path / "lib.jsonl", [_record("a", "Alpha.")])
    ingestor.ingest_file(source)
    source.write_bytes(b"\x00\x01\x02 binary junk")
    report = ingestor.ingest_file(source)
    assert report.status == "failed"
    assert "not a document" in str(report.errors[0])
    assert catalogue.document("a") is not None


def test_an_interrupted_ingest_leaves_the_previous_state(tmp_path, ingestor, catalogue):
    source = _write(tmp_path / "lib.jsonl", [_record("a", "Alpha."), _record("b", "Beta.")])
    ingestor.ingest_file(source)
    before = (catalogue.index_version, [c.chunk_id for c in catalogue.chunks()])
    _write(source, [_record("a", "Alpha v2."), _record("b", "Beta v2."), _record("c", "Gamma.")])
    calls = []

    def crash_on_second_document() -> None:
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        ingestor.ingest_file(source, on_document=crash_on_second_document)
    assert (catalogue.index_version, [c.chunk_id for c in catalogue.chunks()]) == before
    report = ingestor.ingest_file(source)
    assert (report.added, report.updated) == (1, 2)


def test_repeated_ids_in_one_file_keep_every_document(tmp_path, ingestor, catalogue):
    source = _write(
        tmp_path / "lib.jsonl", [_record("a", "One."), _record("a", "Two."), _record("a", "Three.")]
    )
    report = ingestor.ingest_file(source)
    assert report.added == 3
    assert {r.doc_id for r in catalogue.documents()} == {"a", "a~2", "a~3"}
    assert len(report.warnings) == 2 and "stored as 'a~2'" in report.warnings[0]


def test_the_same_document_from_two_files_is_kept_once(tmp_path, ingestor, catalogue):
    first = _write(tmp_path / "one.jsonl", [_record("a", "From one.")])
    second = _write(tmp_path / "two.jsonl", [_record("a", "From two.")])
    ingestor.ingest_file(first)
    report = ingestor.ingest_file(second)
    assert report.added == 0 and "already in the library from" in report.warnings[0]
    assert catalogue.document("a").source_path == str(first.resolve())


def _twin_files(formats_dir: Path, folder: Path) -> tuple[Path, Path]:
    """One article's JATS XML and its PDF side by side, as a publisher's folder holds them (same DOI)."""
    folder.mkdir()
    xml = folder / "fulltext.xml"
    pdf = folder / "fulltext.pdf"
    xml.write_bytes((formats_dir / "jats_xml/hindawi_epmc/PMC4736379/fulltext.xml").read_bytes())
    pdf.write_bytes((formats_dir / "pdf/hindawi_epmc/PMC4736379/fulltext.pdf").read_bytes())
    return xml, pdf


def _bodies(catalogue: Catalogue, doc_id: str) -> list[str]:
    return [c.body for c in catalogue.chunks(doc_id)]


def test_an_articles_xml_is_kept_over_its_pdf_whichever_comes_first(tmp_path, formats_dir):
    xml, pdf = _twin_files(formats_dir, tmp_path / "articles")
    with Catalogue(tmp_path / "xml-alone" / "catalogue.sqlite3") as alone:
        Ingestor(alone, ChunkingConfig()).ingest_file(xml)
        (doc_id,) = alone.doc_ids_from(str(xml.resolve()))
        expected = _bodies(alone, doc_id)
    for order in ((pdf, xml), (xml, pdf)):
        with Catalogue(tmp_path / f"home-{order[0].suffix}" / "catalogue.sqlite3") as catalogue:
            ingestor = Ingestor(catalogue, ChunkingConfig())
            first, second = (ingestor.ingest_file(path) for path in order)
            assert first.added == 1
            assert catalogue.document(doc_id).source_path == str(xml.resolve())
            assert _bodies(catalogue, doc_id) == expected  # the XML's sections and all four tables
            if order[0] == pdf:
                assert second.updated == 1
                assert "replaced by this file's jats reading" in second.warnings[0]
            else:
                assert second.updated == 0 and second.warnings[0].endswith("; skipped")
            # Nothing changes on the next ingest of the folder.
            again = [ingestor.ingest_file(path) for path in order]
            assert [r.status for r in again] == ["unchanged", "unchanged"]
            assert catalogue.document(doc_id).source_path == str(xml.resolve())


def test_a_moved_file_takes_its_documents_along(tmp_path, ingestor, catalogue):
    first = _write(tmp_path / "one.jsonl", [_record("a", "Text.")])
    ingestor.ingest_file(first)
    moved = first.rename(tmp_path / "moved.jsonl")
    report = ingestor.ingest_file(moved)
    assert report.updated == 1
    assert catalogue.document("a").source_path == str(moved.resolve())


def test_remove_then_reingest_brings_the_document_back(tmp_path, ingestor, catalogue):
    source = _write(tmp_path / "lib.jsonl", [_record("a", "Alpha."), _record("b", "Beta.")])
    ingestor.ingest_file(source)
    version = catalogue.index_version
    assert ingestor.remove("a") is True
    assert ingestor.remove("a") is False
    assert catalogue.document("a") is None and catalogue.index_version == version + 1
    report = ingestor.ingest_file(source)
    assert (report.added, report.unchanged) == (1, 1)


def test_changing_the_chunker_rechunks_unchanged_files(tmp_path, catalogue):
    source = _write(tmp_path / "lib.jsonl", [_record("a", "Alpha.")])
    Ingestor(catalogue, ChunkingConfig()).ingest_file(source)
    report = Ingestor(catalogue, ChunkingConfig(strategy="section")).ingest_file(source)
    assert report.updated == 1
    assert [c.hierarchy_level for c in catalogue.chunks("a")] == ["section"]


def test_a_new_loader_version_reads_unchanged_files_again(tmp_path, catalogue, monkeypatch):
    from evidenceqa.loaders import jsonl

    source = _write(tmp_path / "lib.jsonl", [_record("a", "Alpha."), _record("b", "Beta.")])
    Ingestor(catalogue, ChunkingConfig()).ingest_file(source)
    version = catalogue.index_version
    monkeypatch.setattr(jsonl, "VERSION", jsonl.VERSION + 1)
    reread = Ingestor(catalogue, ChunkingConfig()).ingest_file(source)
    # Read again; documents that come out the same are not re-chunked, and the index has nothing to do.
    assert (reread.status, reread.unchanged, reread.updated, reread.chunks) == ("ingested", 2, 0, 0)
    assert catalogue.index_version == version
    assert Ingestor(catalogue, ChunkingConfig()).ingest_file(source).status == "unchanged"


def test_a_loader_that_now_reads_more_updates_the_documents_of_files_already_ingested(
    tmp_path, catalogue, monkeypatch
):
    from evidenceqa.loaders import jsonl

    source = _write(tmp_path / "lib.jsonl", [_record("a", "Alpha.")])
    Ingestor(catalogue, ChunkingConfig()).ingest_file(source)
    older = jsonl.load

    def reads_more(path, max_bytes):
        for doc in older(path, max_bytes):
            doc.sections[0].paragraphs.append(Paragraph("A table the old loader missed."))
            yield doc

    monkeypatch.setattr(jsonl, "load", reads_more)
    # The same loader version: the file is not read again.
    assert Ingestor(catalogue, ChunkingConfig()).ingest_file(source).status == "unchanged"
    monkeypatch.setattr(jsonl, "VERSION", jsonl.VERSION + 1)
    report = Ingestor(catalogue, ChunkingConfig()).ingest_file(source)
    assert report.updated == 1
    assert "Alpha.\n\nA table the old loader missed." in [c.body for c in catalogue.chunks("a")]


def test_a_loader_that_cannot_be_imported_fails_its_file_in_one_line(tmp_path, catalogue, monkeypatch):
    from evidenceqa import registry

    source = _write(tmp_path / "lib.jsonl", [_record("a", "Alpha.")])
    real = registry.load

    def broken(kind, name):
        if (kind, name) == ("loader", "jsonl"):
            raise ImportError("No module named 'a_plugin_dependency'")
        return real(kind, name)

    monkeypatch.setattr(registry, "load", broken)
    report = Ingestor(catalogue, ChunkingConfig()).ingest_file(source)
    assert report.status == "failed"
    assert [str(e) for e in report.errors] == [
        f"{source}: could not be parsed (ImportError: No module named 'a_plugin_dependency')"
    ]
