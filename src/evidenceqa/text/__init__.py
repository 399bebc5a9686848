"""Text helpers every stage shares: BM25 tokens, sentence splitting, Markdown tables."""
