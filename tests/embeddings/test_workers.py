"""Embedding in worker processes gives the vectors embedding in process gives, and a sync with
workers builds the index a sync without them builds."""

from pathlib import Path

import numpy as np
import pytest

from evidenceqa.embeddings import EmbeddingError, load_embedder, uncached_embedder
from evidenceqa.embeddings.cache import CachedEmbedder
from evidenceqa.embeddings.workers import WorkerEmbedder, embedding_workers, usable_cpus
from evidenceqa.settings import Settings
from tests.conftest import indexed_engine


def test_workers_embed_as_the_process_does_in_input_order(onnx_home: Path, paragraphs: list[str]) -> None:
    settings = Settings(home=onnx_home, embed_batch_size=4)
    local = uncached_embedder(settings)
    texts = paragraphs[::-1]  # longest first: the batches are formed by length, the rows must not be
    with embedding_workers(local, settings.model_copy(update={"embed_workers": 2})) as workers:
        assert isinstance(workers, WorkerEmbedder) and workers.model_id == local.model_id
        vectors = workers.embed(texts)
        assert np.allclose(vectors, local.embed(texts), atol=1e-5)
        assert np.array_equal(workers.embed_query(texts[0]), local.embed_query(texts[0]))
        assert workers.embed([]).shape == (0, local.dim)


def test_one_worker_is_the_embedder_itself(onnx_home: Path) -> None:
    embedder = load_embedder(Settings(home=onnx_home))
    with embedding_workers(embedder, Settings(home=onnx_home)) as same:
        assert same is embedder


def test_workers_share_the_vector_cache(onnx_home: Path, paragraphs: list[str]) -> None:
    settings = Settings(home=onnx_home, embedding_cache=onnx_home / "shared.sqlite3")
    cached = load_embedder(settings)
    with embedding_workers(cached, settings.model_copy(update={"embed_workers": 2})) as workers:
        assert isinstance(workers, CachedEmbedder)
        workers.embed(paragraphs[:3])
    found = cached.cache.get_many(cached.model_id, _hashes(paragraphs[:3]))
    assert len(found) == 3


def _hashes(texts: list[str]) -> list[str]:
    from evidenceqa.embeddings.cache import content_hash

    return [content_hash(t) for t in texts]


DOCS = [
    ("ssi", 2021, "Surgical site infection rates fell with chlorhexidine-alcohol skin preparation."),
    ("masks", 2020, "Surgical masks reduce droplet transmission in the operating room."),
    ("hands", None, "Hand hygiene before surgery prevents infection."),
]


def test_a_sync_with_workers_builds_the_same_index(tmp_path: Path, models_dir: Path, monkeypatch) -> None:
    def ranking(engine) -> list[tuple[str, float]]:
        hits = engine.retriever().search("skin preparation before surgery", k=3, mode="dense").results
        return [(hit.chunk.chunk_id, round(hit.score, 4)) for hit in hits]

    (tmp_path / "one").mkdir(), (tmp_path / "two").mkdir()
    with indexed_engine(tmp_path / "one", DOCS, models_dir) as engine:
        alone = ranking(engine)
    embedded: list[int] = []  # what the workers embedded: the sync must have used them
    in_workers = WorkerEmbedder.embed
    monkeypatch.setattr(
        WorkerEmbedder, "embed", lambda self, texts: embedded.append(len(texts)) or in_workers(self, texts)
    )
    monkeypatch.setenv("EVIDENCEQA_EMBED_WORKERS", "2")
    with indexed_engine(tmp_path / "two", DOCS, models_dir) as engine:
        assert sum(embedded) == engine.catalogue.count_chunks([doc_id for doc_id, _, _ in DOCS]) > 0
        assert engine.is_current() and ranking(engine) == alone


def test_an_embeddings_api_refuses_workers() -> None:
    settings = Settings(embedder="openai:text-embedding-3-small", embed_workers=2)
    with pytest.raises(EmbeddingError, match="embed_workers applies to the local models"):
        uncached_embedder(settings)


def test_a_worker_that_cannot_load_the_model_is_one_embedding_error(onnx_home: Path) -> None:
    local = uncached_embedder(Settings(home=onnx_home))
    unloadable = Settings(home=onnx_home, embedder=str(onnx_home / "no-such-model"))
    with (
        WorkerEmbedder(local, unloadable, 2) as workers,
        pytest.raises(EmbeddingError, match="an embedding worker process stopped"),
    ):
        workers.embed(["Hand hygiene before surgery prevents infection."])


@pytest.mark.parametrize(
    ("affinity", "cpu_max", "expected"),
    [
        (range(8), None, 8),  # no cgroup v2 file: the affinity mask alone
        (range(8), "max 100000", 8),  # no quota
        (range(8), "200000 100000", 2),  # a container with --cpus 2 on an 8-core machine
        (range(8), "150000 100000", 2),  # 1.5 CPUs: two threads share them
        (range(2), "800000 100000", 2),  # pinned to 2 cores (taskset, cpuset): the mask wins
        (range(4), "garbled", 4),  # a format it does not know: no cap
    ],
)
def test_usable_cpus_follow_the_affinity_mask_and_the_cgroup_quota(
    tmp_path: Path, monkeypatch, affinity, cpu_max, expected
) -> None:
    monkeypatch.setattr("os.sched_getaffinity", lambda pid: set(affinity), raising=False)
    monkeypatch.setattr("os.cpu_count", lambda: 64)  # the machine's count is never the answer
    path = tmp_path / "cpu.max"
    if cpu_max is not None:
        path.write_text(cpu_max + "\n")
    assert usable_cpus(path) == expected


def test_each_worker_gets_its_share_of_the_usable_cpus(onnx_home: Path, monkeypatch) -> None:
    seen: list[int | None] = []
    monkeypatch.setattr("evidenceqa.embeddings.workers.usable_cpus", lambda: 4)
    monkeypatch.setattr(
        "evidenceqa.embeddings.workers.ProcessPoolExecutor",
        lambda workers, mp_context, initializer, initargs: seen.append(initargs[0].embed_threads),
    )
    settings = Settings(home=onnx_home)
    WorkerEmbedder(uncached_embedder(settings), settings, workers=2)
    assert seen == [2]
