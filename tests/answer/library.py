"""Slices of the bundled sample's PubMed abstracts as library files: enough real documents for a
library to calibrate itself."""

from __future__ import annotations

from pathlib import Path

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "sample" / "library" / "pubmedqa_periop.jsonl"


def abstracts(path: Path, n: int, start: int = 0) -> Path:
    """The sample's abstracts `start` … `start + n - 1` as a library file at `path`."""
    lines = SAMPLE.read_text(encoding="utf-8").splitlines(keepends=True)[start : start + n]
    assert len(lines) == n, f"the sample has {len(lines)} abstracts from {start}, not {n}"
    path.write_text("".join(lines), encoding="utf-8")
    return path
