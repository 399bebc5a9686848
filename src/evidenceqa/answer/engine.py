"""One data home, opened: catalogue, embedder, search backend and retriever, loaded once.

The CLI and the web app are thin shells over an Engine; batch commands reuse one Engine so models
load once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date

from evidenceqa.answer import GeneratorOptions, load_generator
from evidenceqa.answer.abstain import LiveCalibration
from evidenceqa.answer.cache import Cache, open_cache
from evidenceqa.answer.pipeline import Answerer, AnswererOptions
from evidenceqa.chunking import ChunkingOptions
from evidenceqa.embeddings import EmbeddingOptions, load_embedder
from evidenceqa.embeddings.base import Embedder
from evidenceqa.embeddings.workers import embedding_workers
from evidenceqa.index import IndexOptions, open_backend
from evidenceqa.index.base import SearchBackend
from evidenceqa.library.catalogue import Catalogue
from evidenceqa.library.index_sync import SyncReport, indexed_version, pending_chunks, space_name, sync
from evidenceqa.library.vocabulary import library_shorthand, vocabulary_from_counts
from evidenceqa.retrieval.followup import FollowUps, catalogue_rarity
from evidenceqa.retrieval.retriever import Retriever


class EngineOptions(AnswererOptions, GeneratorOptions, EmbeddingOptions, IndexOptions, ChunkingOptions):
    """What a data home is built and opened with: its chunking, embedder, index, retrieval and
    answering options (the chunking is part of an answer's cache key)."""


@dataclass
class Engine:
    settings: EngineOptions
    catalogue: Catalogue
    embedder: Embedder
    backend: SearchBackend

    @classmethod
    def open(cls, settings: EngineOptions, backend: str | None = None) -> Engine:
        catalogue = Catalogue(settings.catalogue_path)
        try:
            embedder = load_embedder(settings)
            index = open_backend(backend, settings, dim=embedder.dim, space=space_name(embedder))
        except BaseException:
            catalogue.close()
            raise
        return cls(settings, catalogue, embedder, index)

    def retriever(self, today: date | None = None) -> Retriever:
        shorthand = library_shorthand(self.settings.shorthand_path)
        vocabulary = vocabulary_from_counts(self.catalogue.abbreviation_counts(), shorthand=shorthand)
        return Retriever(self.settings, self.catalogue, self.backend, self.embedder, vocabulary, today)

    def answerer(self, cache: Cache | None = None, today: date | None = None) -> Answerer:
        """Question → cited answer over this home, with the calibrated abstention if there is one."""
        calibration = LiveCalibration.open(self.settings.home)
        return Answerer(
            self.settings,
            self.retriever(today),
            load_generator(self.settings, self.embedder),
            cache or open_cache(self.settings),
            calibration.loaded,
            index_version=lambda: self.catalogue.index_version,
            followups=FollowUps(self.embedder, catalogue_rarity(self.catalogue)),
            calibration=calibration,
        )

    def pending(self) -> int:
        """Chunks waiting to be indexed."""
        return pending_chunks(self.catalogue, self.backend, self.embedder)

    def is_current(self) -> bool:
        return indexed_version(self.catalogue, self.backend, self.embedder) == self.catalogue.index_version

    def sync(self, on_chunks: Callable[[int], None] | None = None) -> SyncReport:
        with embedding_workers(self.embedder, self.settings) as embedder:
            return sync(self.catalogue, self.backend, embedder, on_chunks)

    def close(self) -> None:
        self.backend.close()
        self.catalogue.close()

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
