"""The grid on a tiny real library: real ingest, LanceDB and Milvus Lite, the MiniLM ONNX embedder."""

import json
import os
import sqlite3
import subprocess
import sys
from itertools import product
from pathlib import Path

import pytest

from evidenceqa.bench import grid
from evidenceqa.embeddings import minilm_path
from evidenceqa.settings import load_settings
from tests.conftest import write_library

DOCS = [
    ("chg", 2003, "Chlorhexidine gluconate should not be used on mucous membranes such as the eyes."),
    ("gloves", 2012, "Double gloving reduces glove perforation during orthopaedic surgery."),
    ("shave", 2016, "Shaving the incision site increased infection after spinal surgery."),
    ("txa", None, "Tranexamic acid reduces blood loss in total knee arthroplasty."),
]
# Each answerable question shares rare words with its gold document alone, so BM25 ranks it first;
# the last one's gold document is not in the library, so nothing can find it.
QUESTIONS = [
    ("q1", "chlorhexidine mucous membranes", ["chg"], ["should not be used on mucous membranes"],
     {"question_type": "safety", "periop_surgical": True}),
    ("q2", "glove perforation orthopaedic", ["gloves"], [], {"question_type": "safety"}),
    ("q3", "tranexamic acid knee arthroplasty", ["txa"], [], {"question_type": "treatment"}),
    ("q4", "robotic cholecystectomy outcomes", ["absent"], [], {"question_type": "treatment"}),
]  # fmt: skip
MODES = ["bm25", "dense", "hybrid-rrf", "hybrid-alpha"]
PNG = b"\x89PNG\r\n\x1a\n"


def write_benchmark(path: Path) -> Path:
    rows = [
        {"query_id": q, "question": text, "gold_doc_ids": gold, "gold_passages": passages, "meta": meta}
        for q, text, gold, passages, meta in QUESTIONS
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("inputs")
    return write_library(folder / "lib.jsonl", DOCS), write_benchmark(folder / "tiny.jsonl")


@pytest.fixture(scope="module")
def spec(inputs, tmp_path_factory) -> grid.GridSpec:
    axes = {
        "chunking": ["hierarchical-paragraphs", "fixed-size"],
        "embedder": ["minilm-onnx"],
        "mode": MODES,
        "backend": ["lancedb", "milvus"],
    }
    return grid.GridSpec([inputs[0]], [inputs[1]], axes, tmp_path_factory.mktemp("work"))


@pytest.fixture(scope="module")
def first_run(spec, models_dir) -> grid.GridResult:
    return grid.run(spec, load_settings(models_dir=models_dir))


def _cache_rows(work: Path) -> int:
    with sqlite3.connect(work / "embeddings.sqlite3") as db:
        return db.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0]


def test_every_cell_is_run_once(first_run, spec):
    cells = {(c.cell.chunking, c.cell.mode, c.cell.backend, c.benchmark) for c in first_run.cells}
    expected = set(product(spec.axes["chunking"], MODES, spec.axes["backend"], ["tiny"]))
    assert cells == expected and len(first_run.cells) == len(expected)
    assert {(c.model_id, c.dim, c.questions) for c in first_run.cells} == {
        ("minilm-onnx-int8:all-MiniLM-L6-v2", 384, 4)
    }


@pytest.mark.parametrize("backend", ["lancedb", "milvus"])
@pytest.mark.parametrize("chunking", ["hierarchical-paragraphs", "fixed-size"])
def test_bm25_figures_match_the_known_ranks(first_run, chunking, backend):
    result = first_run.find(grid.Cell(chunking, "minilm-onnx", "bm25", backend), "tiny")
    # Three questions found at rank 1, one never: 3/4 at the document level.
    assert result.metrics["document"] == pytest.approx(
        {
            "MRR@10": 0.75,
            "Success@1": 0.75,
            "Success@3": 0.75,
            "Success@5": 0.75,
            "Recall@10": 0.75,
            "nDCG@10": 0.75,
        }
    )
    # Only q1 has a gold passage, and its chunk is first.
    assert result.metrics["passage"]["MRR@10"] == 1.0
    assert result.latency_ms["p95"] >= result.latency_ms["p50"] > 0


def test_slices_count_questions(first_run):
    slices = first_run.cells[0].slices
    assert {v: s.questions for v, s in slices["question_type"].items()} == {"safety": 2, "treatment": 2}
    assert {v: s.questions for v, s in slices["periop_surgical"].items()} == {"True": 1}
    assert {v: s.questions for v, s in slices["year"].items()} == {
        "2000–2004": 1,
        "2010–2014": 1,
        "unknown": 2,
    }
    assert "collection" not in slices
    bm25 = first_run.find(grid.Cell("fixed-size", "minilm-onnx", "bm25", "lancedb"), "tiny")
    assert bm25.slices["question_type"]["treatment"].metrics["document"]["MRR@10"] == 0.5


def test_each_strategy_has_its_home_and_chunk_figures(first_run, spec):
    homes = {h.chunking: h for h in first_run.homes}
    # One paragraph per document: the overview plus one content chunk, or one fixed window.
    assert (homes["hierarchical-paragraphs"].chunks, homes["fixed-size"].chunks) == (8, 4)
    assert all(h.documents == 4 and h.context_loss == 0.0 for h in homes.values())
    assert (spec.work / "embeddings.sqlite3").is_file()  # one cache, shared by the homes
    for strategy in homes:
        assert (spec.work / strategy / "catalogue.sqlite3").is_file()
        assert not (spec.work / strategy / "embeddings.sqlite3").exists()
    assert {b.chunks_indexed for b in first_run.builds if b.chunking == "fixed-size"} == {4}


def test_a_second_run_embeds_nothing(first_run, spec, models_dir):
    rows = _cache_rows(spec.work)
    again = grid.run(spec, load_settings(models_dir=models_dir))
    assert [b.chunks_indexed for b in again.builds] == [0, 0, 0, 0]
    assert _cache_rows(spec.work) == rows
    key = [(c.cell, c.metrics) for c in first_run.cells]
    assert [(c.cell, c.metrics) for c in again.cells] == key


def test_bad_axis_values_are_named_with_the_allowed_ones():
    with pytest.raises(grid.GridError, match=r"unknown mode 'sparse'; choose from: bm25, dense, hybrid-rrf"):
        grid.parse_axis("mode", "bm25,sparse")
    with pytest.raises(grid.GridError, match="empty value"):
        grid.parse_axis("backend", "lancedb,")
    assert grid.parse_axis("chunking", " section , section,fixed-size") == ["section", "fixed-size"]


def test_a_milvus_server_cannot_hold_two_strategies(spec):
    with pytest.raises(grid.GridError, match="Milvus server"):
        spec.check(load_settings(milvus_uri="http://localhost:19530"))


# The command as a user runs it.


def cli(models_dir: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "evidenceqa", "bench", "grid", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "200", "EVIDENCEQA_MODELS_DIR": str(models_dir)},
        timeout=600,
    )


def test_cli_writes_report_json_and_plots_with_linked_images(inputs, tmp_path, models_dir):
    library, benchmark = inputs
    out = tmp_path / "out"
    result = cli(
        models_dir, "--library", str(library), "--benchmark", str(benchmark), "--mode", "bm25,dense",
        "--work", str(tmp_path / "work"), "--out", str(out), "--link-base", "figures/grid", "--markdown",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "### tiny (4 questions)" in result.stdout
    assert "| hierarchical-paragraphs | minilm-onnx | 384 | bm25 | lancedb | 0.750 | 0.750 |" in result.stdout
    assert "![tiny: MRR@10 per cell](figures/grid/mrr-tiny.png)" in result.stdout
    assert result.stdout == (out / "grid.md").read_text()
    assert [c["mode"] for c in json.loads((out / "grid.json").read_text())["cells"]] == ["bm25", "dense"]
    assert (out / "mrr-tiny.png").read_bytes().startswith(PNG)
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        (
            "--mode",
            "bm25,sparse",
            "unknown mode 'sparse'; choose from: bm25, dense, hybrid-rrf, hybrid-alpha",
        ),
        ("--chunking", "sentences", "unknown chunking 'sentences'; choose from: fixed-size, section"),
        ("--backend", "faiss", "unknown backend 'faiss'; choose from: lancedb, milvus"),
    ],
)
def test_cli_unknown_values_are_a_clear_error(inputs, tmp_path, models_dir, option, value, message):
    library, benchmark = inputs
    result = cli(models_dir, "--library", str(library), "--benchmark", str(benchmark), option, value,
                 "--work", str(tmp_path / "work"))  # fmt: skip
    assert result.returncode == 2
    assert message in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "work").exists()  # nothing was done


def test_cli_missing_benchmark_is_a_clear_error(inputs, tmp_path, models_dir):
    missing = tmp_path / "nope.jsonl"
    result = cli(models_dir, "--library", str(inputs[0]), "--benchmark", str(missing),
                 "--work", str(tmp_path / "work"))  # fmt: skip
    assert result.returncode == 2
    assert "nope.jsonl" in result.stderr and "Traceback" not in result.stderr


def test_a_scope_limits_a_benchmark_to_its_collections(inputs, tmp_path, models_dir):
    axes = {"chunking": ["hierarchical-paragraphs"], "embedder": ["minilm-onnx"], "mode": ["bm25"],
            "backend": ["lancedb"]}  # fmt: skip
    settings = load_settings(models_dir=models_dir)

    def mrr(scopes: dict[str, tuple[str, ...]]) -> float:
        spec = grid.GridSpec([inputs[0]], [inputs[1]], axes, tmp_path / "work", scopes=scopes)
        (cell,) = grid.run(spec, settings).cells
        return cell.value("document")

    assert mrr({}) == mrr({"tiny": ("default",)}) == 0.75  # three of four found at rank 1
    assert mrr({"tiny": ("elsewhere",)}) == 0.0  # no gold document lives there


def test_bm25_is_measured_once_per_home_whatever_the_embedder(inputs, tmp_path, models_dir):
    second = f"onnx:{minilm_path()}"  # the same model under another name: a second vector space
    axes = {"chunking": ["hierarchical-paragraphs"], "embedder": ["minilm-onnx", second],
            "mode": ["bm25", "dense"], "backend": ["lancedb"]}  # fmt: skip
    spec = grid.GridSpec([inputs[0]], [inputs[1]], axes, tmp_path / "work")
    cells = {
        (c.cell.embedder, c.cell.mode): c for c in grid.run(spec, load_settings(models_dir=models_dir)).cells
    }
    first, copy = cells[("minilm-onnx", "bm25")], cells[(second, "bm25")]
    assert copy.latency_ms is first.latency_ms  # taken over, not searched again
    assert copy.model_id == cells[(second, "dense")].model_id != first.model_id


def test_scopes_are_parsed_and_checked():
    assert grid.parse_scopes(["nq-open=nq-wikipedia", "pubmedqa=pubmedqa, medquad"]) == {
        "nq-open": ("nq-wikipedia",),
        "pubmedqa": ("pubmedqa", "medquad"),
    }
    with pytest.raises(grid.GridError, match="expected BENCHMARK=COLLECTION"):
        grid.parse_scopes(["nq-open"])
    spec = grid.GridSpec([], [Path("tiny.jsonl")], {}, Path("w"), scopes={"other": ("x",)})
    with pytest.raises(grid.GridError, match="--scope names no benchmark given: other"):
        spec.check(load_settings())
