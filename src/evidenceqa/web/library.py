"""The data home as the web app uses it: one Engine, its searches on one thread, answers on a pool.

The catalogue's SQLite connection may only be used by the thread that opened it, so the engine is
opened, used and closed on a dedicated worker thread, and every search and catalogue read runs
there (milliseconds each); request handlers await its results. Writing an answer needs no catalogue
(`Answerer.finish`), nor does an LLM's rewrite of a follow-up (`Answerer.rewrite`), so both run on a
pool of `web_answer_threads`: questions that wait on an LLM overlap instead of queueing, while the
event loop and the engine's thread keep serving everything else.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from typing import ParamSpec, TypeVar

from evidenceqa.answer.engine import Engine
from evidenceqa.answer.pipeline import Answerer
from evidenceqa.documents import http_url
from evidenceqa.evidence_types import type_name
from evidenceqa.index.base import Filters
from evidenceqa.library.catalogue import Catalogue
from evidenceqa.loaders.tables import parse_table
from evidenceqa.records import Answer, Citation
from evidenceqa.retrieval.retriever import Retriever, SearchResponse
from evidenceqa.web.options import AppOptions
from evidenceqa.web.schemas import AdminStatusOut, CitationOut, CollectionOut, SuccessorOut, TableOut

T = TypeVar("T")
P = ParamSpec("P")


@dataclass
class Library:
    engine: Engine
    answerer: Answerer
    retriever: Retriever
    executor: ThreadPoolExecutor  # the engine's own thread
    writers: ThreadPoolExecutor  # answers being written

    @classmethod
    async def open(cls, settings: AppOptions) -> Library:
        executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="evidenceqa-engine")
        writers = ThreadPoolExecutor(
            max_workers=settings.web_answer_threads, thread_name_prefix="evidenceqa-answer"
        )

        def build() -> Library:
            engine = Engine.open(settings)
            try:
                return cls(engine, engine.answerer(), engine.retriever(), executor, writers)
            except BaseException:
                engine.close()
                raise

        try:
            return await asyncio.wrap_future(executor.submit(build))
        except BaseException:
            executor.shutdown()
            writers.shutdown()
            raise

    async def run(self, work: Callable[[], T]) -> T:
        return await asyncio.wrap_future(self.executor.submit(work))

    async def ask(
        self,
        question: str,
        filters: Filters | None,
        on_delta: Callable[[str], None] | None,
        previous: Sequence[str] = (),
        question_years: bool = True,
    ) -> tuple[Answer, list[CitationOut]]:
        """The answer and its cited passages; `previous`: the conversation's earlier questions, as
        they were searched, for a follow-up to be resolved against. An LLM's rewrite of a follow-up
        and its answer are waited on by the writers, never by the engine's thread."""
        rewritten = await self._written(self.answerer.rewrite, question, previous) if previous else None
        found = await self.run(
            lambda: self.answerer.prepare(question, filters, on_delta=on_delta, previous=previous,
                                          rewritten=rewritten, question_years=question_years)
        )  # fmt: skip
        answer = (
            found if isinstance(found, Answer) else await self._written(self.answerer.finish, found, on_delta)
        )
        return answer, await self.passages(answer.shown_passages())

    async def _written(self, work: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        return await asyncio.wrap_future(self.writers.submit(work, *args, **kwargs))

    async def passages(self, citations: Sequence[Citation]) -> list[CitationOut]:
        return await self.run(lambda: cited_passages(self.engine.catalogue, citations))

    async def search(self, question: str, k: int | None, filters: Filters | None = None) -> SearchResponse:
        return await self.run(lambda: self.retriever.search(question, k=k, filters=filters))

    async def doc_types(self) -> dict[str, list[str]]:
        """Per collection: the document types it holds, for the chat's filters."""
        return await self.run(self.engine.catalogue.doc_types)

    async def evidence_types(self) -> dict[str, list[str]]:
        """Per collection: the evidence types it holds, for the chat's filters."""
        return await self.run(self.engine.catalogue.evidence_types)

    async def collections(self) -> list[str]:
        """The names of the library's collections."""
        return await self.run(lambda: [row[0] for row in self.engine.catalogue.summary()])

    async def readiness(self) -> tuple[dict[str, str], int | None, int | None]:
        """The index and the embedder checked for real (a count, a text embedded), with the
        library's version and size; each failure named by its kind only."""

        def work() -> tuple[dict[str, str], int | None, int | None]:
            checks, version, documents = {}, None, None
            try:
                documents = sum(row[1] for row in self.engine.catalogue.summary())
                version = self.engine.catalogue.index_version
                self.engine.backend.count()
                checks["index"] = "ok"
            except Exception as exc:
                checks["index"] = f"unavailable ({type(exc).__name__})"
            try:
                self.engine.embedder.embed(["readiness check"])
                checks["embedder"] = "ok"
            except Exception as exc:
                checks["embedder"] = f"unavailable ({type(exc).__name__})"
            return checks, version, documents

        return await self.run(work)

    async def status(self) -> AdminStatusOut:
        return await self.run(self._status)

    def _status(self) -> AdminStatusOut:
        engine = self.engine
        collections = [
            CollectionOut(collection=name, documents=docs, chunks=chunks or 0, year_min=low, year_max=high)
            for name, docs, chunks, low, high in engine.catalogue.summary()
        ]
        return AdminStatusOut(
            documents=sum(c.documents for c in collections),
            chunks=sum(c.chunks for c in collections),
            collections=collections,
            index_version=engine.catalogue.index_version,
            index_current=engine.is_current(),
            pending_chunks=engine.pending(),
            backend=engine.backend.name,
            embedder=engine.embedder.model_id,
        )

    def close(self) -> None:
        self.writers.shutdown()  # answers in progress finish first
        self.executor.submit(self.engine.close).result()
        self.executor.shutdown()


def cited_table(body: str | None, text: str) -> TableOut | None:
    """The cited chunk as a table with the quoted rows marked, when it is a table."""
    table = parse_table(body or "")
    if table is None:
        return None
    cited = [i for i, line in enumerate(table.lines) if line in text]
    return TableOut(
        caption=table.before, header=table.header, rows=table.rows, cited=cited, notes=table.after
    )


def cited_passages(catalogue: Catalogue, citations: Sequence[Citation]) -> list[CitationOut]:
    """Each citation with the chunk it quotes (for highlighting in context), and what a source card
    shows of its document: a label, venue, kind, DOI and link."""
    chunks = catalogue.get_chunks([c.chunk_id for c in citations])
    documents = catalogue.documents_as_found((c.doc_id, c.title) for c in citations)
    replaced = catalogue.superseded_by(c.doc_id for c in citations)  # as the library stands now
    shown = []
    for c in citations:
        body = chunks[c.chunk_id].body if c.chunk_id in chunks else None
        document = documents[c.doc_id]  # one gone from the library: what the answer recorded of it
        doi = document.doi.strip() if document.doi and document.doi.strip() else None
        url = http_url(document.url) or (f"https://doi.org/{doi}" if doi else None)
        kind = c.evidence_type or document.evidence_type  # an answer recorded before types existed
        shown.append(
            CitationOut(**(asdict(c) | {"evidence_type": kind}), body=body, url=url, label=document.label(body or c.text),
                        journal=document.journal, doc_type=document.doc_type, doi=doi,
                        evidence_name=type_name(kind), table=cited_table(body, c.text),
                        superseded_by=SuccessorOut.of(replaced.get(c.doc_id)),
                        reference=document.reference(body or c.text))
        )  # fmt: skip
    return shown
