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
    for method in ("rrf", "weighted"):
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
    only = fuse({"keyword": [], "dense": DENSE}, dense_weights(0.5), Fusion("weighted"), k=5)
    assert [h.chunk_id for h in only] == ["c#1", "d#1", "a#1"]
