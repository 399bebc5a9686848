"""benchmarks/local_llm.py end to end against an OpenAI-compatible endpoint (the test server, over
HTTP): each kind of claim-check flag is counted where the model's answer earns it."""

from __future__ import annotations

import os
import re
from pathlib import Path

from evidenceqa.answer.engine import Engine
from evidenceqa.settings import Settings
from evidenceqa.text.sentences import split_sentences
from tests.answer.openai_server import OpenAIServer, answer
from tests.bench.test_performance_benchmarks import benchmark_files, script
from tests.cli.test_cli import MODELS, run
from tests.conftest import SAMPLE

QUESTIONS = [  # on documents of the sample library
    ("What is an abdominal aortic aneurysm?", "medquad-2_0000006"),
    ("What is acquired hemophilia?", "medquad-2_0000059"),
    ("How do bacteria spread from a hospital sink to the patient?", "covidqa-2585"),
    ("How do patients with COVID-19 get transported safely?", "covidqa-2450"),
]


def test_the_script_counts_valid_citations_and_each_kind_of_flag(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert run(home, "ingest", str(SAMPLE / "library")).returncode == 0
    with Engine.open(Settings(home=home, models_dir=MODELS)) as engine:
        top = engine.retriever().search(QUESTIONS[0][0], k=8).results[0].chunk
    quoted = split_sentences(top.body)[0]  # the first block's own words: supported
    (benchmark,) = benchmark_files(tmp_path, {
        "sample": [{"query_id": f"q{i}", "question": q, "gold_doc_ids": [doc], "gold_passages": []}
                   for i, (q, doc) in enumerate(QUESTIONS)]
    })  # fmt: skip
    with OpenAIServer() as llm:
        llm.script(
            answer(f"{quoted} [1]"),
            answer("Acquired hemophilia is treated with 40 mg of factor VIII daily [99]."),
            answer("Bacteria spread through the splashing of water."),
            answer("I don't have adequate information to answer this question."),
        )
        env = {**os.environ, "EVIDENCEQA_MODELS_DIR": str(MODELS)}
        out = script("local_llm.py", "--home", str(home), "--api-base", f"{llm.url}/v1", "--model-name",
                     "test-model", benchmark, env=env)  # fmt: skip
        assert len(llm.requests) == 4  # every question reached the model: no adequacy check

    # 4 questions, 3 answered, 1 said it cannot; 3 claims: one citing the evidence, one citing a block
    # that does not exist, one citing nothing.
    row = re.search(r"\| sample \| 4 \| 3 \| 1 \| 3 \| 33\.3% \| 33\.3% \| 33\.3% \| (\S+) \| (\S+) \|", out)
    assert row, out
    assert row.groups() == ("0.0%", "0.0%")  # the quoted sentence is supported and has no number
    assert "Model: test-model." in out
