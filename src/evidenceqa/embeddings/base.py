"""The embedder contract shared by every backend, and the helpers they all use."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Protocol

import numpy as np

# Files that do not change what a model computes; left out of its fingerprint.
_NOT_MODEL_FILES = {"README.md", ".gitattributes"}


class EmbeddingError(RuntimeError):
    """An embedder could not be loaded or could not embed; the message is one line, for users."""


class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors of one fixed vector space.

    Not runtime-checkable on purpose: on Python 3.11 isinstance() would read `dim`, which a remote
    embedder may learn only by making a request.
    """

    # Names the vector space: vectors with different ids must never be mixed (cache key, index metadata).
    model_id: str

    @property
    def dim(self) -> int:
        """Length of every vector; a property, so a backend may learn it on first use."""
        ...

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Shape (len(texts), dim), float32, unit rows, in input order."""
        ...

    def embed_query(self, text: str) -> np.ndarray:
        """Shape (dim,): the same space as `embed`, but models with query prefixes may differ."""
        ...


def batched_by_length(
    texts: Sequence[str],
    batch_size: int,
    fn: Callable[[list[str]], np.ndarray],
    apply: Callable[..., Iterable[np.ndarray]] = map,
) -> np.ndarray:
    """Calls `fn` on batches of similar-length texts (less padding, faster) and returns rows in input order.

    `apply` maps `fn` over the batches in order: `map`, or a thread pool's `map` to run them at once.
    """
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    batches = [order[start : start + batch_size] for start in range(0, len(order), batch_size)]
    out: np.ndarray | None = None
    for rows, vectors in zip(batches, apply(fn, [[texts[i] for i in rows] for rows in batches]), strict=True):
        if out is None:
            out = np.empty((len(texts), vectors.shape[1]), dtype=np.float32)
        out[rows] = vectors
    if out is None:
        raise ValueError("batched_by_length needs at least one text")
    return out


def token_window(model_id: str, max_tokens: int | None, own: int) -> tuple[int, str]:
    """The word pieces a local model embeds (at most its own limit) and the model id that says so:
    vectors of a shorter window are other vectors, never cached or indexed with the full ones."""
    tokens = min(max_tokens or own, own)
    return tokens, model_id if tokens == own else f"{model_id}:{tokens}-tokens"


def l2_normalise(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length as float32; all-zero rows stay zero rather than becoming NaN."""
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.maximum(norms, np.float32(1e-12))


def no_texts(dim: int) -> np.ndarray:
    """The result of embedding an empty list: callers get the right shape without a model call."""
    return np.zeros((0, dim), dtype=np.float32)


def one_line(error: BaseException) -> str:
    """The first line of an exception's message, for EmbeddingError messages built from library errors."""
    lines = str(error).strip().splitlines()
    return lines[0] if lines else type(error).__name__


def force_offline() -> None:
    """The system runs without internet: Hugging Face libraries must never try to download."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"


def folder_fingerprint(folder: Path) -> str:
    """Short hash of a model folder's files (config and weights), so a changed model gets a new id."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and p.name not in _NOT_MODEL_FILES):
        digest.update(path.relative_to(folder).as_posix().encode())
        with path.open("rb") as f:
            while block := f.read(1 << 20):
                digest.update(block)
    return digest.hexdigest()[:12]
