"""The bundled sample library (data/sample/): present without the shared data, small, well-formed,
attributed, and exactly what scripts/build_sample_library.py regenerates from the shared data."""

from __future__ import annotations

import gzip
import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "data" / "sample"
SCRIPT = REPO / "scripts" / "build_sample_library.py"
MAX_BYTES = 5_000_000
REQUIRED_KEYS = {
    "doc_id", "collection", "doc_type", "title", "authors", "year", "date", "doi", "url", "license", "topics",
    "sections",
}  # fmt: skip
FILE_SUFFIXES = {".xml", ".nxml", ".pdf", ".html"}


def sample_files() -> list[Path]:
    return sorted(p for p in SAMPLE.rglob("*") if p.is_file())


def jsonl_files() -> list[Path]:
    return sorted((SAMPLE / "library").glob("*.jsonl"))


def records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("build_sample_library", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_sample_is_bundled_and_small() -> None:
    names = {p.relative_to(SAMPLE).as_posix() for p in sample_files()}
    assert {"README.md", "ATTRIBUTION.md", "licenses/CC-BY-4.0.txt"} <= names
    assert jsonl_files(), "no library JSONL in data/sample/library"
    assert any(n.startswith("files/") for n in names)
    assert sum(p.stat().st_size for p in sample_files()) <= MAX_BYTES


def test_files_folder_holds_only_documents() -> None:
    # a licence text or README in files/ would be ingested as a document
    for path in (SAMPLE / "files").rglob("*"):
        if path.is_file():
            assert path.suffix in FILE_SUFFIXES, path


@pytest.mark.parametrize("path", jsonl_files(), ids=lambda p: p.name)
def test_jsonl_records_are_well_formed(path: Path) -> None:
    rows = records(path)
    assert rows
    for row in rows:
        assert not REQUIRED_KEYS - row.keys(), row.get("doc_id")
        assert isinstance(row["sections"], list) and row["sections"], row["doc_id"]
        assert all(s.get("paragraphs") for s in row["sections"]), row["doc_id"]
        assert isinstance(row["license"], str) and row["license"].strip(), row["doc_id"]


def test_doc_ids_are_unique_across_the_sample() -> None:
    ids = [row["doc_id"] for path in jsonl_files() for row in records(path)]
    assert len(ids) == len(set(ids))


def test_attribution_names_every_file_and_collection() -> None:
    attribution = (SAMPLE / "ATTRIBUTION.md").read_text(encoding="utf-8")
    bundled_files = [p for p in (SAMPLE / "files").rglob("*") if p.is_file()]
    for path in jsonl_files() + bundled_files:
        assert f"### {path.relative_to(SAMPLE).as_posix()}" in attribution, path


def test_regeneration_is_byte_identical(shared_data: Path, tmp_path: Path) -> None:
    load_script().main(["--shared", str(shared_data), "--out", str(tmp_path)])
    built = {p.relative_to(tmp_path).as_posix(): p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    bundled = {p.relative_to(SAMPLE).as_posix(): p.read_bytes() for p in sample_files()}
    assert sorted(built) == sorted(bundled)
    changed = [name for name in built if built[name] != bundled[name]]
    assert not changed, f"regenerate data/sample with scripts/build_sample_library.py: {changed}"


def test_records_are_verbatim_copies_of_the_shared_library(shared_data: Path) -> None:
    library = shared_data / "library"
    source_lines: dict[str, bytes] = {}
    for name in ("pubmedqa_abstracts.jsonl", "medquad_nih.jsonl.gz", "covidqa_articles.jsonl"):
        opener = gzip.open if name.endswith(".gz") else open
        with opener(library / name, "rb") as handle:
            for line in handle:
                source_lines[json.loads(line)["doc_id"]] = line.rstrip(b"\n")
    for path in jsonl_files():
        for line in path.read_bytes().splitlines():
            assert line == source_lines[json.loads(line)["doc_id"]]
