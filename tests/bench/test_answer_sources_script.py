"""benchmarks/answer_sources.py end to end on the sample library: where answers come from, and the
yes/no line scored against a decision field and against a reference answer that opens with one."""

from __future__ import annotations

import os
import re
from pathlib import Path

from tests.bench.test_performance_benchmarks import benchmark_files, script
from tests.cli.test_cli import MODELS, run
from tests.conftest import SAMPLE

SHAVING = "pubmed-17621202"  # a trial: shaving before spinal surgery and postoperative infection


def test_the_script_scores_the_line_against_decisions_and_reference_answers(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert run(home, "ingest", str(SAMPLE / "library")).returncode == 0
    question = "Does shaving the incision site increase infection after spinal surgery?"
    rows = {
        "decided": [
            {"query_id": f"d{i}", "question": question, "gold_doc_ids": [SHAVING],
             "meta": {"final_decision": "yes"}}
            for i in range(2)
        ],
        "clinicians": [
            {"query_id": "c1", "question": question, "gold_doc_ids": [SHAVING],
             "answers": ["Yes - shaving raised the infection rate in a trial."]},
            # Its reference answer opens with no decision: it has none to score.
            {"query_id": "c2", "question": "Should I shave before my back operation?",
             "gold_doc_ids": [SHAVING], "answers": ["Not on the day; clip instead if hair must go."]},
        ],
    }  # fmt: skip
    env = {**os.environ, "EVIDENCEQA_MODELS_DIR": str(MODELS)}
    out = script("answer_sources.py", "--home", str(home), *benchmark_files(tmp_path, rows), env=env)

    assert re.search(r"\| decided \| 2 \| \d+\.\d% \| \d+\.\d% \|", out), out
    assert re.search(r"\| clinicians \| 2 \| \d+\.\d% \| \d+\.\d% \|", out), out
    # The trial's conclusion says shaving may increase infection: the line says yes, as both want.
    assert "| decided | 2 | 1.000 | 1.000 (yes) | 2 yes |" in out, out
    assert (
        "| decided, even questions | 1 | 1.000 |" in out and "| decided, odd questions | 1 | 1.000 |" in out
    )
    assert "| clinicians, reference answers opening yes or no | 1 | 1.000 | 1.000 (yes) | 1 yes |" in out, out
    assert "clinicians, even" not in out  # halves only where the rules were revised on one of them
