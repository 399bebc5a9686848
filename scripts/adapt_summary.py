"""Markdown summary of an adapted model's manifest (adapt.json): what it was trained on, and how long it took.

Run: .venv/bin/python scripts/adapt_summary.py .evidenceqa-bench/adapted-minilm
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from evidenceqa.adapt import MANIFEST
from evidenceqa.text import markdown


def summary(manifest: dict) -> str:
    mined, trained = manifest["pairs_mined"], manifest["triplets_by_kind"]
    rows = [[kind, f"{mined[kind]:,}", f"{trained.get(kind, 0):,}"] for kind in sorted(mined)]
    table = markdown.table(["Pair kind", "Mined", "In the training set"], rows, [False, True, True])
    refused = ", ".join(
        f"{count:,} {reason}" for reason, count in sorted(manifest["refused_by_guard"].items())
    )
    run, config = manifest["training"], manifest["config"]
    budget = " (stopped by the time budget)" if run["stopped_by_budget"] else ""
    return (
        f"{table}\n"
        f"Training queries refused by the benchmark guard: {refused or 'none'}. "
        f"Pairs without a BM25 hard negative, dropped: {manifest['without_negative']:,}.\n\n"
        f"{manifest['documents']:,} documents; pairs mined in {manifest['mining_minutes']:.1f} min; "
        f"{run['steps']} of {run['planned_steps']} steps of {config['batch_size']} (query, passage, hard negative) "
        f"triplets in {run['minutes']:.1f} min on CPU{budget}; "
        f"loss {run['first_loss']:.3f} → {run['last_loss']:.3f} (mean of the last 20 steps).\n"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("model", type=Path)
    args = parser.parse_args()
    print(summary(json.loads((args.model / MANIFEST).read_text(encoding="utf-8"))), end="")


if __name__ == "__main__":
    main()
