"""Embedding a big ingest in several processes (`embed_workers`).

One ONNX Runtime session spreads a batch over all cores, but a small model's batch does not keep
many threads busy; separate processes, each with its own session and cores ÷ workers threads
(the cores this process may use: `usable_cpus`), each embedding whole batches, do. Only `embed`
moves to the workers: the vector cache, the index writes and the catalogue stay in the calling
process, so a sync commits exactly as with one process (evidenceqa.library.index_sync), and
questions are embedded in process as before.
docs/performance.md measures both ways.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from multiprocessing import get_context
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from evidenceqa.embeddings.base import Embedder, EmbeddingError, batched_by_length, no_texts
from evidenceqa.embeddings.cache import CachedEmbedder

if TYPE_CHECKING:
    from evidenceqa.embeddings import EmbeddingOptions

_WORKER: Embedder | None = None  # the model one worker process loaded
_TASK_TEXTS = 64  # per task when embed_batch_size is not set: few round trips, whole model batches
_CGROUP_CPU_MAX = Path("/sys/fs/cgroup/cpu.max")  # cgroup v2: "<quota> <period>" or "max <period>"


def usable_cpus(cpu_max: Path = _CGROUP_CPU_MAX) -> int:
    """The CPUs this process may run on: the affinity mask (taskset, a container's cpuset), capped
    by a cgroup CPU quota (a container's --cpus), not the machine's count, which either can be far
    below; threads beyond it only take turns."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    try:
        quota, period = cpu_max.read_text().split()[:2]
        if quota != "max":
            cpus = min(cpus, max(1, math.ceil(int(quota) / int(period))))
    except (OSError, ValueError):  # no cgroup v2 here, or a format this does not know: no cap
        pass
    return max(1, cpus)


def _start(settings: EmbeddingOptions) -> None:
    from evidenceqa.embeddings import uncached_embedder

    global _WORKER
    _WORKER = uncached_embedder(settings)


def _embed(texts: list[str]) -> np.ndarray:
    assert _WORKER is not None, "a worker embeds only after _start"
    return _WORKER.embed(texts)


class WorkerEmbedder:
    """`local`'s vector space, its texts embedded by `workers` processes that load the same model
    (`settings.embedder`). Use it as a context manager: leaving it stops the processes."""

    def __init__(self, local: Embedder, settings: EmbeddingOptions, workers: int) -> None:
        threads = max(1, usable_cpus() // workers)
        per_worker = settings.model_copy(update={"embed_threads": threads, "embed_workers": 1})
        self.local = local
        self.model_id = local.model_id
        # texts per task sent to a worker, which embeds them in its model's own batches
        self.batch_size = settings.embed_batch_size or _TASK_TEXTS
        # spawn, not fork: a forked ONNX Runtime or tokenizer thread pool can deadlock in the child.
        self._pool = ProcessPoolExecutor(
            workers, mp_context=get_context("spawn"), initializer=_start, initargs=(per_worker,)
        )

    @property
    def dim(self) -> int:
        return self.local.dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return no_texts(self.dim)
        try:
            return batched_by_length(texts, self.batch_size, _embed, self._pool.map)
        except BrokenProcessPool as exc:  # a worker could not load the model, or was killed
            raise EmbeddingError(
                "an embedding worker process stopped; run with embed_workers = 1 to see why"
            ) from exc

    def embed_query(self, text: str) -> np.ndarray:
        return self.local.embed_query(text)

    def close(self) -> None:
        self._pool.shutdown(cancel_futures=True)

    def __enter__(self) -> WorkerEmbedder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@contextmanager
def embedding_workers(embedder: Embedder, settings: EmbeddingOptions) -> Iterator[Embedder]:
    """`embedder` as a sync should use it: itself with `embed_workers` 1, else the same model (and
    the same vector cache) with its `embed` spread over that many processes."""
    if settings.embed_workers == 1:
        yield embedder
        return
    cached = embedder if isinstance(embedder, CachedEmbedder) else None
    local = cached.embedder if cached else embedder
    with WorkerEmbedder(local, settings, settings.embed_workers) as workers:
        yield CachedEmbedder(workers, cached.cache) if cached else workers
