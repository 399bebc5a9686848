"""Do answers lead with the finding, from the right article? And which way do they point?

Each answerable question of each benchmark is answered as `ask` answers it (extractive, the
adequacy check off, so that every question is answered and the generator alone is measured):
- the share of quoted answer sentences that cite a gold article, and of first sentences that do;
- where the benchmark names gold passages (clinician-dev's answering sentences), the share of
  first sentences that quote one: the answer leads with what answers, not only from the article;
- on questions with a yes/no/maybe decision (PubMedQA's `final_decision`), the accuracy of the
  answer's yes/no line ("mixed" and "unclear" count as "maybe"), beside the majority class; also
  on the even and the odd questions apart, since the wording rules of `answer.findings` were
  revised looking at the even ones' errors only: the odd ones are what the rules were not fitted to;
- and on yes/no questions whose reference answer opens with its decision ("Yes - …", "No, …":
  clinician-dev's, in clinicians' words, never used to revise the rules) the same accuracy.
Example:

    .venv/bin/python benchmarks/answer_sources.py --home .evidenceqa-bench --limit 200 \\
        ../shared/data/benchmarks/clinician-dev.jsonl ../shared/data/benchmarks/pubmedqa.jsonl
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import replace
from pathlib import Path

from fusion_grid import benchmark_arguments

from evidenceqa.answer.abstain import Abstainer
from evidenceqa.answer.cache import MemoryCache
from evidenceqa.answer.engine import Engine
from evidenceqa.bench import machine
from evidenceqa.bench.answers import first_quote_share, score_sources, source_shares
from evidenceqa.bench.retrieval import question_filters, read_questions
from evidenceqa.jsonl import read_rows
from evidenceqa.settings import load_settings
from evidenceqa.text import markdown

MAYBE = {"mixed": "maybe", "unclear": "maybe"}
_DECIDED = re.compile(r"(yes|no)\b", re.I)


def reference_decisions(path: Path) -> dict[str, str]:
    """query id → "yes" or "no", for the rows whose first reference answer opens with its decision."""
    decided = {}
    for row in read_rows(path, dict, "a benchmark row"):
        answers = row.get("answers") or [""]
        if found := _DECIDED.match(str(answers[0]).strip()):
            decided[str(row["query_id"])] = found.group(1).lower()
    return decided


def direction_row(name: str, decided: list[tuple[str, str]]) -> list[str]:
    """Accuracy of the (truth, said) pairs beside the majority class's, and what was said."""
    majority, count = Counter(truth for truth, _ in decided).most_common(1)[0]
    said = Counter(guess for _, guess in decided)
    return [name, f"{len(decided):,}", f"{sum(t == g for t, g in decided) / len(decided):.3f}",
            f"{count / len(decided):.3f} ({majority})", ", ".join(f"{n} {d}" for d, n in sorted(said.items()))]  # fmt: skip


def main() -> None:
    args = benchmark_arguments(__doc__).parse_args()
    sources, directions = [], []
    with Engine.open(load_settings(home=args.home)) as engine:
        answerer = replace(engine.answerer(MemoryCache(1)), abstainer=Abstainer())
        for path in args.benchmarks:
            questions = [q for q in read_questions(path, args.limit) if q.answerable]
            referenced = reference_decisions(path)
            scores, decided, by_reference = [], [], []
            for number, q in enumerate(questions):
                answer = answerer.ask(q.question, question_filters(q), use_cache=False)
                score = score_sources(q, answer)
                scores.append(score)
                if score.direction is None:
                    continue
                guess = MAYBE.get(score.direction, score.direction)
                if "final_decision" in q.meta:
                    decided.append((q.meta["final_decision"], guess, number % 2))
                elif q.query_id in referenced:
                    by_reference.append((referenced[q.query_id], guess))
            answered, from_gold, first = source_shares(scores)
            quoting = first_quote_share(scores)
            sources.append([path.stem, f"{answered:,}", f"{from_gold:.1%}", f"{first:.1%}",
                            "–" if quoting is None else f"{quoting:.1%}"])  # fmt: skip
            for part, kept in (("", (0, 1)), (", even questions", (0,)), (", odd questions", (1,))):
                if rows := [(truth, guess) for truth, guess, half in decided if half in kept]:
                    directions.append(direction_row(path.stem + part, rows))
            if by_reference:
                directions.append(
                    direction_row(f"{path.stem}, reference answers opening yes or no", by_reference)
                )
    print(markdown.table(["Benchmark", "Answered", "Sentences from a gold article", "First sentence from a gold article",
                          "First sentence quotes a gold passage"], sources, [False, True, True, True, True]))  # fmt: skip
    if directions:
        print()
        print(markdown.table(["Benchmark", "Yes/no questions", "Direction accuracy", "Majority class", "Said"],
                             directions, [False, True, True, True, False]))  # fmt: skip
    print(machine.measured_on())


if __name__ == "__main__":
    main()
