"""How many tokens the embedder needs: throughput and dense retrieval quality at each length.

MiniLM was trained on 128-token inputs and sentence-transformers runs it at 256; a chunk's tokens past
the limit are not embedded. For each `--lengths` value this embeds the content chunks of an
ingested home with the default int8 embedder truncated there, then searches them exactly (a matrix
product, no index) with each development benchmark's questions, so the figures differ only by
length. A chunk no longer than a length keeps its vector from the longest one (the home's own,
from its embedding cache, where the home uses this embedder). It prints:

- throughput (texts/s, best of three) on a sample of the home's chunks, and the tokens each length keeps;
- dense doc / passage MRR@10 per benchmark and length;
- leave one benchmark out: the length chosen on the other benchmarks (mean doc + passage MRR@10),
  scored on the one left out, beside the model's own length.

    .venv/bin/python benchmarks/sequence_length.py --home .evidenceqa-bench \\
        ../shared/data/benchmarks/covidqa-dev.jsonl ../shared/data/benchmarks/clinician-dev.jsonl
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

import numpy as np
from embedding_speed import throughput

from evidenceqa.bench import machine
from evidenceqa.bench.metrics import Ranked, gold_positions, score
from evidenceqa.bench.retrieval import Question, read_questions
from evidenceqa.chunking import Chunk
from evidenceqa.embeddings import MINILM_ONNX_ID, OnnxEmbedder, export_onnx, load_embedder, minilm_path
from evidenceqa.index.base import CONTENT_LEVELS
from evidenceqa.library.catalogue import Catalogue
from evidenceqa.settings import load_settings
from evidenceqa.text import markdown

SAMPLE = 1000  # chunks timed at each length
TOP = 10


def token_counts(model: OnnxEmbedder, texts: list[str]) -> np.ndarray:
    """Each text's whole length in tokens (the tokenizer pads a batch: count the attention mask)."""
    model.tokenizer.no_truncation()
    try:
        return np.array([sum(e.attention_mask) for e in model.tokenizer.encode_batch(texts)])
    finally:
        model.tokenizer.enable_truncation(max_length=model.max_tokens)


def mrr(
    questions: list[Question], vectors: np.ndarray, chunks: list[Chunk], model: OnnxEmbedder
) -> tuple[float, float]:
    """Dense doc and passage MRR@10 by exact search (questions without a gold passage: doc only)."""
    queries = np.stack([model.embed_query(q.question) for q in questions])
    top = np.argsort(-(queries @ vectors.T), axis=1)[:, :TOP]
    doc, passage = [], []
    for q, found in zip(questions, top, strict=True):
        ranked = [Ranked(chunks[i].doc_id, chunks[i].body) for i in found]
        doc.append(score(gold_positions(ranked, q.gold_doc_ids, [], "document"), len(q.gold_doc_ids)).rr)
        if q.gold_passages:
            positions = gold_positions(ranked, [], q.gold_passages, "passage")
            passage.append(score(positions, len(q.gold_passages)).rr)
    return float(np.mean(doc)), float(np.mean(passage)) if passage else float("nan")


def pair(cell: tuple[float, float]) -> str:
    return f"{cell[0]:.3f} / " + ("–" if np.isnan(cell[1]) else f"{cell[1]:.3f}")


def objective(cell: tuple[float, float]) -> float:
    return float(np.nanmean(cell))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--lengths", default="128,192,256", help="Comma-separated token limits.")
    parser.add_argument("--limit", type=int, help="Only the first N questions of each benchmark.")
    parser.add_argument("benchmarks", type=Path, nargs="+")
    args = parser.parse_args()
    settings = load_settings(home=args.home)
    with Catalogue(settings.home / "catalogue.sqlite3") as catalogue:
        chunks = [c for c in catalogue.chunks() if c.hierarchy_level in CONTENT_LEVELS]
    texts = [c.text for c in chunks]
    lengths = sorted(int(n) for n in args.lengths.split(","))
    export = export_onnx(minilm_path(), settings.models_path / "minilm-onnx")
    models = {n: OnnxEmbedder(export, model_id=MINILM_ONNX_ID, max_tokens=n) for n in lengths}
    own = max(models.values(), key=lambda m: m.max_tokens)
    tokens = token_counts(own, texts)
    sample = random.Random(0).sample(texts, min(SAMPLE, len(texts)))
    sets = {
        path.stem: [q for q in read_questions(path, args.limit) if q.answerable] for path in args.benchmarks
    }

    speed, quality = [], {}
    longest: np.ndarray | None = None
    for n in sorted(lengths, reverse=True):
        model = models[n]
        if longest is None:  # the home's own vectors where its embedder is this one (from its cache)
            cached = load_embedder(settings)
            source = cached if cached.model_id == model.model_id else model
            vectors = longest = source.embed(texts)
        else:  # only chunks the length cuts get another vector
            vectors = longest.copy()
            cut = np.flatnonzero(tokens > model.max_tokens)
            vectors[cut] = model.embed([texts[i] for i in cut])
        quality[n] = {name: mrr(questions, vectors, chunks, model) for name, questions in sets.items()}
        kept = np.minimum(tokens, model.max_tokens).sum() / tokens.sum()
        speed.append([str(model.max_tokens), f"{throughput(model, sample)[0]:.1f}", f"{(tokens > model.max_tokens).mean():.1%}", f"{kept:.1%}"])  # fmt: skip

    print(f"**Throughput** on {len(sample):,} of the home's {len(texts):,} content chunks (int8 ONNX, batch "
          f"{own.batch_size}, sorted by length)\n")  # fmt: skip
    print(markdown.table(["Max tokens", "Texts/s", "Chunks cut", "Tokens kept"], sorted(speed, key=lambda r: int(r[0])),
                         [True, True, True, True]))  # fmt: skip
    print("**Dense retrieval** by exact search: doc / passage MRR@10 (questions in brackets)\n")
    rows = [[f"{name} ({len(qs)})", *(pair(quality[n][name]) for n in lengths)]
            for name, qs in sets.items()]  # fmt: skip
    print(markdown.table(["Benchmark", *(f"{n} tokens" for n in lengths)], rows))
    print("**Leave one benchmark out**: the length with the best mean doc + passage MRR@10 on the others\n")
    rows = []
    for held in sets:
        rest = [name for name in sets if name != held]
        best = max(lengths, key=lambda n: np.mean([objective(quality[n][name]) for name in rest]))
        cell = quality[best][held]
        default = quality[own.max_tokens][held]
        rows.append([held, str(best), pair(cell), pair(default)])
    print(markdown.table(["Left out", "Chosen on the others", "Its doc / passage MRR@10", f"At {own.max_tokens} tokens"], rows))  # fmt: skip
    print(machine.measured_on())


if __name__ == "__main__":
    main()
