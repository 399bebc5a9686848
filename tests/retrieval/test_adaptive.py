"""Query-adaptive fusion: the signals, the packaged model, and the retriever with alpha = "adaptive"."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import pytest

from evidenceqa.answer.engine import Engine
from evidenceqa.index.base import Hit
from evidenceqa.retrieval.adaptive import SIGNALS, AdaptiveAlpha, idf, idf_mass, query_signals
from evidenceqa.retrieval.fusion import dense_weights, fuse
from evidenceqa.settings import Settings
from tests.cli.test_cli import MODELS, run
from tests.conftest import SAMPLE


def _hits(*rows: tuple[str, str, float]) -> list[Hit]:
    return [Hit(chunk_id, doc_id, score) for chunk_id, doc_id, score in rows]


def test_signals_of_two_lists_by_hand() -> None:
    keyword = _hits(("k1", "A", 12.0), ("k2", "B", 6.0), *((f"kx{i}", f"X{i}", 3.0) for i in range(8)))
    dense = _hits(("d1", "B", 0.8), ("k1", "A", 0.7), *((f"dx{i}", f"Y{i}", 0.5) for i in range(8)))
    df = (1000, {"rare": 1, "common": 999})
    top_terms = {"k1": {"rare", "common"}, "d1": {"common"}}
    signals = query_signals({"keyword": keyword, "dense": dense}, ["rare", "common"], df, top_terms)
    rare, common = idf(1, 1000), idf(999, 1000)
    assert set(signals) == set(SIGNALS)
    assert signals["dense_top"] == 0.8 and signals["dense_margin"] == pytest.approx(0.3)
    assert signals["keyword_margin"] == pytest.approx(math.log(12 / 3))
    assert signals["keyword_gap12"] == pytest.approx(math.log(2))
    assert signals["keyword_strength"] == pytest.approx(12 / (rare + common))
    # BM25's best chunk holds both terms, dense's best only the common one.
    assert signals["coverage_gap"] == pytest.approx(1 - common / (rare + common))
    assert signals["agreement"] == 1.0  # each best document is in the other's top ten
    assert idf_mass(["rare", "common", "rare"], df) == pytest.approx(rare + common)  # each term once


def test_signals_without_keyword_hits_are_defined() -> None:
    dense = _hits(("d1", "B", 0.6))
    signals = query_signals({"keyword": [], "dense": dense}, ["zzz"], (10, {}), {"d1": set()})
    assert signals["keyword_strength"] == signals["keyword_margin"] == signals["agreement"] == 0.0
    assert signals["dense_margin"] == 0.0 and signals["coverage_gap"] == 0.0


def _profile(**changes: float) -> dict[str, float]:
    """Signals at the packaged model's mean, with some changed (in standard deviations)."""
    model = AdaptiveAlpha.load()
    values = dict(zip(model.signals, model.mean, strict=True))
    scales = dict(zip(model.signals, model.scale, strict=True))
    return {name: values[name] + changes.get(name, 0.0) * scales[name] for name in model.signals}


def test_the_packaged_model_leans_lexical_on_rare_matched_terms_and_dense_on_a_paraphrase() -> None:
    model = AdaptiveAlpha.load()
    assert model.fitted_on, "the packaged model records what it was fitted on"
    # Rare terms, all found in BM25's best chunk, which stands out; dense's best holds fewer of them.
    lexical = _profile(keyword_strength=1.5, coverage_gap=1.5, keyword_gap12=1.0, keyword_margin=1.0)
    # Few library terms: BM25 matched little of the question, and no better than dense's best.
    paraphrase = _profile(keyword_strength=-1.5, coverage_gap=-1.0, keyword_gap12=-0.5, keyword_margin=-0.5)
    assert model.alpha(lexical) < model.alpha(_profile()) < model.alpha(paraphrase)
    # A confident dense match leans dense, whatever BM25 says.
    assert model.alpha(_profile(dense_top=2.0, dense_margin=1.0)) > model.alpha(_profile())


def test_one_freak_signal_cannot_decide_alone() -> None:
    model = AdaptiveAlpha.load()
    assert model.alpha(_profile(keyword_gap12=1000.0)) == model.alpha(_profile(keyword_gap12=3.0))


def test_a_model_file_is_checked(tmp_path: Path) -> None:
    path = tmp_path / "model.json"
    good = AdaptiveAlpha.load().to_dict()
    path.write_text(json.dumps({**good, "signals": ["dense_top", "moon_phase"], "mean": [0, 0], "scale": [1, 1],
                                "weights": [1, 1]}))  # fmt: skip
    with pytest.raises(ValueError, match="unknown signals \\['moon_phase'\\]"):
        AdaptiveAlpha.load(path)
    path.write_text(json.dumps({**good, "scale": [0.0] * len(good["scale"])}))
    with pytest.raises(ValueError, match="scale must be positive"):
        AdaptiveAlpha.load(path)
    with pytest.raises(ValueError, match=r"fit one with benchmarks/fusion_grid\.py"):
        AdaptiveAlpha.load(tmp_path / "missing.json")
    path.write_text(json.dumps({**good, "fusion": "loudest"}))
    with pytest.raises(ValueError, match="unknown fusion 'loudest'"):
        AdaptiveAlpha.load(path)
    path.write_text(json.dumps({**good, "temperatures": {"keyword": 0.2, "dense": 0.0}}))
    with pytest.raises(ValueError, match="temperature must be positive"):
        AdaptiveAlpha.load(path)


def test_the_packaged_model_fuses_score_distributions_and_round_trips(tmp_path: Path) -> None:
    model = AdaptiveAlpha.load()
    assert model.fusion == "softmax" and set(model.temperatures) == {"keyword", "dense"}
    fusion = model.fusion_of(0.4, depth=50)
    assert (fusion.method, fusion.alpha, fusion.depth) == ("softmax", 0.4, 50)
    assert fusion.temperatures == model.temperatures
    model.write(tmp_path / "model.json")
    assert AdaptiveAlpha.load(tmp_path / "model.json") == model
    # A refitted model is another model to the answer cache; a reloaded one is the same.
    assert AdaptiveAlpha.load(tmp_path / "model.json").fingerprint() == model.fingerprint()
    assert replace(model, intercept=model.intercept + 0.1).fingerprint() != model.fingerprint()


def test_a_model_written_before_score_distributions_still_means_weighted_fusion(tmp_path: Path) -> None:
    older = {k: v for k, v in AdaptiveAlpha.load().to_dict().items() if k not in ("fusion", "temperatures")}
    (tmp_path / "model.json").write_text(json.dumps(older))
    assert AdaptiveAlpha.load(tmp_path / "model.json").fusion_of(0.3, depth=100).method == "weighted"


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("home")
    assert run(home, "ingest", str(SAMPLE / "library")).returncode == 0
    return home


def test_adaptive_search_weighs_each_question_and_says_how(home: Path) -> None:
    settings = Settings(home=home, models_dir=MODELS)
    with Engine.open(settings) as engine:  # adaptive is the default
        retriever = engine.retriever()
        lexical = retriever.search("tranexamic acid total hip arthroplasty blood loss transfusion")
        lay = retriever.search("Is there a medicine that stops me bleeding so much when they replace my hip?")
        keyword_only = retriever.search("tranexamic acid", mode="bm25")
    assert set(lexical.signals) == set(SIGNALS) and lexical.alpha is not None and lay.alpha is not None
    # Each question's own weight, as the packaged model maps its signals (which way each signal
    # leans is checked on the model above; a library of a dozen documents says little of it).
    model = AdaptiveAlpha.load()
    assert lexical.alpha == pytest.approx(model.alpha(lexical.signals))
    assert lay.alpha == pytest.approx(model.alpha(lay.signals)) and lay.alpha != pytest.approx(lexical.alpha)
    assert keyword_only.alpha is None and keyword_only.signals == {}
    with Engine.open(settings.model_copy(update={"alpha": "0.3"})) as engine:  # a fixed weight: no signals
        fixed = engine.retriever().search("tranexamic acid total hip arthroplasty blood loss transfusion")
    assert fixed.alpha == 0.3 and fixed.signals == {}


def test_adaptive_search_ranks_as_its_model_fuses_the_two_lists(home: Path) -> None:
    """The ranking is the model's own fusion of the BM25 and dense lists at the question's weight,
    BM25 scaled by the question's idf mass, not the settings' fusion."""
    question = "Does shaving before spinal surgery raise the infection rate?"
    settings = Settings(home=home, models_dir=MODELS).model_copy(
        update={"alpha": "adaptive", "fusion": "rrf"}
    )
    with Engine.open(settings) as engine:
        retriever = engine.retriever()
        response = retriever.search(question, k=5)
        depth = settings.fusion_depth
        lists = {
            name: [
                Hit(r.chunk.chunk_id, r.chunk.doc_id, r.score)
                for r in retriever.search(question, k=depth, mode=mode).results
            ]
            for name, mode in (("keyword", "bm25"), ("dense", "dense"))
        }
        _, scales = retriever.adaptive_inputs(lists, response.keyword_terms)
    assert response.alpha is not None and scales["keyword"] > 0
    model = AdaptiveAlpha.load()
    expected = fuse(lists, dense_weights(response.alpha), model.fusion_of(response.alpha, depth), 5, scales)
    assert [r.chunk.chunk_id for r in response.results] == [h.chunk_id for h in expected]
    assert [r.score for r in response.results] == pytest.approx([h.score for h in expected])
