import math

import pytest

from evidenceqa.bench.metrics import (
    FIRST_RANK_METRICS,
    Ranked,
    aggregate,
    aggregate_first_ranks,
    gold_positions,
    score,
)


def _results(*pairs):
    return [Ranked(doc_id=d, text=t) for d, t in pairs]


RESULTS = _results(
    ("a", "Unrelated text."),
    ("gold", "The  HCoV-OC43 species\nwas most common."),
    ("b", "hcov-oc43 appears here too"),
    ("gold", "Another gold chunk."),
)


def test_document_level_first_rank_and_ranks():
    positions = gold_positions(RESULTS, ["gold"], [], "document")
    assert positions == [(2, "gold"), (4, "gold")]
    s = score(positions, n_gold=1)
    assert (s.first, s.rr, s.p1, s.p3, s.p5, s.recall) == (2, 0.5, 0.0, 1.0, 1.0, 1.0)
    assert s.ndcg == pytest.approx(1 / math.log2(3))


def test_passage_level_matches_normalised_text_in_any_document():
    positions = gold_positions(RESULTS, ["gold"], ["HCoV-OC43 species was"], "passage")
    assert positions == [(2, "hcov-oc43 species was")]
    positions = gold_positions(RESULTS, [], ["HCoV-OC43"], "passage")
    assert [rank for rank, _ in positions] == [2, 3]


def test_nothing_found_scores_zero():
    s = score([], n_gold=2)
    assert (s.first, s.rr, s.p5, s.recall, s.ndcg) == (None, 0.0, 0.0, 0.0, 0.0)


def test_beyond_the_cutoff_counts_for_first_rank_only():
    s = score([(11, "x")], n_gold=1)
    assert (s.first, s.rr, s.p5, s.recall, s.ndcg) == (11, 0.0, 0.0, 0.0, 0.0)


def test_recall_and_ndcg_with_two_gold_documents():
    s = score([(1, "x"), (3, "y"), (4, "x")], n_gold=2)
    assert s.recall == 1.0
    assert s.ndcg == pytest.approx((1 + 1 / math.log2(4)) / (1 + 1 / math.log2(3)))


def test_aggregate_means():
    rows = aggregate([score([(1, "x")], 1), score([], 1)])
    assert rows["MRR@10"] == 0.5 and rows["Success@1"] == 0.5 and rows["nDCG@10"] == 0.5
    assert aggregate([])["MRR@10"] == 0.0


def test_first_ranks_alone_give_the_same_mrr_and_precision_as_full_scores():
    positions = [[(1, "x")], [(3, "x"), (4, "y")], [(7, "x")], [(12, "x")], []]
    full = aggregate([score(p, n_gold=2) for p in positions])
    from_firsts = aggregate_first_ranks([p[0][0] if p else None for p in positions])
    assert list(from_firsts) == list(FIRST_RANK_METRICS)
    assert from_firsts == pytest.approx({name: full[name] for name in FIRST_RANK_METRICS})
    assert from_firsts["MRR@10"] == pytest.approx((1 + 1 / 3 + 1 / 7) / 5)
    assert aggregate_first_ranks([]) == dict.fromkeys(FIRST_RANK_METRICS, 0.0)
