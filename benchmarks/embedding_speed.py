"""Embedding throughput and agreement: int8 ONNX MiniLM against fp32 sentence-transformers.

Embeds real paragraphs (at least 20 words) from a library JSONL with both paths, after a warm-up,
and prints a Markdown table: texts per second (best of three runs) and the cosine similarity of
each int8 vector to its fp32 one. Example:

    .venv/bin/python benchmarks/embedding_speed.py --library ../shared/data/library/covidqa_articles.jsonl
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np

from evidenceqa.bench import machine
from evidenceqa.embeddings import (
    MINILM_ONNX_ID,
    OnnxEmbedder,
    SentenceTransformerEmbedder,
    export_onnx,
    minilm_path,
)
from evidenceqa.embeddings.base import Embedder
from evidenceqa.text import markdown

BATCH = 64


def paragraphs(path: Path, count: int) -> list[str]:
    found = [
        p
        for line in path.read_text(encoding="utf-8").splitlines()
        for section in json.loads(line)["sections"]
        for p in section["paragraphs"]
        if len(p.split()) >= 20
    ]
    step = max(1, len(found) // count)
    return found[::step][:count]


def throughput(embedder: Embedder, texts: list[str]) -> tuple[float, np.ndarray]:
    vectors = embedder.embed(texts[:BATCH])  # warm-up
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        vectors = embedder.embed(texts)
        best = min(best, time.perf_counter() - start)
    return len(texts) / best, vectors


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--library", type=Path, required=True)
    parser.add_argument("--count", type=int, default=200)
    args = parser.parse_args()
    texts = paragraphs(args.library, args.count)
    fp32 = SentenceTransformerEmbedder(minilm_path(), batch_size=BATCH)
    with tempfile.TemporaryDirectory() as folder:
        int8 = OnnxEmbedder(
            export_onnx(minilm_path(), Path(folder)), batch_size=BATCH, model_id=MINILM_ONNX_ID
        )
        fp32_rate, reference = throughput(fp32, texts)
        int8_rate, quantised = throughput(int8, texts)
    cosine = np.sum(reference * quantised, axis=1)
    rows = [
        ["minilm (sentence-transformers, fp32)", f"{fp32_rate:.1f}", "1.000", "1.000"],
        [
            "minilm-onnx (ONNX Runtime, int8)",
            f"{int8_rate:.1f}",
            f"{cosine.mean():.3f}",
            f"{cosine.min():.3f}",
        ],
    ]
    headers = ["Embedder", "Texts/s", "Mean cosine to fp32", "Min cosine to fp32"]
    print(markdown.table(headers, rows, [False, True, True, True]), end="")
    words = sum(len(t.split()) for t in texts) / len(texts)
    print(
        f"\n{len(texts)} paragraphs of {words:.0f} words on average · batch {BATCH} · {machine.current().tag()}\n"
    )


if __name__ == "__main__":
    main()
