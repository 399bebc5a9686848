from evidenceqa.bench.plots import write_plots
from tests.bench.synthetic import grid_result

PNG = b"\x89PNG\r\n\x1a\n"


def test_every_plot_is_a_png_and_named_for_what_it_shows(tmp_path):
    plots = write_plots(grid_result(), tmp_path)
    assert plots.mrr == {"mq": tmp_path / "mrr-mq.png", "small": tmp_path / "mrr-small.png"}
    assert plots.crossover == tmp_path / "crossover.png"
    # "small" has 5 questions of one type, and "collection" has one value: no slice plot for either.
    assert list(plots.slices) == [("mq", "question_type")]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in plots.paths())
    for path in plots.paths():
        assert path.read_bytes().startswith(PNG), path


def test_the_same_figures_give_the_same_bytes(tmp_path):
    first = write_plots(grid_result(), tmp_path / "a")
    again = write_plots(grid_result(), tmp_path / "b")
    for a, b in zip(first.paths(), again.paths(), strict=True):
        assert a.read_bytes() == b.read_bytes(), a.name


def test_crossover_needs_two_embedders_and_an_embedding_mode(tmp_path):
    assert write_plots(grid_result(embedders=("minilm-onnx",)), tmp_path / "one").crossover is None
    assert write_plots(grid_result(modes=("bm25", "hybrid-rrf")), tmp_path / "bm25").crossover is None
    assert write_plots(grid_result(modes=("bm25", "dense")), tmp_path / "dense").crossover is not None
