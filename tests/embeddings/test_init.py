"""load_embedder: names in the settings → backends, always behind the cache in the data home."""

from __future__ import annotations

from pathlib import Path

import openai
import pytest

from evidenceqa.embeddings import (
    MINILM_ID,
    MINILM_ONNX_ID,
    CachedEmbedder,
    EmbeddingError,
    OnnxEmbedder,
    OpenAIEmbedder,
    SentenceTransformerEmbedder,
    cache_path,
    load_embedder,
    minilm_path,
)
from evidenceqa.embeddings.onnx import INT8_FILE
from evidenceqa.settings import Settings


def test_minilm(tmp_path: Path) -> None:
    embedder = load_embedder(Settings(home=tmp_path, embedder="minilm", embed_batch_size=16))
    assert isinstance(embedder, CachedEmbedder)
    assert isinstance(embedder.embedder, SentenceTransformerEmbedder)
    assert embedder.embedder.batch_size == 16
    assert embedder.model_id == MINILM_ID
    assert embedder.cache.path == tmp_path / "embeddings.sqlite3"
    assert embedder.embed(["tranexamic acid in hip arthroplasty"]).shape == (1, 384)
    assert embedder.cache.path.is_file()


def test_each_embedder_batches_by_its_own_default_unless_the_settings_say(onnx_home: Path) -> None:
    onnx = load_embedder(Settings(home=onnx_home, embedder="minilm-onnx")).embedder
    assert isinstance(onnx, OnnxEmbedder) and onnx.batch_size == OnnxEmbedder.BATCH_SIZE == 8
    chosen = load_embedder(Settings(home=onnx_home, embedder="minilm-onnx", embed_batch_size=32)).embedder
    assert isinstance(chosen, OnnxEmbedder) and chosen.batch_size == 32
    api = load_embedder(
        Settings(home=onnx_home, embedder="openai:m", embedding_api_base="http://127.0.0.1:9/v1")
    )
    assert (
        isinstance(api.embedder, OpenAIEmbedder)
        and api.embedder.batch_size == OpenAIEmbedder.BATCH_SIZE == 64
    )


def test_minilm_onnx_reuses_the_export_in_the_data_home(onnx_home: Path, onnx_dir: Path) -> None:
    before = (onnx_dir / INT8_FILE).stat().st_mtime_ns
    embedder = load_embedder(Settings(home=onnx_home, embedder="minilm-onnx"))
    assert isinstance(embedder.embedder, OnnxEmbedder)
    assert embedder.model_id == MINILM_ONNX_ID
    assert (onnx_dir / INT8_FILE).stat().st_mtime_ns == before


def test_a_token_limit_from_the_settings_is_a_model_of_its_own(onnx_home: Path) -> None:
    embedder = load_embedder(Settings(home=onnx_home, embedder="minilm-onnx", embed_max_tokens=128))
    assert isinstance(embedder.embedder, OnnxEmbedder) and embedder.embedder.max_tokens == 128
    assert embedder.model_id == f"{MINILM_ONNX_ID}:128-tokens"  # cached and indexed apart from 256


def test_openai_compatible(tmp_path: Path) -> None:
    settings = Settings(
        home=tmp_path,
        embedder="openai:text-embedding-3-small",
        embedding_api_base="http://127.0.0.1:9/v1",
        embedding_api_key="sk-test",
        embed_concurrency=8,
    )
    embedder = load_embedder(settings)  # builds the client only: no request yet
    assert isinstance(embedder.embedder, OpenAIEmbedder)
    assert embedder.model_id == "openai:text-embedding-3-small"
    assert embedder.embedder.concurrency == 8
    assert type(embedder.embedder.client) is openai.OpenAI


def test_a_token_limit_is_refused_for_an_embeddings_api(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path, embedder="openai:m", embedding_api_base="http://127.0.0.1:9/v1",
                        embed_max_tokens=128)  # fmt: skip
    with pytest.raises(EmbeddingError, match="embed_max_tokens applies to the local models"):
        load_embedder(settings)


def test_azure(tmp_path: Path) -> None:
    settings = Settings(
        home=tmp_path,
        embedder="openai:my-deployment",
        embedding_api_base="https://example.openai.azure.com",
        embedding_api_key="sk-test",
        embedding_api_version="2024-06-01",
    )
    embedder = load_embedder(settings)
    assert isinstance(embedder.embedder, OpenAIEmbedder)
    assert isinstance(embedder.embedder.client, openai.AzureOpenAI)
    assert embedder.embedder.endpoint == "https://example.openai.azure.com/openai/deployments/my-deployment"


def test_local_model_folder(tmp_path: Path) -> None:
    embedder = load_embedder(Settings(home=tmp_path, embedder=str(minilm_path())))
    assert isinstance(embedder.embedder, SentenceTransformerEmbedder)
    assert embedder.model_id.startswith("st:model@")


def test_unknown_name(tmp_path: Path) -> None:
    message = "embedder 'minilm-large' is not a known name, and no model folder exists at minilm-large"
    with pytest.raises(EmbeddingError) as error:
        load_embedder(Settings(home=tmp_path, embedder="minilm-large"))
    assert str(error.value) == message


def test_the_vector_cache_can_be_shared_between_homes(tmp_path) -> None:
    assert cache_path(Settings(home=tmp_path / "a")) == tmp_path / "a" / "embeddings.sqlite3"
    shared = tmp_path / "shared.sqlite3"
    assert cache_path(Settings(home=tmp_path / "a", embedding_cache=shared)) == shared


def test_onnx_prefix_runs_a_local_model_folder_as_int8_onnx(onnx_home: Path) -> None:
    embedder = load_embedder(Settings(home=onnx_home, embedder=f"onnx:{minilm_path()}"))
    assert isinstance(embedder.embedder, OnnxEmbedder)
    # The id names the folder's contents, so a retrained model never reuses the old vectors.
    assert embedder.model_id.startswith("onnx-int8:st:model@")
    exports = [p.name for p in (onnx_home / "models").iterdir() if p.name.startswith("model-")]
    assert len(exports) == 1 and exports[0].endswith("-onnx")
    vector = embedder.embed(["tranexamic acid in hip arthroplasty"])
    assert vector.shape == (1, 384)


def test_onnx_prefix_without_a_folder_names_it(tmp_path: Path) -> None:
    with pytest.raises(EmbeddingError, match=r"no model folder exists at .*missing-model"):
        load_embedder(Settings(home=tmp_path, embedder=f"onnx:{tmp_path / 'missing-model'}"))
