"""A tiny run of benchmarks/engines.py on both backends: every configuration reported, ratios to
LanceDB hybrid, and a result from `<gold>-copy<n>` scored as the gold document."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from evidenceqa.answer.engine import Engine
from evidenceqa.settings import Settings
from tests.conftest import REPO, indexed_engine

# Only a copy of each gold document is in the library: every hit is right only if copies count.
DOCS = [
    ("ssi-copy1", 2004, "Surgical site infection after hip replacement fell with antibiotic prophylaxis."),
    ("flu-copy2", 2019, "Influenza vaccination of nursing home staff reduced deaths among the residents."),
    ("dvt-copy1", 2012, "Compression stockings lowered deep vein thrombosis rates in long-haul flights."),
]
QUESTIONS = [
    ("q1", "Does antibiotic prophylaxis reduce surgical site infection after hip replacement?", "ssi"),
    ("q2", "Does vaccinating nursing home staff against influenza reduce resident deaths?", "flu"),
    ("q3", "Do compression stockings prevent deep vein thrombosis on long flights?", "dvt"),
]
LABELS = [
    "query embedding",
    "hybrid · LanceDB (the product)",
    "BM25 · LanceDB FTS",
    "BM25 · bm25s",
    "dense exact · LanceDB brute force",
    "dense · LanceDB (no vector index: exact)",
    "hybrid · Milvus Lite",
    "BM25 · Milvus Lite",
    "dense exact · Milvus Lite FLAT",
]


def test_every_configuration_finds_the_copy_of_the_gold_document(tmp_path: Path, models_dir: Path) -> None:
    with indexed_engine(tmp_path, DOCS, models_dir) as engine:
        home = engine.settings.home
    with Engine.open(Settings(home=home, models_dir=models_dir), backend="milvus") as engine:
        engine.sync()
    rows = [{"query_id": q, "question": text, "gold_doc_ids": [gold]} for q, text, gold in QUESTIONS]
    benchmark = tmp_path / "bench.jsonl"
    benchmark.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    command = [sys.executable, str(REPO / "benchmarks" / "engines.py"), "--home", str(home),
               "--benchmark", str(benchmark), "--limit", "2", "--backends", "lancedb,milvus"]  # fmt: skip
    env = {**os.environ, "EVIDENCEQA_MODELS_DIR": str(models_dir)}
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    lines = [line for line in result.stdout.splitlines() if line.startswith("| ")][2:]
    rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in lines]
    assert len(rows) == len(LABELS)
    assert all(row[0].startswith(label) for row, label in zip(rows, LABELS, strict=True))
    assert rows[1][5:] == ["1.00×", "1.00×"]
    for row in rows[1:]:
        assert (row[1], row[4], row[6]) == ("2", "1.000", "1.00×"), row
    assert "LanceDB hybrid = Retriever.search on 2/2 questions" in result.stdout
