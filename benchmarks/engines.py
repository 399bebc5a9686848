"""Search engines side by side: LanceDB against Milvus Lite, our hybrid against BM25 alone and dense alone.

For each benchmark question the text is embedded once (timed on its own: the "query embedding"
row) and its keyword terms are analysed once, by the retriever itself: `Retriever.search(mode=
"hybrid", temporal=False)` gives the terms, the dense weight and the product's top 10. Temporal
phrases are not parsed, so every configuration searches the whole question under the same default
filters (content levels only). Then each configuration's search alone is timed (no embedding,
parsing or catalogue fetch), top 10, after a warm-up on questions that are not measured:

- hybrid: `evidenceqa.retrieval.fusion.hybrid_search` ( both lists at the fusion depth,
  fused with the settings' method and weight), the search half of `Retriever.search`; on LanceDB
  its top 10 is checked against the retriever's (the description line says on how many it agreed);
- BM25 alone: the engine's own full-text search, and the peer bm25s (k1 1.2, b 0.75, Lucene IDF)
  over the same analysed terms of the same content chunks, read from the LanceDB table (its index
  build time is in the description line);
- dense alone: exact (brute force) and, on LanceDB, the default path (the ANN index when the table
  has one); Milvus Lite's dense search is FLAT, i.e. exact.

MRR@10 is at the document level. In the scale library (benchmarks/scale_library.py) copy n of a
document is `<doc_id>-copy<n>` with the same text, so a trailing `-copy<n>` is stripped from result
document ids before scoring (a no-op in a library without copies). Ratios are to LanceDB hybrid.
Prints Markdown: one table per benchmark, and one over all of them. Example:

    .venv/bin/python benchmarks/engines.py --home .evidenceqa-bench --backends lancedb,milvus \
        --benchmark ../shared/data/benchmarks/covidqa-dev.jsonl \
        --benchmark ../shared/data/benchmarks/pubmedqa.jsonl --limit 200
"""

from __future__ import annotations

import argparse
import re
import resource
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import bm25s
import lancedb
import numpy as np
from search_latency import WARM_UP, percentile, rss_mb

from evidenceqa.answer.engine import Engine
from evidenceqa.bench import machine
from evidenceqa.bench.metrics import Ranked, gold_positions, score
from evidenceqa.bench.retrieval import Question, read_questions
from evidenceqa.index import open_backend
from evidenceqa.index.base import Filters, Hit, SearchBackend
from evidenceqa.index.lancedb import LanceDBBackend, filter_sql
from evidenceqa.library.index_sync import space_name
from evidenceqa.retrieval.fusion import Fusion, hybrid_search
from evidenceqa.retrieval.question import clean_question
from evidenceqa.retrieval.retriever import Retriever
from evidenceqa.settings import Settings, load_settings
from evidenceqa.text import markdown

K = 10
FILTERS = Filters()  # content levels only
HYBRID = "hybrid · LanceDB (the product)"
EMBEDDING = "query embedding (once per question, in no row below)"
_COPY = re.compile(r"-copy\d+$")


@dataclass(frozen=True)
class Query:
    question: Question
    vector: np.ndarray
    terms: str
    alpha: float
    product: list[str]  # Retriever.search's top chunk ids


Search = Callable[[Query], list[Hit]]


@dataclass(frozen=True)
class Configuration:
    label: str
    search: Search


@dataclass
class Measurement:
    latency_ms: list[float] = field(default_factory=list)
    rr: list[float] = field(default_factory=list)
    agreed: int = 0  # questions whose top chunk ids equal the product's

    def extend(self, other: Measurement) -> None:
        self.latency_ms += other.latency_ms
        self.rr += other.rr
        self.agreed += other.agreed


def doc_rr(question: Question, hits: list[Hit]) -> float:
    """Document-level reciprocal rank, a copy of a gold document counting as the gold document."""
    ranked = [Ranked(_COPY.sub("", hit.doc_id), "") for hit in hits[:K]]
    return score(gold_positions(ranked, question.gold_doc_ids, [], "document"), len(question.gold_doc_ids)).rr


def prepare(retriever: Retriever, question: Question, timings: list[float] | None) -> Query:
    """Embed once (timed into `timings` when given) and take the retriever's terms and weight."""
    text = clean_question(question.question, retriever.settings.max_question_chars)
    start = time.perf_counter()
    vector = retriever.embedder.embed_query(text)  # remembered: the search below does not embed again
    if timings is not None:
        timings.append((time.perf_counter() - start) * 1000)
    response = retriever.search(text, k=K, mode="hybrid", temporal=False)
    assert response.alpha is not None  # a hybrid search always has a dense weight
    product = [result.chunk.chunk_id for result in response.results]
    return Query(question, vector, response.keyword_terms, response.alpha, product)


def measure(config: Configuration, warm_up: list[Query], queries: list[Query]) -> Measurement:
    for query in warm_up:
        config.search(query)
    result = Measurement()
    for query in queries:
        start = time.perf_counter()
        hits = config.search(query)
        result.latency_ms.append((time.perf_counter() - start) * 1000)
        result.rr.append(doc_rr(query.question, hits))
        result.agreed += [hit.chunk_id for hit in hits] == query.product
    return result


def hybrid(backend: SearchBackend, settings: Settings) -> Search:
    def search(q: Query) -> list[Hit]:
        fusion = Fusion(settings.fusion, q.alpha, settings.rrf_k, settings.fusion_depth)
        return hybrid_search(backend, q.vector, q.terms, K, FILTERS, fusion)

    return search


def bm25s_peer(table: lancedb.table.Table) -> tuple[Search, float]:
    """bm25s over the analysed terms of the table's content chunks; with its build time (s)."""
    query = table.search().where(filter_sql(FILTERS)).select(["chunk_id", "doc_id", "terms"])
    rows = query.limit(None).to_arrow()
    chunk_ids, doc_ids = rows.column("chunk_id").to_pylist(), rows.column("doc_id").to_pylist()
    start = time.perf_counter()
    model = bm25s.BM25(k1=1.2, b=0.75, method="lucene")
    model.index([terms.split() for terms in rows.column("terms").to_pylist()], show_progress=False)
    build_s = time.perf_counter() - start

    def search(q: Query) -> list[Hit]:
        found, scores = model.retrieve([q.terms.split()], k=min(K, len(chunk_ids)), show_progress=False)
        return [
            Hit(chunk_ids[i], doc_ids[i], float(s)) for i, s in zip(found[0], scores[0], strict=True) if s > 0
        ]

    return search, build_s


def vector_index(table: lancedb.table.Table) -> str | None:
    return next((ix.index_type for ix in table.list_indices() if "vector" in ix.columns), None)


def lancedb_configurations(
    backend: LanceDBBackend, table: lancedb.table.Table, settings: Settings, peer: Search
) -> list[Configuration]:
    ann = vector_index(table)
    ann_label = (
        f"dense · LanceDB {ann} (the product's path)" if ann else "dense · LanceDB (no vector index: exact)"
    )
    return [
        Configuration(HYBRID, hybrid(backend, settings)),
        Configuration("BM25 · LanceDB FTS", lambda q: backend.search_keyword(q.terms, K, FILTERS)),
        Configuration("BM25 · bm25s (peer, same terms)", peer),
        Configuration(
            "dense exact · LanceDB brute force",
            lambda q: backend.search_dense(q.vector, K, FILTERS, exact=True),
        ),
        Configuration(ann_label, lambda q: backend.search_dense(q.vector, K, FILTERS)),
    ]


def milvus_configurations(backend: SearchBackend, settings: Settings) -> list[Configuration]:
    return [
        Configuration("hybrid · Milvus Lite", hybrid(backend, settings)),
        Configuration("BM25 · Milvus Lite", lambda q: backend.search_keyword(q.terms, K, FILTERS)),
        Configuration("dense exact · Milvus Lite FLAT", lambda q: backend.search_dense(q.vector, K, FILTERS)),
    ]


def open_milvus(settings: Settings, space: str, chunks: int) -> SearchBackend:
    milvus = open_backend("milvus", settings, space=space)
    held = milvus.count()
    if held != chunks:
        milvus.close()
        raise SystemExit(
            f"the Milvus index holds {held:,} chunks, LanceDB {chunks:,}: "
            f"run `evidenceqa --home {settings.home} --backend milvus index`"
        )
    return milvus


def run_benchmark(
    path: Path, limit: int, retriever: Retriever, configs: list[Configuration]
) -> dict[str, Measurement]:
    questions = read_questions(path, limit + WARM_UP)
    measured, spare = questions[:limit], questions[limit:] or questions[:WARM_UP]
    warm_up = [prepare(retriever, q, None) for q in spare]  # also warms the embedder
    embedding = Measurement()
    queries = [prepare(retriever, q, embedding.latency_ms) for q in measured]
    results = {EMBEDDING: embedding}
    results.update((c.label, measure(c, warm_up, queries)) for c in configs)
    return results


def table(results: dict[str, Measurement]) -> str:
    base = results[HYBRID]
    base_p50, base_mrr = percentile(base.latency_ms, 0.5), float(np.mean(base.rr))
    rows = []
    for label, m in results.items():
        p50 = percentile(m.latency_ms, 0.5)
        mrr = float(np.mean(m.rr)) if m.rr else None
        rows.append([
            label, len(m.latency_ms), f"{p50:.1f}", f"{percentile(m.latency_ms, 0.95):.1f}",
            "–" if mrr is None else f"{mrr:.3f}", f"{p50 / base_p50:.2f}×",
            "–" if mrr is None else f"{mrr / base_mrr:.2f}×",
        ])  # fmt: skip
    headers = ["Configuration", "Queries", "p50 ms", "p95 ms", "MRR@10 (doc)", "p50 ÷ hybrid", "MRR ÷ hybrid"]
    return markdown.table(headers, rows, [False] + [True] * 6)


def describe(engine: Engine, hybrid_row: Measurement, peer_build_s: float) -> str:
    settings = engine.settings
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return (
        f"{engine.backend.count():,} chunks · embedder {engine.embedder.model_id} · {settings.fusion} fusion, "
        f"α {settings.alpha}, depth {settings.fusion_depth} · bm25s index built in {peer_build_s:.1f} s · "
        f"LanceDB hybrid = Retriever.search on {hybrid_row.agreed}/{len(hybrid_row.rr)} questions · "
        f"{rss_mb():.0f} MB resident, {peak_mb:.0f} MB peak · "
        f"{machine.current().tag()}\n"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--benchmark", type=Path, action="append", required=True)
    parser.add_argument("--limit", type=int, default=200, help="questions measured per benchmark")
    parser.add_argument("--backends", default="lancedb", help="lancedb, or lancedb,milvus")
    args = parser.parse_args()
    backends = set(args.backends.split(","))
    if not backends <= {"lancedb", "milvus"} or "lancedb" not in backends:
        parser.error("--backends: lancedb, or lancedb,milvus (LanceDB hybrid is the baseline)")
    settings = load_settings(home=args.home, backend="lancedb")
    with Engine.open(settings) as engine:
        assert isinstance(engine.backend, LanceDBBackend)
        space = space_name(engine.embedder)
        chunks = engine.backend.count()
        lance_table = lancedb.connect(settings.index_path).open_table(space)
        peer, peer_build_s = bm25s_peer(lance_table)
        configs = lancedb_configurations(engine.backend, lance_table, settings, peer)
        milvus = open_milvus(settings, space, chunks) if "milvus" in backends else None
        if milvus:
            configs += milvus_configurations(milvus, settings)
        retriever = engine.retriever()
        overall: dict[str, Measurement] = {}
        try:
            for path in args.benchmark:
                results = run_benchmark(path, args.limit, retriever, configs)
                print(f"### {path.stem}\n\n{table(results)}")
                for label, m in results.items():
                    overall.setdefault(label, Measurement()).extend(m)
        finally:
            if milvus:
                milvus.close()
        if len(args.benchmark) > 1:
            print(f"### All {len(args.benchmark)} benchmarks\n\n{table(overall)}")
        print(describe(engine, overall[HYBRID], peer_build_s))


if __name__ == "__main__":
    main()
