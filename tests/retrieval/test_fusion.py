import numpy as np
import pytest

from evidenceqa.index.base import Hit
from evidenceqa.retrieval.fusion import Fusion, dense_weights, fuse


def _hits(*ids_scores):
    return [Hit(chunk_id=i, doc_id=i.split("#")[0], score=s) for i, s in ids_scores]


KEYWORD = _hits(("a#1", 12.0), ("b#1", 9.0), ("c#1", 3.0))
DENSE = _hits(("c#1", 0.9), ("d#1", 0.8), ("a#1", 0.7))


def test_plain_rrf_scores_by_ranks():
    fused = fuse({"keyword": KEYWORD, "dense": DENSE}, dense_weights(0.5), Fusion("rrf", rrf_k=60), k=10)
    scores = {h.chunk_id: h.score for h in fused}
    assert scores["a#1"] == pytest.approx(1 / 61 + 1 / 63)
    assert scores["c#1"] == pytest.approx(1 / 63 + 1 / 61)
    assert scores["b#1"] == pytest.approx(1 / 62)
    assert [h.chunk_id for h in fused][:2] == ["a#1", "c#1"]  # tie broken by best single rank, then id
    assert fused[0].ranks == {"keyword": 1, "dense": 3}


def test_alpha_moves_weight_between_retrievers():
    lists = {"keyword": KEYWORD, "dense": DENSE}
    for method in ("rrf", "weighted", "softmax"):
        dense_only = fuse(lists, dense_weights(1.0), Fusion(method), k=4)
        keyword_only = fuse(lists, dense_weights(0.0), Fusion(method), k=4)
        assert dense_only[0].chunk_id == "c#1"
        assert keyword_only[0].chunk_id == "a#1"


def test_weighted_fusion_normalises_each_list():
    fused = fuse({"keyword": KEYWORD, "dense": DENSE}, dense_weights(0.5), Fusion("weighted"), k=10)
    scores = {h.chunk_id: h.score for h in fused}
    assert scores["a#1"] == pytest.approx(0.5 * 1.0 + 0.5 * 0.0)
    assert scores["c#1"] == pytest.approx(0.5 * 0.0 + 0.5 * 1.0)
    assert scores["d#1"] == pytest.approx(0.5 * 0.5)
    assert scores["b#1"] == pytest.approx(0.5 * (9 - 3) / (12 - 3))


def test_k_limits_and_empty_lists():
    assert len(fuse({"keyword": KEYWORD, "dense": DENSE}, dense_weights(0.5), Fusion(), k=2)) == 2
    assert fuse({"keyword": [], "dense": []}, dense_weights(0.5), Fusion(), k=5) == []
    for method in ("weighted", "softmax"):
        only = fuse({"keyword": [], "dense": DENSE}, dense_weights(0.5), Fusion(method), k=5)
        assert [h.chunk_id for h in only] == ["c#1", "d#1", "a#1"]


def test_score_distributions_by_hand():
    """Each list a softmax of its scaled scores over its temperature; a chunk a list lacks gets 0 there."""
    fusion = Fusion("softmax", temperatures={"keyword": 2.0, "dense": 0.1})
    fused = fuse(
        {"keyword": KEYWORD, "dense": DENSE}, dense_weights(0.25), fusion, k=10, scales={"keyword": 3.0}
    )
    scores = {h.chunk_id: h.score for h in fused}
    keyword = np.exp(np.array([12.0, 9.0, 3.0]) / 6.0)
    dense = np.exp(np.array([0.9, 0.8, 0.7]) / 0.1)
    keyword, dense = keyword / keyword.sum(), dense / dense.sum()
    assert scores["a#1"] == pytest.approx(0.75 * keyword[0] + 0.25 * dense[2])
    assert scores["b#1"] == pytest.approx(0.75 * keyword[1])
    assert scores["d#1"] == pytest.approx(0.25 * dense[1])
    assert sum(scores.values()) == pytest.approx(1.0)  # two distributions, weights summing to one


def test_a_decisive_list_outweighs_a_flat_one_where_min_max_cannot_tell_them_apart():
    """BM25 barely separates its hits (a paraphrase); dense has a clear winner. Min-max stretches
    both to [0, 1], so at a lexical weight BM25's best wins; the distributions see which list is sure."""
    flat = _hits(("k#1", 10.2), ("k#2", 10.1), ("k#3", 10.0), ("d#1", 9.9))
    decisive = _hits(("d#1", 0.80), ("k#3", 0.50), ("k#2", 0.49), ("k#1", 0.48))
    lists = {"keyword": flat, "dense": decisive}
    weighted = fuse(lists, dense_weights(0.3), Fusion("weighted"), k=4)
    softmax = Fusion("softmax", temperatures={"keyword": 0.3, "dense": 0.08})
    distributions = fuse(lists, dense_weights(0.3), softmax, k=4, scales={"keyword": 10.0})
    assert weighted[0].chunk_id == "k#1"
    assert distributions[0].chunk_id == "d#1"
    # The other way round: a decisive BM25 match wins over a flat dense list at a dense weight.
    lexical = {"keyword": _hits(("k#1", 20.0), ("d#1", 8.0)), "dense": _hits(("d#1", 0.51), ("k#1", 0.50))}
    assert fuse(lexical, dense_weights(0.7), softmax, k=2, scales={"keyword": 10.0})[0].chunk_id == "k#1"


def test_scores_too_large_for_exp_are_fused_without_overflow():
    huge = _hits(("a#1", 1e6), ("b#1", 5e5))
    fused = fuse({"keyword": huge, "dense": DENSE}, dense_weights(0.5), Fusion("softmax"), k=5)
    assert all(np.isfinite(h.score) for h in fused) and fused[0].chunk_id == "a#1"
