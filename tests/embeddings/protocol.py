"""Structural check of the Embedder protocol without reading attributes (reading `dim` may make a request)."""

from __future__ import annotations

import inspect

# The members of evidenceqa.embeddings.Embedder.
MEMBERS = ("model_id", "dim", "embed", "embed_query")


def assert_embedder(obj: object) -> None:
    for name in MEMBERS:
        try:
            inspect.getattr_static(obj, name)
        except AttributeError:
            raise AssertionError(f"{type(obj).__name__} lacks {name}") from None
    assert callable(obj.embed) and callable(obj.embed_query)  # type: ignore[attr-defined]
