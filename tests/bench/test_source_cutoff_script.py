"""benchmarks/source_cutoff.py end to end on the sample library: every cut scored, the cut chosen left-out."""

from __future__ import annotations

import os
import re
from pathlib import Path

from tests.bench.test_performance_benchmarks import benchmark_files, script
from tests.cli.test_cli import MODELS, run
from tests.conftest import SAMPLE

# Questions on documents of the sample library, with a span each document states.
QUESTIONS = {
    "patient-pages": [
        ("What is an abdominal aortic aneurysm?", "medquad-2_0000006", "aorta"),
        ("What is acquired hemophilia?", "medquad-2_0000059", "blood"),
    ],
    "covid-articles": [
        ("How do patients with COVID-19 get transported safely?", "covidqa-2450", "transport"),
        ("How do bacteria spread from a hospital sink to the patient?", "covidqa-2585", "sink"),
    ],
}


def test_the_script_scores_every_cut_and_chooses_one_left_out(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert run(home, "ingest", str(SAMPLE / "library")).returncode == 0
    benchmarks = benchmark_files(tmp_path, {
        name: [{"query_id": f"{name}{i}", "question": q, "gold_doc_ids": [doc], "gold_passages": [span]}
               for i, (q, doc, span) in enumerate(rows)]
        for name, rows in QUESTIONS.items()
    })  # fmt: skip
    env = {**os.environ, "EVIDENCEQA_MODELS_DIR": str(MODELS)}
    out = script("source_cutoff.py", "--home", str(home), *benchmarks, env=env)

    assert "| Source cut | patient-pages | covid-articles |" in out
    cells = r"(\d+\.\d%) / (\d+\.\d%) / (\d+\.\d%)"
    for cut in ("0.8", "0.9", "1"):
        assert re.search(rf"\| {re.escape(cut)} \| {cells} \| {cells} \|", out), cut
    for left_out in QUESTIONS:
        fitted = re.search(rf"\| {left_out} \| ([\d.]+) \| {cells} \| {cells} \|", out)
        assert fitted and float(fitted.group(1)) in (0.8, 0.85, 0.9, 0.925, 0.95, 0.975, 1.0), out
    assert re.search(r"Fitted on all 2: [\d.]+ \(the default: 1\)\.", out)
