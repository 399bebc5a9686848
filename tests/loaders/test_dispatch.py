import gzip
from pathlib import Path

import pytest

from evidenceqa.loaders import LoadError, detect_format, iter_files, load

PDF_HEAD = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n"
JATS = b'<?xml version="1.0"?>\n<!DOCTYPE article PUBLIC "-//NLM//DTD JATS//EN" "x.dtd">\n<article><front/></article>'


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        ("a.pdf", PDF_HEAD, "pdf"),
        ("a.nxml", JATS, "jats"),
        ("a.xml", b"<!-- note --><Document id='1'><Focus>x</Focus></Document>", "medquad"),
        ("a.xml", b"<?xml version='1.0'?><art><ui>1</ui></art>", "bmc"),
        ("a.html", b"<!DOCTYPE html><html><body><p>x</p></body></html>", "html"),
        ("a.xml", b"<html xmlns='http://www.w3.org/1999/xhtml'><body/></html>", "html"),
        ("a.jsonl", b'{"doc_id": "x"}\n', "jsonl"),
        ("a.md", b"# Title\n\ntext\n", "markdown"),
        ("a.txt", b"plain words\n", "text"),
    ],
)
def test_format_is_sniffed_from_the_content(tmp_path, name, content, expected):
    path = tmp_path / name
    path.write_bytes(content)
    assert detect_format(path) == expected


@pytest.mark.parametrize(
    ("name", "content", "reason"),
    [
        ("paper.xml", PDF_HEAD, "wrong extension: '.xml' but the content is PDF"),
        (
            "paper.pdf",
            b"<html><body>Sign in</body></html>",
            "wrong extension: '.pdf' but the content is HTML",
        ),
        ("empty.pdf", b"", "empty file"),
        ("blank.md", b"  \n\n", "empty file"),
        (
            "photo.jpg",
            b"\xff\xd8\xff\xe0\x00\x10JFIF\x00",
            "not a document (binary content of an unknown type)",
        ),
        (
            "report.docx",
            b"PK\x03\x04\x14\x00\x06\x00\x08\x00\x00\x00!\x00",
            "not a document (binary content of an unknown type)",
        ),
        ("data.csv", b"a,b\n1,2\n", "unsupported file type '.csv'"),
        (
            "unknown.xml",
            b"<?xml version='1.0'?><rss><channel/></rss>",
            "XML of an unknown kind (root <rss>; expected JATS, MedQuAD or BMC)",
        ),
    ],
)
def test_files_that_are_not_documents_get_one_clear_error(tmp_path, name, content, reason):
    path = tmp_path / name
    path.write_bytes(content)
    items = list(load(path))
    assert items == [LoadError(path, reason)]
    assert str(items[0]) == f"{path}: {reason}"


def test_compressed_xml_is_refused_clearly(tmp_path):
    path = tmp_path / "a.xml.gz"
    path.write_bytes(gzip.compress(JATS))
    assert [str(e) for e in load(path)] == [f"{path}: compressed jats is not supported; only .jsonl.gz is"]


def test_missing_file_and_directory(tmp_path):
    assert [e.reason for e in load(tmp_path / "nope.pdf")] == ["file not found"]
    assert [e.reason for e in load(tmp_path)] == ["is a directory"]


def test_iter_files_expands_folders_to_supported_files_in_order(tmp_path):
    (tmp_path / "b").mkdir()
    names = [
        "b/z.pdf",
        "b/a.xml",
        "c.jsonl.gz",
        "notes.csv",
        "b/image.png",
        "d.MD",
        "LICENSE.txt",
        "b/README.md",
        ".hidden.md",
    ]
    for name in names:
        (tmp_path / name).write_bytes(b"x")
    found = [p.relative_to(tmp_path).as_posix() for p in iter_files([tmp_path])]
    assert found == ["b/a.xml", "b/z.pdf", "c.jsonl.gz", "d.MD"]
    explicit = tmp_path / "notes.csv"
    assert list(iter_files([explicit])) == [explicit]  # named files are tried, and then refused clearly


def test_a_loader_bug_costs_one_file_not_the_batch(tmp_path, monkeypatch):
    path = tmp_path / "a.md"
    path.write_text("text\n", encoding="utf-8")

    def broken(_path: Path):
        raise ZeroDivisionError("division by zero")
        yield

    monkeypatch.setattr("evidenceqa.loaders.text.load", broken)
    assert [str(e) for e in load(path)] == [
        f"{path}: could not be parsed (ZeroDivisionError: division by zero)"
    ]
