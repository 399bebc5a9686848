"""Text embeddings: pick a backend from the settings, always behind the persistent cache.

Heavy libraries (torch, onnxruntime, openai) are imported only when a backend is built,
so importing this package stays cheap.
"""

from __future__ import annotations

from pathlib import Path

from evidenceqa.config import Settings
from evidenceqa.embeddings.base import Embedder, EmbeddingError, batched_by_length, folder_fingerprint
from evidenceqa.embeddings.cache import CachedEmbedder, EmbeddingCache
from evidenceqa.embeddings.onnx import MINILM_ONNX_ID, OnnxEmbedder, export_onnx
from evidenceqa.embeddings.openai_api import OpenAIEmbedder
from evidenceqa.embeddings.sentence_transformers import MINILM_ID, SentenceTransformerEmbedder, minilm_path

__all__ = [
    "MINILM_ID",
    "MINILM_ONNX_ID",
    "CachedEmbedder",
    "Embedder",
    "EmbeddingCache",
    "EmbeddingError",
    "OnnxEmbedder",
    "OpenAIEmbedder",
    "SentenceTransformerEmbedder",
    "batched_by_length",
    "cache_path",
    "export_onnx",
    "load_embedder",
    "minilm_path",
]

_OPENAI_PREFIX = "openai:"
_ONNX_PREFIX = "onnx:"


def cache_path(settings: Settings) -> Path:
    return settings.embedding_cache or settings.home / "embeddings.sqlite3"


def load_embedder(settings: Settings) -> CachedEmbedder:
    """The embedder named by `settings.embedder`, wrapped in the cache in the data home."""
    return CachedEmbedder(_backend(settings), EmbeddingCache(cache_path(settings)))


def _backend(settings: Settings) -> Embedder:
    name, batch_size = settings.embedder, settings.embed_batch_size
    if name == "minilm":
        return SentenceTransformerEmbedder(minilm_path(), batch_size=batch_size, model_id=MINILM_ID)
    if name == "minilm-onnx":
        folder = export_onnx(minilm_path(), settings.models_path / "minilm-onnx")
        return OnnxEmbedder(folder, batch_size=batch_size, model_id=MINILM_ONNX_ID)
    if name.startswith(_OPENAI_PREFIX):
        key = settings.embedding_api_key
        return OpenAIEmbedder(
            model=name.removeprefix(_OPENAI_PREFIX),
            base_url=settings.embedding_api_base,
            api_key=key.get_secret_value() if key else None,
            api_version=settings.embedding_api_version,
            batch_size=batch_size,
        )
    if name.startswith(_ONNX_PREFIX):
        # A local model (an adapted MiniLM, say) run like the default: int8 ONNX, several times faster.
        path = _model_folder(name, name.removeprefix(_ONNX_PREFIX))
        folder = export_onnx(path, settings.models_path / f"{path.name}-{folder_fingerprint(path)}-onnx")
        return OnnxEmbedder(folder, batch_size=batch_size)
    return SentenceTransformerEmbedder(_model_folder(name, name), batch_size=batch_size)


def _model_folder(name: str, folder: str) -> Path:
    path = Path(folder).expanduser()
    if not path.exists():
        raise EmbeddingError(f"embedder '{name}' is not a known name, and no model folder exists at {path}")
    return path.resolve()
