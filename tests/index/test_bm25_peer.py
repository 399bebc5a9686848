"""Our keyword search against a peer: bm25s scoring the same analysed terms with the same k1 and b.

Both engines' BM25 should rank the same chunks first; the engines differ only in IDF details.
"""

from __future__ import annotations

import bm25s
import pytest

from evidenceqa.index.base import Filters
from evidenceqa.text.tokens import analyze
from tests.index.corpus import RECORDS

QUERIES = [
    "chlorhexidine on mucous membranes",
    "shaving before surgery infection",
    "surgical masks droplet",
    "hand hygiene alcohol rub",
    "deep vein thrombosis prophylaxis",
]


@pytest.fixture(scope="module")
def peer() -> tuple[bm25s.BM25, list[str]]:
    content = [r for r in RECORDS if r.hierarchy_level != "document"]
    model = bm25s.BM25(k1=1.2, b=0.75, method="lucene")
    model.index([r.terms.split() for r in content], show_progress=False)
    return model, [r.chunk_id for r in content]


@pytest.mark.parametrize("query", QUERIES)
def test_top_hit_agrees_with_bm25s(populated, peer, query):
    model, ids = peer
    terms = analyze(query)
    ours = populated.search_keyword(terms, 5, Filters())
    docs, scores = model.retrieve([terms.split()], k=5, show_progress=False)
    theirs = [ids[i] for i, s in zip(docs[0], scores[0], strict=True) if s > 0]
    assert ours and theirs
    assert ours[0].chunk_id == theirs[0]
    assert {h.chunk_id for h in ours[:3]} & set(theirs[:3])
