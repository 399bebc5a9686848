"""Answer latency per stage, offline (extractive), after a warm-up (a benchmark, not a test).

Every question is answered without the answer cache (a cache hit would measure only the lookup),
then the same questions again with it. The embedding cache starts empty, so no evidence sentence
was embedded before (answering embeds each candidate sentence once, then remembers it). Prints a
Markdown table of p50 / p95 per stage (`--record FILE` also saves them as JSON). Example:

    .venv/bin/python benchmarks/ask_latency.py --home .evidenceqa-bench \
        --questions ../shared/data/benchmarks/covidqa-dev.jsonl --limit 100
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from search_latency import WARM_UP, percentile, question_arguments, write_record

from evidenceqa.answer.cache import MemoryCache
from evidenceqa.answer.engine import Engine
from evidenceqa.bench import machine
from evidenceqa.bench.retrieval import read_questions
from evidenceqa.settings import load_settings
from evidenceqa.text import markdown

STAGES = ("parse", "embed", "search", "fetch", "generate", "check", "total")


def main() -> None:
    parser = question_arguments(__doc__, limit=100)
    parser.add_argument("--record", type=Path, help="Also save the figures as JSON here.")
    args = parser.parse_args()
    questions = [q.question for q in read_questions(args.questions, args.limit + WARM_UP)]
    with (
        tempfile.TemporaryDirectory() as cold,
        Engine.open(load_settings(home=args.home, embedding_cache=Path(cold) / "vectors.sqlite3")) as engine,
    ):
        answerer = engine.answerer(MemoryCache(len(questions)))
        for question in questions[:WARM_UP]:
            answerer.ask(question, use_cache=False)
        timed = [answerer.ask(q).timings_ms for q in questions[WARM_UP:]]
        cached = [answerer.ask(q).timings_ms["total"] for q in questions[WARM_UP:]]
        generator = answerer.generator.name
    stages = {stage: [t.get(stage, 0.0) for t in timed] for stage in STAGES} | {
        "total, answer cached": cached
    }
    figures = {stage: {"p50": percentile(v, 0.5), "p95": percentile(v, 0.95)} for stage, v in stages.items()}
    rows = [[stage, f"{f['p50']:.1f}", f"{f['p95']:.1f}"] for stage, f in figures.items()]
    print(markdown.table(["Stage", "p50 ms", "p95 ms"], rows, [False, True, True]), end="")
    print(f"\n{len(timed)} questions · {generator} · {machine.current().tag()}\n")
    write_record(args.record, figures)


if __name__ == "__main__":
    main()
