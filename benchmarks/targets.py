"""The Performance issue's targets, each marked met or not met from the benchmarks' own records.

The benchmarks of docs/performance.md write what they measured as JSON with `--record FILE`; this
reads those files from one folder and prints a Markdown table: target, goal, measured, met, and the
machine the record was made on. A target is judged on its own record only: a record from another
machine is named as such, never compared with this one. A record that is missing is reported as not
measured, never as met. Example:

    .venv/bin/python benchmarks/targets.py --records reports/performance
"""

from __future__ import annotations

import argparse
import json
import operator
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evidenceqa.bench.machine import Machine
from evidenceqa.text import markdown

UNRECORDED = "machine not recorded (a record made before records named their machine)"


@dataclass(frozen=True)
class Target:
    name: str
    record: str  # file name in the records folder
    value: Callable[[dict[str, Any]], float]
    at_most: bool  # the goal is a ceiling (else a floor)
    goal: float
    unit: str
    decimals: int = 1

    def verdict(self, records: Path, machines: dict[str, str]) -> list[str]:
        """The table row; `machines` (a machine's tag → its letter) gains the record's machine."""
        goal = f"{'≤' if self.at_most else '≥'} {self.goal:,g} {self.unit}"
        path = records / self.record
        if not path.is_file():
            return [self.name, goal, f"not measured ({path} missing)", "–", "–"]
        record = json.loads(path.read_text(encoding="utf-8"))
        measured = self.value(record)
        met = (operator.le if self.at_most else operator.ge)(measured, self.goal)
        tag = Machine.from_dict(record["machine"]).tag() if "machine" in record else UNRECORDED
        letter = machines.setdefault(tag, chr(ord("A") + len(machines)))
        return [
            self.name,
            goal,
            f"{measured:,.{self.decimals}f} {self.unit}",
            "met" if met else "**not met**",
            letter,
        ]


TARGETS = (
    Target("Scale library size, distinct text", "build-distinct.json", lambda r: r["chunks"], False, 300_000, "chunks", 0),
    Target("Hybrid retrieval, replicated, filtered, warm, without the query embedding: p50", "search-filtered.json",
           lambda r: r["hybrid"]["retrieval_p50"], True, 20, "ms"),
    Target("Hybrid retrieval, replicated, filtered, warm, without the query embedding: p95", "search-filtered.json",
           lambda r: r["hybrid"]["retrieval_p95"], True, 50, "ms"),
    Target("Hybrid retrieval, distinct text, warm, without the query embedding: p50", "search-distinct.json",
           lambda r: r["hybrid"]["retrieval_p50"], True, 20, "ms"),
    Target("Hybrid retrieval, distinct text, warm, without the query embedding: p95", "search-distinct.json",
           lambda r: r["hybrid"]["retrieval_p95"], True, 50, "ms"),
    Target("Hybrid retrieval, a million chunks (simulated vectors), without the query embedding: p95",
           "search-million.json", lambda r: r["hybrid"]["retrieval_p95"], True, 50, "ms"),
    Target("Query embedding: p95", "search-filtered.json", lambda r: r["hybrid"]["embed_p95"], True, 15, "ms"),
    Target("Offline ask, end to end, replicated library: p95", "ask.json", lambda r: r["total"]["p95"], True, 500,
           "ms"),
    Target("Offline ask, end to end, medical library (no copies): p95", "ask-medical.json",
           lambda r: r["total"]["p95"], True, 500, "ms"),
    Target("Ingest throughput, default embedder, cold cache", "build-speed.json",
           lambda r: r["index_chunks_per_s"], False, 80, "chunks/s"),
    Target("Serving memory at the replicated library, 10 users (peak RSS)", "load-10.json",
           lambda r: r["rss_mb"]["peak"], True, 2048, "MB"),
    Target("Serving memory at the replicated library, 50 users (peak RSS)", "load-50.json",
           lambda r: r["rss_mb"]["peak"], True, 2048, "MB"),
)  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--records", type=Path, required=True)
    args = parser.parse_args()
    machines: dict[str, str] = {}
    rows = [target.verdict(args.records, machines) for target in TARGETS]
    headers = ["Target", "Goal", "Measured", "Met", "Machine"]
    print(markdown.table(headers, rows, [False, True, True, False, False]), end="")
    print()
    for tag, letter in machines.items():
        print(f"- {letter}: {tag}")
    if len(machines) > 1:
        print(f"\nThese records come from {len(machines)} machines: each target is judged on its own "
              "record, and figures from different machines are not comparable.")  # fmt: skip


if __name__ == "__main__":
    main()
