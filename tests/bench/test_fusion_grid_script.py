"""benchmarks/fusion_grid.py end to end on the sample library: the left-out table and the model it writes."""

from __future__ import annotations

import os
from pathlib import Path

from evidenceqa.retrieval.adaptive import SIGNALS, AdaptiveAlpha
from tests.bench.test_performance_benchmarks import benchmark_files, script
from tests.cli.test_cli import MODELS, run
from tests.conftest import SAMPLE

QUESTIONS = {
    "lexical": [
        ("tranexamic acid total hip arthroplasty blood loss", "tranexamic"),
        ("chlorhexidine gluconate mucous membranes", "chlorhexidine"),
        ("clipping shaving hair removal surgical site infection", "shav"),
    ],
    "lay": [
        ("a medicine that stops bleeding when my hip is replaced", "tranexamic"),
        ("can that skin cleaner go in my mouth", "chlorhexidine"),
        ("should my hair be shaved before the operation", "shav"),
    ],
}


def test_the_script_prints_every_left_out_method_and_writes_a_model(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert run(home, "ingest", str(SAMPLE / "library")).returncode == 0
    # Gold: whatever document the sample library holds on the subject (its search finds it).
    benchmarks = benchmark_files(tmp_path, {
        name: [{"query_id": f"{name}{i}", "question": q, "gold_doc_ids": [], "gold_passages": [word]}
               for i, (q, word) in enumerate(rows)]
        + [{"query_id": "none", "question": "unanswerable", "gold_doc_ids": [], "meta": {}}]
        for name, rows in QUESTIONS.items()
    })  # fmt: skip
    model = tmp_path / "model.json"
    env = {**os.environ, "EVIDENCEQA_MODELS_DIR": str(MODELS)}
    out = script("fusion_grid.py", "--home", str(home), "--write-model", str(model), *benchmarks, env=env)
    assert "| lexical (3) |" in out and "| lay (3) |" in out  # the unanswerable rows are left out
    for held in QUESTIONS:
        for method in ("bm25", "dense", "fixed α=0.3", "adaptive, fitted on the others"):
            assert f"| {held} | {method} |" in out
        assert (
            f"| {held} | adaptive over score distributions, with the library's own questions, fitted" in out
        )
    fitted = AdaptiveAlpha.load(model)
    # The library's own questions are fitted beside the benchmarks, never named as one.
    assert fitted.signals == SIGNALS and fitted.fitted_on == ("lexical", "lay", "library questions")
    assert "fitted on every benchmark and" in out and "of the library's own questions" in out
