"""BM25 hard negatives, scored in memory, checked against bm25s."""

from __future__ import annotations

import bm25s
import numpy as np

from evidenceqa.adapt.negatives import BM25Pool, Passage, hard_negative
from evidenceqa.text.tokens import terms

TEXTS = [
    "tranexamic acid reduces blood loss in hip arthroplasty",
    "tranexamic acid and thrombosis risk after knee arthroplasty",
    "chlorhexidine skin preparation before surgery reduces infection",
    "hair removal by clipping rather than shaving before surgery",
    "blood transfusion thresholds in cardiac surgery",
]


def _pool() -> BM25Pool:
    return BM25Pool([Passage(t, f"d{i}", f"title {i}") for i, t in enumerate(TEXTS)])


def test_scores_agree_with_bm25s() -> None:
    pool = _pool()
    retriever = bm25s.BM25(k1=1.2, b=0.75, method="lucene")
    retriever.index([terms(t) for t in TEXTS])
    query = "tranexamic acid blood loss arthroplasty"
    ours = (pool._query_matrix([query]) @ pool.weights.T).toarray()[0]
    theirs = retriever.get_scores(terms(query))
    assert np.allclose(ours, theirs, rtol=1e-4)


def test_top_ranks_best_first_and_omits_passages_without_a_shared_term() -> None:
    (ranked,) = _pool().top(["tranexamic acid blood loss"], depth=5)
    assert ranked[:2] == [0, 1] and 2 not in ranked and 3 not in ranked


def test_hard_negative_skips_the_same_document_and_title() -> None:
    pool = BM25Pool([Passage("tranexamic acid blood loss", "d0", "txa"), Passage("tranexamic acid dosing", "d1", "txa"),
                     Passage("tranexamic acid thrombosis", "d2", "other")])  # fmt: skip
    (ranked,) = pool.top(["tranexamic acid"])
    assert hard_negative(pool, ranked, pool.passages[0]) == "tranexamic acid thrombosis"
    assert hard_negative(pool, [0, 1], pool.passages[0]) is None
