"""Balancing by kind and batching without two pairs of one document."""

from __future__ import annotations

import random

from evidenceqa.adapt.dataset import Triplet, balance, batches
from evidenceqa.adapt.pairs import Pair


def test_balance_shares_evenly_and_passes_a_small_kinds_share_on() -> None:
    pairs = [Pair("heading", f"h{i}", "p", f"d{i}") for i in range(2)]
    pairs += [Pair("abstract", f"a{i}", "p", f"d{i}") for i in range(50)]
    pairs += [Pair("question", f"q{i}", "p", f"d{i}") for i in range(50)]
    chosen = balance(pairs, 30, random.Random(1))
    kinds = [p.kind for p in chosen]
    assert len(chosen) == 30
    assert kinds.count("heading") == 2 and kinds.count("abstract") == 14 and kinds.count("question") == 14


def test_batches_never_hold_two_triplets_of_one_document() -> None:
    triplets = [Triplet("question", f"q{i}", "p", "n", f"d{i % 5}") for i in range(40)]
    made = batches(triplets, 4, random.Random(2))
    assert sorted(t.query for b in made for t in b) == sorted(t.query for t in triplets)
    for batch in made:
        assert len(batch) <= 4
        assert len({t.doc_id for t in batch}) == len(batch)
