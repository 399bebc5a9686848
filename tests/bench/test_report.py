import json
from pathlib import Path

from evidenceqa.bench.plots import write_plots
from evidenceqa.bench.report import summary, to_json, to_markdown, write
from tests.bench.synthetic import grid_result


def _markdown(result, tmp_path: Path, link_base: str) -> str:
    return to_markdown(result, write_plots(result, tmp_path), link_base)


def test_image_links_start_with_the_link_base(tmp_path):
    text = _markdown(grid_result(), tmp_path, "figures/grid/")
    assert "![mq: MRR@10 per cell](figures/grid/mrr-mq.png)" in text
    assert "](figures/grid/crossover.png)" in text
    assert "](figures/grid/slice-mq-question_type.png)" in text
    assert "](mrr-mq.png)" in _markdown(grid_result(), tmp_path, "")


def test_one_row_per_cell_with_dimensions_and_both_levels_of_metrics(tmp_path):
    text = _markdown(grid_result(), tmp_path, "x")
    assert text.startswith(
        "6 cells: chunking (hierarchical-paragraphs) × embedder (minilm-onnx, onnx:/models/pubmedbert)"
    )
    section = text.split("### mq (25 questions)")[1].split("###")[0]
    rows = [line for line in section.splitlines() if line.startswith("| hierarchical")]
    assert len(rows) == 6  # 2 embedders × 3 modes
    assert "| Chunking | Embedder | Dimensions | Mode | Backend | Doc MRR@10 | Doc Success@1 |" in section
    assert "| onnx:/models/pubmedbert | 768 | dense | lancedb |" in section
    assert "Passage" not in section  # no gold passages in this benchmark: no passage columns


def test_slice_tables_only_where_two_values_have_ten_questions(tmp_path):
    text = _markdown(grid_result(), tmp_path, "x")
    assert "### mq by question type" in text
    assert "| symptoms (12) | treatment (11) |" in text and "rare" not in text
    assert "by collection" not in text and "### small by" not in text


def test_chunking_table_only_with_two_strategies(tmp_path):
    assert "### Chunking strategies" not in _markdown(grid_result(), tmp_path / "one", "x")
    text = _markdown(grid_result(chunking=("fixed-size", "section")), tmp_path / "two", "x")
    table = text.split("### Chunking strategies")[1].split("###")[0]
    assert "MRR@10 with minilm-onnx · hybrid-alpha · lancedb." in table
    assert "| Strategy | Chunks | Avg words | Context loss | mq doc MRR@10 | mq passage MRR@10 |" in table
    assert "| fixed-size | 20 | 100 | 25.0% |" in table and "| section | 21 | 99 | 25.0% |" in table


def test_json_holds_every_cell_with_its_figures(tmp_path):
    result = grid_result()
    plots = write_plots(result, tmp_path)
    json_path, md_path = write(result, plots, tmp_path, "x")
    data = json.loads(json_path.read_text())
    assert data == json.loads(json.dumps(to_json(result)))
    assert data["grid"]["embedder"] == ["minilm-onnx", "onnx:/models/pubmedbert"]
    assert len(data["cells"]) == 12
    cell = data["cells"][0]
    assert {
        k: cell[k] for k in ("chunking", "embedder", "mode", "backend", "benchmark", "dim", "questions")
    } == {
        "chunking": "hierarchical-paragraphs",
        "embedder": "minilm-onnx",
        "mode": "bm25",
        "backend": "lancedb",
        "benchmark": "mq",
        "dim": 384,
        "questions": 25,
    }
    assert cell["latency_ms"] == {"p50": 3.0, "p95": 9.0}
    assert cell["slices"]["question_type"]["rare"]["questions"] == 2
    assert md_path.read_text() == to_markdown(result, plots, "x")


def test_terminal_summary_has_a_row_per_cell():
    headers, rows = summary(grid_result(), "small")
    assert headers[:4] == ["Chunking", "Embedder", "Mode", "Backend"]
    assert len(rows) == 6 and rows[0][-2:] == ["3.0", "9.0"]


def test_crossover_table_puts_each_embedder_and_mode_on_every_benchmark_side_by_side(tmp_path):
    result = grid_result()
    section = _markdown(result, tmp_path, "x").split("### Embedders across benchmarks")[1].split("###")[0]
    headers = (
        "| Embedder | Dimensions | Mode | " + " | ".join(f"{b} doc MRR@10" for b in result.benchmarks) + " |"
    )
    assert headers in section
    rows = [line for line in section.splitlines() if line.startswith(("| minilm", "| onnx"))]
    assert len(rows) == 6
    cell = next(
        c
        for c in result.of(result.benchmarks[0])
        if c.cell.embedder.startswith("onnx") and c.cell.mode == "dense"
    )
    assert f"| onnx:/models/pubmedbert | 768 | dense | {cell.value('document'):.3f} |" in section
