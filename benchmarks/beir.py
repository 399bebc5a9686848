"""Any BEIR-format retrieval set through the default pipeline, beside the published figures.

`run FOLDER`: ingests the folder's corpus.jsonl into its own data home (`--work`, kept between
runs: a second run ingests and embeds nothing), asks every query of qrels/<split>.tsv that has a
relevant document, and prints nDCG@10 and Recall@100 (`evidenceqa.bench.beir`) for BM25, dense
and the default hybrid search, then the published nDCG@10 figures given with `--published`
(which set and which paper is the user's business: nothing here is typed in). Example, for a
BEIR set downloaded elsewhere:

    .venv/bin/python benchmarks/beir.py run ~/beir/nfcorpus \
        --published BM25=0.325 --published "SPLADE++=0.347" --published BGE-base-en-v1.5=0.374

`export`: writes one of the shared benchmarks in BEIR format, so the same command runs on it: the
corpus is the benchmark's collection(s) of the library (one document each), the qrels its gold
documents (grade 1):

    .venv/bin/python benchmarks/beir.py export --benchmark ../shared/data/benchmarks/pubmedqa.jsonl \
        --library ../shared/data/library/pubmedqa_abstracts.jsonl --out reports/beir/pubmedqa
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from evidenceqa.answer.engine import Engine
from evidenceqa.bench.beir import (
    BeirSet,
    evaluate,
    library_rows,
    parse_published,
    ranked_documents,
    read_beir,
)
from evidenceqa.bench.retrieval import read_questions
from evidenceqa.chunking import ChunkingConfig
from evidenceqa.documents import Document
from evidenceqa.library.catalogue import Catalogue
from evidenceqa.library.ingest import Ingestor
from evidenceqa.loaders import load
from evidenceqa.retrieval.retriever import SearchMode
from evidenceqa.settings import load_settings
from evidenceqa.text import markdown

MODES: tuple[SearchMode, ...] = ("bm25", "dense", "hybrid")
DEPTH = 100  # Recall@100: documents ranked per query


def run(beir: BeirSet, work: Path, limit: int | None) -> list[list[str]]:
    work.mkdir(parents=True, exist_ok=True)
    library = work / "corpus-library.jsonl"
    text = "".join(json.dumps(row) + "\n" for row in library_rows(beir))
    if not library.exists() or library.read_text(encoding="utf-8") != text:
        library.write_text(text, encoding="utf-8")
    settings = load_settings(home=work / "home")
    with Catalogue(settings.catalogue_path) as catalogue:
        report = Ingestor(catalogue, ChunkingConfig.of(settings), settings.max_file_mb).ingest_file(library)
    if report.status == "failed":
        raise SystemExit(f"{library}: {report.errors[0]}")
    queries = dict(list(beir.queries.items())[:limit] if limit else beir.queries)
    subset = BeirSet(beir.name, beir.corpus, queries, {q: beir.qrels[q] for q in queries})
    rows = []
    with Engine.open(settings) as engine:
        engine.sync()
        retriever = engine.retriever()
        for mode in MODES:
            rankings = {
                qid: ranked_documents(
                    r.chunk.doc_id for r in retriever.search(text, k=2 * DEPTH, mode=mode).results
                )[:DEPTH]
                for qid, text in queries.items()
            }
            scores = evaluate(rankings, subset)
            label = "hybrid (default pipeline)" if mode == "hybrid" else mode
            rows.append([f"evidenceqa {label}", f"{scores.ndcg_10:.3f}", f"{scores.recall_100:.3f}"])
    return rows


def export(benchmark: Path, libraries: list[Path], out: Path) -> tuple[int, int]:
    """(documents, queries) written in BEIR format from a shared benchmark and its library."""
    questions = [q for q in read_questions(benchmark) if q.gold_doc_ids]
    collections = {q.meta.get("collection") for q in questions}
    wanted = collections - {None}
    docs = [
        d
        for path in libraries
        for d in load(path)
        if isinstance(d, Document) and (not wanted or d.collection in wanted)
    ]
    out.mkdir(parents=True, exist_ok=True)
    (out / "qrels").mkdir(exist_ok=True)
    with (out / "corpus.jsonl").open("w", encoding="utf-8") as stream:
        for d in docs:
            body = "\n".join(p.text for p in d.paragraphs())
            stream.write(json.dumps({"_id": d.doc_id, "title": d.title or "", "text": body}) + "\n")
    known = {d.doc_id for d in docs}
    kept = [q for q in questions if known.intersection(q.gold_doc_ids)]
    with (out / "queries.jsonl").open("w", encoding="utf-8") as stream:
        stream.writelines(json.dumps({"_id": q.query_id, "text": q.question}) + "\n" for q in kept)
    lines = [f"{q.query_id}\t{d}\t1\n" for q in kept for d in q.gold_doc_ids if d in known]
    (out / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(lines), encoding="utf-8")
    return len(docs), len(kept)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    commands = parser.add_subparsers(dest="command", required=True)
    run_args = commands.add_parser("run", help="score a BEIR folder")
    run_args.add_argument("folder", type=Path)
    run_args.add_argument("--split", default="test")
    run_args.add_argument(
        "--work", type=Path, default=None, help="data home folder (default .evidenceqa-beir/NAME)"
    )
    run_args.add_argument("--published", action="append", default=[], help="NAME=nDCG@10, repeatable")
    run_args.add_argument("--limit", type=int, default=None, help="only the first N queries")
    export_args = commands.add_parser("export", help="write a shared benchmark in BEIR format")
    export_args.add_argument("--benchmark", type=Path, required=True)
    export_args.add_argument("--library", type=Path, action="append", required=True)
    export_args.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    try:
        if args.command == "export":
            documents, queries = export(args.benchmark, args.library, args.out)
            print(f"{args.out}: {documents:,} documents, {queries:,} queries")
            return
        published = parse_published(args.published)
        beir = read_beir(args.folder, args.split)
    except (OSError, ValueError) as exc:
        parser.exit(2, f"error: {exc}\n")
    rows = run(beir, args.work or Path(".evidenceqa-beir") / beir.name, args.limit)
    rows += [[f"published: {name}", f"{value:.3f}", "–"] for name, value in published]
    count = min(len(beir.queries), args.limit or len(beir.queries))
    print(f"**{beir.name}** ({len(beir.corpus):,} documents, {count:,} queries with a relevant document)\n")
    print(markdown.table(["Retriever", "nDCG@10", "Recall@100"], rows, [False, True, True]), end="")


if __name__ == "__main__":
    main()
