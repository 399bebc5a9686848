"""Embedding throughput and agreement: the int8 ONNX MiniLM that ingest uses, its variants, and fp32.

Embeds real paragraphs (at least 20 words) from a library JSONL, after a warm-up, and prints a
Markdown table: texts per second (best of three runs) and the cosine similarity of each vector to
fp32 sentence-transformers'. The rows: fp32 on torch and on ONNX Runtime (the float limit of these
cores), the default int8 export, and the quantisation variants it was chosen over (per-tensor
weight scales; 7-bit weights, which AVX2 without VNNI needs to avoid saturating), all at the local
model's default batch size, then the default at other batch sizes, and in one worker process per core (`embed_workers`, one thread each). Example:

    .venv/bin/python benchmarks/embedding_speed.py --library ../shared/data/library/covidqa_articles.jsonl
"""

from __future__ import annotations

import argparse
import json
import shutil
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
from evidenceqa.embeddings.onnx import (
    FP32_FILE,
    INT8_FILE,
    MANIFEST_FILE,
    quantise,
    read_manifest,
    write_manifest,
)
from evidenceqa.embeddings.workers import WorkerEmbedder, usable_cpus
from evidenceqa.settings import load_settings
from evidenceqa.text import markdown

BATCH = OnnxEmbedder.BATCH_SIZE  # what ingest uses unless embed_batch_size says otherwise
BATCHES = (16, 32, 64, 128)  # the default int8 model at batch sizes other than BATCH
VARIANTS = {
    "int8, per-tensor": {"per_channel": False},
    "int8, per-channel, 7-bit weights": {"reduce_range": True},
}


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


def variant(export: Path, folder: Path, **options: bool) -> Path:
    """A copy of `export` whose int8 graph is quantised with other `options` (see onnx.quantise)."""
    shutil.copytree(export, folder)
    quantise(folder / FP32_FILE, folder / INT8_FILE, **options)
    (folder / MANIFEST_FILE).unlink()
    write_manifest(folder, (read_manifest(export) or {})["source"])
    return folder


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--library", type=Path, required=True)
    parser.add_argument("--count", type=int, default=200)
    args = parser.parse_args()
    texts = paragraphs(args.library, args.count)
    rows = []

    def row(name: str, embedder: Embedder, batch: int, reference: np.ndarray | None) -> np.ndarray:
        rate, vectors = throughput(embedder, texts)
        cosine = np.sum(vectors * (vectors if reference is None else reference), axis=1)
        rows.append([name, str(batch), f"{rate:.1f}", f"{cosine.mean():.3f}", f"{cosine.min():.3f}"])
        return vectors

    reference = row("minilm: sentence-transformers, fp32", SentenceTransformerEmbedder(minilm_path(), batch_size=BATCH), BATCH, None)  # fmt: skip
    with tempfile.TemporaryDirectory() as folder:
        export = export_onnx(minilm_path(), Path(folder) / "minilm-onnx")  # where minilm-onnx finds it
        onnx = {"fp32": OnnxEmbedder(export, batch_size=BATCH, graph=FP32_FILE)}
        onnx["int8, per-channel (default)"] = OnnxEmbedder(export, batch_size=BATCH, model_id=MINILM_ONNX_ID)
        for name, options in VARIANTS.items():
            onnx[name] = OnnxEmbedder(variant(export, Path(folder) / name, **options), batch_size=BATCH)
        for name, embedder in onnx.items():
            row(f"minilm-onnx: ONNX Runtime, {name}", embedder, BATCH, reference)
        for batch in BATCHES:
            embedder = OnnxEmbedder(export, batch_size=batch, model_id=MINILM_ONNX_ID)
            row("minilm-onnx: ONNX Runtime, int8, per-channel (default)", embedder, batch, reference)
        cores = usable_cpus()
        settings = load_settings().model_copy(update={"models_dir": Path(folder), "embed_batch_size": BATCH})
        with WorkerEmbedder(onnx["int8, per-channel (default)"], settings, cores) as workers:
            row(
                f"minilm-onnx: int8 (default), {cores} worker processes × 1 thread", workers, BATCH, reference
            )
    headers = ["Embedder", "Batch", "Texts/s", "Mean cosine to fp32", "Min cosine to fp32"]
    print(markdown.table(headers, rows, [False, True, True, True, True]), end="")
    words = sum(len(t.split()) for t in texts) / len(texts)
    print(f"\n{len(texts)} paragraphs of {words:.0f} words on average · ingest embeds in batches of "
          f"{BATCH} (the local model's default; embed_batch_size sets another) · {machine.current().tag()}\n")  # fmt: skip


if __name__ == "__main__":
    main()
