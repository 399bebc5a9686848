"""Hard negatives mined by BM25: the passage keyword search ranks highest that is not the answer.

In-batch negatives are random passages, easy to tell apart; a passage that shares the query's
words but comes from another document teaches the model what lexical overlap alone misses. The
pool is scored in memory (one sparse matrix product per batch of queries), far faster than a
search per query.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import sparse

from evidenceqa.text.tokens import terms

K1 = 1.2
B = 0.75
DEPTH = 10  # candidates looked at per query; a negative is the best of them that qualifies
_QUERY_BATCH = 512


@dataclass(frozen=True)
class Passage:
    text: str
    doc_id: str
    title: str  # documents with one title (a page in two MedQuAD sources) are not negatives for each other


class BM25Pool:
    def __init__(self, passages: Sequence[Passage]) -> None:
        self.passages = list(passages)
        self.vocabulary: dict[str, int] = {}
        rows, cols, counts = [], [], []
        for row, passage in enumerate(self.passages):
            for term, count in _counts(passage.text).items():
                rows.append(row)
                cols.append(self.vocabulary.setdefault(term, len(self.vocabulary)))
                counts.append(count)
        tf = sparse.csr_matrix((counts, (rows, cols)), shape=(len(self.passages), len(self.vocabulary)))
        self.weights = _bm25_weights(tf.astype(np.float32))

    def top(self, queries: Sequence[str], depth: int = DEPTH) -> list[list[int]]:
        """For each query, the indices of its `depth` best passages, best first."""
        found: list[list[int]] = []
        for start in range(0, len(queries), _QUERY_BATCH):
            scores = (self._query_matrix(queries[start : start + _QUERY_BATCH]) @ self.weights.T).toarray()
            for row in scores:
                best = np.argpartition(-row, min(depth, len(row) - 1))[:depth]
                found.append([int(i) for i in best[np.argsort(-row[best])] if row[i] > 0])
        return found

    def _query_matrix(self, queries: Sequence[str]) -> sparse.csr_matrix:
        rows, cols = [], []
        for row, query in enumerate(queries):
            for term in set(terms(query)):
                if term in self.vocabulary:
                    rows.append(row)
                    cols.append(self.vocabulary[term])
        shape = (len(queries), len(self.vocabulary))
        return sparse.csr_matrix((np.ones(len(rows), dtype=np.float32), (rows, cols)), shape=shape)


def hard_negative(pool: BM25Pool, candidates: list[int], positive: Passage) -> str | None:
    """The best-ranked candidate from another document (and title) whose text is not the positive's."""
    for index in candidates:
        passage = pool.passages[index]
        if (
            passage.doc_id != positive.doc_id
            and passage.title != positive.title
            and passage.text != positive.text
        ):
            return passage.text
    return None


def _counts(text: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for term in terms(text):
        counts[term] = counts.get(term, 0) + 1
    return counts


def _bm25_weights(tf: sparse.csr_matrix) -> sparse.csr_matrix:
    """Each (passage, term) entry's BM25 contribution (Lucene's form), so a query's score is a sum."""
    n = tf.shape[0]
    df = np.bincount(tf.indices, minlength=tf.shape[1])
    idf = np.log(1 + (n - df + 0.5) / (df + 0.5)).astype(np.float32)
    lengths = np.asarray(tf.sum(axis=1)).ravel()
    norm = K1 * (1 - B + B * lengths / max(lengths.mean(), 1e-9))
    weights = tf.tocoo()
    values = weights.data / (weights.data + norm[weights.row]) * idf[weights.col]
    return sparse.csr_matrix((values, (weights.row, weights.col)), shape=tf.shape)
