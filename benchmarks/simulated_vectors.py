"""Vectors for a library too large to embed here: each chunk's is the mean of its sentences' true vectors.

A million-chunk library takes hours to embed on two cores (docs/performance.md measures the rate),
so its vector index is measured on simulated vectors. The scale library's distinct copies
(`scale_library.py --distinct`) are paragraphs recombined from real sentences, so each chunk's
vector is simulated from the true vectors of the sentences it is made of: every distinct sentence
of the library (headings included) is embedded once, by the default embedder, and a chunk's vector is
the normalised mean of its sentences' vectors (its heading, the title and section path above the text, counts as one)
weighted by their words. Such vectors lie where real
ones do, mixed as the chunk's sentences are; they are smoother than a model's own. `fill` stores them
in the home's embedding cache under the chunk's text, so the ordinary sync finds every chunk there
(`build_speed.py --simulate-vectors`).

Run as a script, this says how close the simulation is: on a home built with true vectors and a home
of the same generator built with simulated ones, the cosine between the two vectors of each chunk
they share, and how many of the exact top-10 chunks of benchmark questions agree between the two
spaces. Example:

    .venv/bin/python benchmarks/simulated_vectors.py --true .evidenceqa-distinct \\
        --simulated .evidenceqa-million --questions ../shared/data/benchmarks/covidqa-dev.jsonl --limit 100
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from evidenceqa.bench import machine
from evidenceqa.bench.retrieval import read_questions
from evidenceqa.documents import Chunk
from evidenceqa.embeddings import CachedEmbedder, Embedder, EmbeddingCache, cache_path, load_embedder
from evidenceqa.embeddings.cache import content_hash
from evidenceqa.library.catalogue import Catalogue
from evidenceqa.settings import load_settings
from evidenceqa.text import markdown
from evidenceqa.text.sentences import split_sentences

_BATCH = 4096  # chunks simulated and stored per step: bounded memory, progress kept if interrupted
_K = 10


def _batches(catalogue: Catalogue) -> Iterator[list[Chunk]]:
    batch: list[Chunk] = []
    for chunk in catalogue.chunks():
        batch.append(chunk)
        if len(batch) == _BATCH:
            yield batch
            batch = []
    if batch:
        yield batch


def _segments(text: str) -> list[str]:
    """A chunk's heading (title and section path, shared by its section's chunks), then its sentences."""
    heading, _, body = text.partition("\n\n")
    return [heading, *split_sentences(body)] if body.strip() else split_sentences(text) or [text]


def simulate(texts: list[str], embedder: Embedder) -> np.ndarray:
    """The simulated vector of each text: its sentences' vectors, weighted by words, normalised."""
    pieces = [_segments(text) for text in texts]
    sentences = list(dict.fromkeys(s for piece in pieces for s in piece))
    vectors = dict(zip(sentences, embedder.embed(sentences), strict=True))
    out = np.empty((len(texts), embedder.dim), dtype=np.float32)
    for row, piece in enumerate(pieces):
        weights = np.array([len(s.split()) or 1 for s in piece], dtype=np.float32)
        mean = weights @ np.stack([vectors[s] for s in piece])
        out[row] = mean / (np.linalg.norm(mean) or 1.0)
    return out


def fill(catalogue: Catalogue, embedder: Embedder) -> int:
    """Store a simulated vector for every chunk of `catalogue` that the embedder's cache lacks (a
    chunk already there keeps its vector); returns how many were simulated."""
    if not isinstance(embedder, CachedEmbedder):
        raise TypeError("simulated vectors are stored in the embedding cache: pass a CachedEmbedder")
    filled = 0
    for batch in _batches(catalogue):
        by_hash = {content_hash(c.text): c.text for c in batch}
        known = embedder.cache.get_many(embedder.model_id, by_hash)
        missing = [(h, t) for h, t in by_hash.items() if h not in known]
        if not missing:
            continue
        vectors = simulate([t for _, t in missing], embedder)
        embedder.cache.put_many(embedder.model_id, zip((h for h, _ in missing), vectors, strict=True))
        filled += len(missing)
    return filled


def _shared_vectors(
    true_home: Path, simulated_home: Path, embedder: CachedEmbedder
) -> tuple[np.ndarray, np.ndarray]:
    settings = load_settings(home=true_home)
    model, true_cache = embedder.model_id, embedder.cache
    simulated_cache = EmbeddingCache(cache_path(load_settings(home=simulated_home)))
    true_rows, simulated_rows = [], []
    with Catalogue(settings.catalogue_path) as catalogue:
        for batch in _batches(catalogue):
            hashes = [content_hash(c.text) for c in batch]
            real = true_cache.get_many(model, hashes)
            fake = simulated_cache.get_many(model, hashes)
            both = [h for h in dict.fromkeys(hashes) if h in real and h in fake]
            true_rows.extend(real[h] for h in both)
            simulated_rows.extend(fake[h] for h in both)
    if not true_rows:
        raise SystemExit(f"{true_home} and {simulated_home} share no chunk vectors under {model}")
    return np.stack(true_rows), np.stack(simulated_rows)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--true", type=Path, required=True, help="A home built with true vectors.")
    parser.add_argument("--simulated", type=Path, required=True, help="A home built with --simulate-vectors.")
    parser.add_argument("--questions", type=Path, required=True)
    parser.add_argument("--limit", type=int, default=100)
    args = parser.parse_args()
    embedder = load_embedder(load_settings(home=args.true))  # the model is loaded once, for the questions
    true, fake = _shared_vectors(args.true, args.simulated, embedder)
    cosines = np.einsum("ij,ij->i", true, fake)
    questions = np.stack(
        [embedder.embed_query(q.question) for q in read_questions(args.questions, args.limit)]
    )
    overlaps = []
    for query in questions:
        top_true = set(np.argpartition(-(true @ query), _K)[:_K])
        top_fake = set(np.argpartition(-(fake @ query), _K)[:_K])
        overlaps.append(len(top_true & top_fake) / _K)
    rows = [
        ["cosine, simulated vs true vector (mean)", f"{cosines.mean():.3f}"],
        ["cosine, 10th percentile", f"{np.percentile(cosines, 10):.3f}"],
        [f"exact top-{_K} shared by both spaces ({len(questions)} questions)", f"{np.mean(overlaps):.3f}"],
    ]
    print(markdown.table(["Simulated vectors", "Value"], rows, [False, True]), end="")
    print(f"\n{len(true):,} chunks in both homes · {embedder.model_id} · {machine.current().tag()}\n")


if __name__ == "__main__":
    main()
