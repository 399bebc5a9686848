"""A grid result made up in memory, for the report and plot tests: known figures, no search."""

from itertools import product
from pathlib import Path

from evidenceqa.bench.grid import Cell, CellResult, GridResult, GridSpec, HomeStats
from evidenceqa.bench.metrics import aggregate_first_ranks
from evidenceqa.bench.slices import slice_scores

# 25 questions: two question types large enough for a slice table, one too small.
TYPES = ["symptoms"] * 12 + ["treatment"] * 11 + ["rare"] * 2
SETTINGS = {"k": 10, "alpha": "0.3", "rrf_k": 60, "fusion_depth": 100}


def grid_result(
    chunking: tuple[str, ...] = ("hierarchical-paragraphs",),
    embedders: tuple[str, ...] = ("minilm-onnx", "onnx:/models/pubmedbert"),
    modes: tuple[str, ...] = ("bm25", "dense", "hybrid-alpha"),
) -> GridResult:
    axes = {
        "chunking": list(chunking),
        "embedder": list(embedders),
        "mode": list(modes),
        "backend": ["lancedb"],
    }
    spec = GridSpec([Path("lib.jsonl")], [Path("b/mq.jsonl"), Path("b/small.jsonl")], axes, Path("work"))
    result = GridResult(spec, SETTINGS)
    result.homes = [HomeStats(name, 10, 20 + i, 100.0 - i, 0.25) for i, name in enumerate(chunking)]
    for i, (strategy, embedder, mode) in enumerate(product(chunking, embedders, modes)):
        cell = Cell(strategy, embedder, mode, "lancedb")
        result.cells.append(_cell(cell, "mq", TYPES, shift=i))
        result.cells.append(_cell(cell, "small", ["x"] * 5, shift=i))
    return result


def _cell(cell: Cell, benchmark: str, types: list[str], shift: int) -> CellResult:
    firsts = [1 + (n + shift) % 4 for n in range(len(types))]
    per_query = [{"query_id": str(n), "first_document": first} for n, first in enumerate(firsts)]
    labels = [{"question_type": t, "collection": benchmark} for t in types]
    return CellResult(
        cell=cell,
        benchmark=benchmark,
        model_id=f"id:{cell.embedder}",
        dim=384 if cell.embedder == "minilm-onnx" else 768,
        questions=len(types),
        metrics={"document": {**aggregate_first_ranks(firsts), "Recall@10": 1.0, "nDCG@10": 0.9}},
        latency_ms={"p50": 3.0, "p95": 9.0},
        slices=slice_scores(per_query, labels),
    )
