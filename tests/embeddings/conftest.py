"""Fixtures shared by the embedding tests: the real MiniLM model, its ONNX export, real paragraphs."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from evidenceqa.embeddings import SentenceTransformerEmbedder, export_onnx, minilm_path
from tests.conftest import SAMPLE

# Nothing in these tests may reach the internet; set before any Hugging Face library is imported.
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"


@pytest.fixture(scope="session")
def st_embedder() -> SentenceTransformerEmbedder:
    return SentenceTransformerEmbedder(minilm_path(), batch_size=64)


@pytest.fixture(scope="session")
def onnx_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data home whose models folder already holds the MiniLM export (exporting takes a few seconds)."""
    home = tmp_path_factory.mktemp("home")
    export_onnx(minilm_path(), home / "models" / "minilm-onnx")
    return home


@pytest.fixture(scope="session")
def onnx_dir(onnx_home: Path) -> Path:
    return onnx_home / "models" / "minilm-onnx"


@pytest.fixture(scope="session")
def paragraphs() -> list[str]:
    """30 real paragraphs of the sample library, short to longer than MiniLM's 256-token window."""
    found: list[str] = []
    for name in ("pubmedqa_periop.jsonl", "covidqa_infection_control.jsonl"):
        for line in (SAMPLE / "library" / name).read_text().splitlines():
            for section in json.loads(line)["sections"]:
                found += [p for p in section["paragraphs"] if len(p.split()) >= 5]
    found.sort(key=len)
    step = len(found) // 29
    return [*found[::step][:29], found[-1]]
