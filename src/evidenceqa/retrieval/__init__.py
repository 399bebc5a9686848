"""Search: the question read (cleaning, time limits, query class), BM25 and dense fused, reranked."""
