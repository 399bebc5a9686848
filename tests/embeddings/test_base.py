from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from evidenceqa.embeddings.base import batched_by_length, folder_fingerprint, l2_normalise


def test_batched_by_length_sorts_batches_but_returns_input_order() -> None:
    texts = ["a" * n for n in (7, 1, 5, 3, 9, 2, 8)]
    batches: list[list[str]] = []

    def lengths(batch: list[str]) -> np.ndarray:
        batches.append(batch)
        return np.array([[len(t), 0.0] for t in batch], dtype=np.float32)

    out = batched_by_length(texts, 3, lengths)
    assert out[:, 0].tolist() == [len(t) for t in texts]
    assert [len(b) for b in batches] == [3, 3, 1]
    flat = [len(t) for b in batches for t in b]
    assert flat == sorted(flat)
    assert out.dtype == np.float32


def test_batched_by_length_needs_texts() -> None:
    with pytest.raises(ValueError):
        batched_by_length([], 4, lambda batch: np.zeros((len(batch), 2)))


def test_l2_normalise_keeps_zero_rows_finite() -> None:
    out = l2_normalise(np.array([[3.0, 4.0], [0.0, 0.0]]))
    assert out.tolist() == [[pytest.approx(0.6), pytest.approx(0.8)], [0.0, 0.0]]


def test_fingerprint_follows_model_files_not_docs(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{}")
    (tmp_path / "README.md").write_text("v1")
    before = folder_fingerprint(tmp_path)
    (tmp_path / "README.md").write_text("v2")
    assert folder_fingerprint(tmp_path) == before
    (tmp_path / "config.json").write_text('{"hidden_size": 8}')
    assert folder_fingerprint(tmp_path) != before


def test_importing_the_package_loads_no_heavy_library() -> None:
    heavy = ["torch", "onnxruntime", "openai", "sentence_transformers", "transformers"]
    code = f"import sys, evidenceqa.embeddings; print([m for m in {heavy!r} if m in sys.modules])"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"
