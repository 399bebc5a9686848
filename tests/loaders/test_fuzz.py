"""Every loader on hostile bytes: random, mutated real files, truncated, deeply nested, non-UTF-8, with
control characters, over the size limit, gzip bombs. Each gives Documents a chunker accepts, or one-line
LoadErrors naming the file: never another exception (the dispatcher's catch-all for a loader bug,
"could not be parsed (…)", counts as a failure here), and never a half-ingested file."""

from __future__ import annotations

import gzip
import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evidenceqa.chunking import ChunkingConfig, chunk_document
from evidenceqa.documents import Document
from evidenceqa.library.catalogue import Catalogue
from evidenceqa.library.ingest import Ingestor
from evidenceqa.loaders import LoadError, load
from tests.conftest import SAMPLE
from tests.loaders.test_pdf import _pdf_with_text

FILES = SAMPLE / "files"
SENTENCE = "Chlorhexidine gluconate should not be used on mucous membranes before surgery."
SEEDS: dict[str, tuple[str, bytes]] = {
    "jsonl": ("lib.jsonl", (json.dumps({"doc_id": "d1", "title": "T", "year": 2020,
                                        "sections": [{"heading": "H", "paragraphs": [SENTENCE]}]}) + "\n").encode()),
    "jats": ("fulltext.xml", (FILES / "jats_xml/hindawi_epmc/PMC4739218/fulltext.xml").read_bytes()),
    "medquad": ("0000003.xml", (FILES / "medquad_xml/9_CDC_QA/0000003.xml").read_bytes()),
    "bmc": ("art.xml", b"<art><fm><bibl><title><p>Hair removal</p></title></bibl></fm><bdy><sec><st><p>Methods"
            b"</p></st><p>" + SENTENCE.encode() + b"</p></sec></bdy></art>"),
    "html": ("page.html", b"<!DOCTYPE html><html><head><title>Page</title><meta name='citation_doi' "
             b"content='10.1/x'></head><body><article><h1>Title</h1><h2>Methods</h2><p>" + SENTENCE.encode() * 3
             + b"</p></article></body></html>"),
    "pdf": ("notes.pdf", _pdf_with_text(f"{SENTENCE} {SENTENCE}")),
    "markdown": ("notes.md", f"---\ntitle: Notes\nyear: 2019\n---\n# Notes\n\n## Methods\n\n{SENTENCE}\n".encode()),
}  # fmt: skip
# Mutations are cheap for every format but PDF, which pdfminer parses slowly. A longer, random hunt:
# EVIDENCEQA_FUZZ_SCALE=50 (examples × 50, a new random sequence each run).
SCALE = int(os.environ.get("EVIDENCEQA_FUZZ_SCALE", "1"))
EXAMPLES = {"pdf": 100}
DEFAULT_EXAMPLES = 300


def check_loads_cleanly(path: Path, max_mb: float = 200) -> list[Document | LoadError]:
    """The property every loader must have, on whatever bytes `path` holds."""
    items = list(load(path, max_mb))
    assert items, "a file gives at least one Document or LoadError"
    for item in items:
        if isinstance(item, LoadError):
            assert item.path == str(path) and "\n" not in str(item), repr(item)
            assert not item.reason.startswith("could not be parsed ("), f"a loader crashed: {item}"
        else:
            assert isinstance(item, Document), repr(item)
            assert item.doc_id.strip() and any(p.text.strip() for p in item.paragraphs())
            assert chunk_document(item, ChunkingConfig()), "a loaded document must chunk"
    return items


def _write(name: str, data: bytes) -> Path:
    folder = Path(tempfile.mkdtemp(prefix="fuzz-"))
    path = folder / name
    path.write_bytes(data)
    return path


@st.composite
def mutated(draw: st.DrawFn, seed: bytes) -> bytes:
    """`seed` truncated, with bytes flipped, inserted, deleted or a range repeated (1-4 edits)."""
    data = bytearray(seed)
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(data)))
        edit = draw(st.sampled_from(["truncate", "flip", "insert", "delete", "repeat"]))
        if edit == "truncate":
            del data[at:]
        elif edit == "flip" and at < len(data):
            data[at] = draw(st.integers(0, 255))
        elif edit == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=40))
        elif edit == "delete":
            del data[at : at + draw(st.integers(1, 200))]
        else:
            data[at:at] = data[at : at + draw(st.integers(1, 200))] * draw(st.integers(1, 20))
    return bytes(data)


def _fuzz(fmt: str) -> Callable[[], None]:
    name, seed = SEEDS[fmt]

    @settings(max_examples=EXAMPLES.get(fmt, DEFAULT_EXAMPLES) * SCALE, deadline=None, derandomize=SCALE == 1)
    @given(data=st.one_of(mutated(seed), st.binary(max_size=3000)))
    def run(data: bytes) -> None:
        check_loads_cleanly(_write(name, data))

    return run


@pytest.mark.parametrize("fmt", sorted(SEEDS))
def test_the_seed_loads(fmt: str) -> None:
    name, seed = SEEDS[fmt]
    assert any(isinstance(item, Document) for item in check_loads_cleanly(_write(name, seed)))


@pytest.mark.parametrize("fmt", sorted(SEEDS))
def test_mutated_and_random_bytes_never_crash_a_loader(fmt: str) -> None:
    _fuzz(fmt)()


@settings(max_examples=60, deadline=None, derandomize=True)
@given(text=st.text(max_size=2000), suffix=st.sampled_from([".md", ".txt", ".html", ".xml", ".jsonl"]))
def test_any_text_with_control_characters_never_crashes(text: str, suffix: str) -> None:
    check_loads_cleanly(_write("any" + suffix, text.encode("utf-8", "surrogatepass")))


@pytest.mark.parametrize(
    ("name", "wrap"),
    [
        ("deep.xml", lambda d: b"<article><body>" + b"<sec>" * d + b"<p>x</p>" + b"</sec>" * d + b"</body></article>"),
        ("deep.xml", lambda d: b"<art><bdy>" + b"<sec>" * d + b"<p>x</p>" + b"</sec>" * d + b"</bdy></art>"),
        ("deep.xml", lambda d: b"<Document><QAPairs>" + b"<a>" * d + b"</a>" * d + b"</QAPairs></Document>"),
        ("deep.html", lambda d: b"<html><body>" + b"<div>" * d + SENTENCE.encode() * 5 + b"</div>" * d + b"</body></html>"),
        ("deep.jsonl", lambda d: b'{"doc_id": "x", "sections": ' + b"[" * d + b"]" * d + b"}\n"),
        ("deep.jsonl", lambda d: b'{"doc_id": "x", "sections": [' + b'{"sections": [' * d + b"]}" * d + b"]}\n"),
        ("deep.md", lambda d: b"".join(b"#" * (1 + i % 6) + b" h\n\nx\n\n" for i in range(d))),
    ],
)  # fmt: skip
@pytest.mark.parametrize("depth", [300, 5000])
def test_deep_nesting_is_a_result_or_an_error(name: str, wrap: Callable[[int], bytes], depth: int) -> None:
    check_loads_cleanly(_write(name, wrap(depth)))


@pytest.mark.parametrize("fmt", sorted(SEEDS))
def test_truncated_at_every_tenth_gives_a_result_or_an_error(fmt: str) -> None:
    name, seed = SEEDS[fmt]
    for cut in range(1, 10):
        check_loads_cleanly(_write(name, seed[: len(seed) * cut // 10]))


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("latin1.md", "# Résumé\n\nCéfazoline before incision.\n".encode("latin-1")),
        ("utf16.md", "# Notes\n\nCefazolin before incision.\n".encode("utf-16")),
        ("latin1.jsonl", json.dumps({"doc_id": "é", "sections": [{"paragraphs": ["x"]}]}, ensure_ascii=False).encode("latin-1")),
        ("latin1.xml", b"<?xml version='1.0' encoding='utf-8'?><article><body><p>caf\xe9</p></body></article>"),
    ],
)  # fmt: skip
def test_non_utf8_is_a_result_or_an_error(name: str, data: bytes) -> None:
    check_loads_cleanly(_write(name, data))


def test_a_file_over_the_size_limit_is_refused_before_it_is_read(tmp_path: Path) -> None:
    path = tmp_path / "big.md"
    path.write_bytes(b"# Big\n\n" + b"word " * 300_000)  # 1.5 MB
    [error] = check_loads_cleanly(path, max_mb=1)
    assert isinstance(error, LoadError)
    assert error.reason == "too large: 1.4 MB, over the 1 MB limit (setting max_file_mb)"
    assert isinstance(check_loads_cleanly(path, max_mb=2)[0], Document)


def _bomb(path: Path, lines: int, line: bytes) -> Path:
    """A .jsonl.gz of `lines` copies of `line`: a few KB on disk, many MB once decompressed."""
    with gzip.open(path, "wb", compresslevel=9) as stream:
        for _ in range(lines):
            stream.write(line)
    return path


def test_a_gzip_bomb_stops_at_the_limit_with_a_clear_error(tmp_path: Path) -> None:
    record = SEEDS["jsonl"][1]
    path = _bomb(tmp_path / "bomb.jsonl.gz", 3 * (1 << 20) // len(record), record)
    assert path.stat().st_size < 100_000
    items = check_loads_cleanly(path, max_mb=1)
    *docs, error = items
    assert all(isinstance(d, Document) for d in docs) and len(docs) < len(items)
    assert isinstance(error, LoadError)
    assert error.reason.startswith("decompresses to more than 1 MB (setting max_file_mb); stopped at line ")


def test_a_gzip_bomb_of_one_endless_line_never_fills_memory(tmp_path: Path) -> None:
    path = tmp_path / "line.jsonl.gz"
    with gzip.open(path, "wb", compresslevel=9) as stream:
        stream.write(b'{"doc_id": "x", "title": "')
        for _ in range(64):
            stream.write(b"a" * (1 << 20))  # 64 MB, no newline
    [error] = check_loads_cleanly(path, max_mb=1)
    assert error.reason == "decompresses to more than 1 MB (setting max_file_mb); stopped at line 1"


@settings(max_examples=15, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])  # fmt: skip
@given(fmt=st.sampled_from(sorted(set(SEEDS) - {"pdf"})), data=st.data())
def test_ingesting_a_damaged_file_is_all_or_nothing_for_its_documents(
    tmp_path: Path, fmt: str, data: st.DataObject
) -> None:
    """What the catalogue holds after ingesting any bytes is exactly the documents the loader gave."""
    name, seed = SEEDS[fmt]
    path = _write(name, data.draw(mutated(seed)))
    with Catalogue(Path(tempfile.mkdtemp(dir=tmp_path)) / "c.sqlite3") as catalogue:
        report = Ingestor(catalogue, ChunkingConfig()).ingest_file(path)
        loaded = {d.doc_id for d in load(path) if isinstance(d, Document)}
        stored = {record.doc_id for record in catalogue.documents()}
        assert stored == loaded or (len(stored) == len(loaded) and report.warnings)  # repeated ids renamed
        for doc_id in stored:
            assert list(catalogue.chunks(doc_id)), f"{doc_id} stored without its chunks"
        assert report.status == ("failed" if not loaded else report.status)
