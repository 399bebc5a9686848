"""The library as an agent uses it: ranked passages with attribution, a cited answer, a passage with
its neighbours, what the library holds, a whole document.

Shared by the MCP server (web/mcp.py) and the OpenAI-compatible API (web/openai_api.py), so both
protocols return the same things. Every call is checked and rate-limited like the chat's (the same
per-user allowances), and every answer is stored in the asker's conversations with the channel it
came through, so the pilot's analytics count agents' use beside clinicians'. Problems are raised as
HTTPException (a status and a one-line reason); each protocol turns them into its own error shape.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException

from evidenceqa import evidence_types
from evidenceqa.documents import Document, http_url
from evidenceqa.index.base import Filters
from evidenceqa.library.catalogue import Catalogue
from evidenceqa.library.versions import Successor
from evidenceqa.retrieval.question import QuestionError, clean_question
from evidenceqa.store import Channel, LookupKind, User
from evidenceqa.web.entitlements import Reader, held_filters
from evidenceqa.web.guards import Guards, app_guards, check_rate
from evidenceqa.web.records import answer_out, count_lookup, store_exchange
from evidenceqa.web.schemas import (
    EVIDENCE_TYPE_NOTE,
    PREFER_EVIDENCE_NOTE,
    AnswerOut,
    CollectionOut,
    SuccessorOut,
)
from evidenceqa.web.services import OnDelta, Services

MAX_RESULTS = 50
MAX_CONTEXT = 5  # neighbours on each side of a passage


class EvidenceFilters(BaseModel):
    """Limits on the evidence; a year bound leaves out documents of unknown year."""

    year_min: int | None = Field(None, ge=1000, le=3000, description="Earliest publication year.")
    year_max: int | None = Field(None, ge=1000, le=3000, description="Latest publication year.")
    collection: str | None = Field(None, min_length=1, max_length=200, description="Only this collection.")
    doc_type: str | None = Field(
        None, min_length=1, max_length=200, description="Only this document type (e.g. journal-article)."
    )
    evidence_type: str | None = Field(None, description=EVIDENCE_TYPE_NOTE)
    prefer_evidence: bool = Field(False, description=PREFER_EVIDENCE_NOTE)

    @field_validator("evidence_type")
    @classmethod
    def _known_type(cls, key: str | None) -> str | None:
        if key is not None and (problem := evidence_types.unknown_types([key])):
            raise ValueError(problem)
        return key

    def to_filters(self) -> Filters:
        return Filters(
            year_min=self.year_min,
            year_max=self.year_max,
            collections=(self.collection,) if self.collection else (),
            doc_types=(self.doc_type,) if self.doc_type else (),
            evidence_types=(self.evidence_type,) if self.evidence_type else (),
            prefer_evidence=self.prefer_evidence,
        )


class Attribution(BaseModel):
    """Who wrote a document and where it was published: what an agent needs to cite it."""

    doc_id: str
    title: str | None
    authors: list[str]
    year: int | None
    journal: str | None
    evidence_type: str | None = Field(description=EVIDENCE_TYPE_NOTE)
    superseded_by: SuccessorOut | None = Field(
        None, description="The newer version that replaces this document: cite that one for current guidance."
    )
    doi: str | None
    url: str | None = Field(description="The document's http(s) address, when it has one.")
    license: str | None
    cite: str = Field(description="A ready reference: authors, title, journal, year, DOI or address.")


class Passage(Attribution):
    """One passage of the library, with its document's attribution."""

    chunk_id: str
    section: str = Field(description="Where in the document: its section headings, outermost first.")
    text: str


class RankedPassage(Passage):
    rank: int
    score: float = Field(description="The fused score: it ranks passages within one search only.")


class SearchEvidenceOut(BaseModel):
    question: str
    filters: dict[str, Any] = Field(
        description="Every filter applied: the caller's and any year read from the question."
    )
    passages: list[RankedPassage]


class Neighbour(BaseModel):
    chunk_id: str
    section: str
    text: str


class PassageInContext(Passage):
    before: list[Neighbour] = Field(
        description="The passages just before it in the document, in reading order."
    )
    after: list[Neighbour] = Field(description="The passages just after it, in reading order.")


class CollectionSummary(CollectionOut):
    updated_at: str | None = Field(description="When a document of this collection was last ingested (UTC).")


class LibraryOut(BaseModel):
    documents: int
    chunks: int
    collections: list[CollectionSummary]


def attribution(document: Document, successor: Successor | None = None) -> dict[str, Any]:
    return {
        "doc_id": document.doc_id,
        "title": document.title,
        "authors": list(document.authors),
        "year": document.year,
        "journal": document.journal,
        "evidence_type": document.evidence_type,
        "superseded_by": out.model_dump() if (out := SuccessorOut.of(successor)) else None,
        "doi": document.doi,
        "url": http_url(document.url),
        "license": document.license,
        "cite": document.reference(),
    }


def attributions(catalogue: Catalogue, doc_ids: Iterable[str]) -> dict[str, dict[str, Any]]:
    """Each document's attribution, from one metadata read (never the full text); a document no
    longer in the catalogue is attributed by its id alone."""
    ids = set(doc_ids)
    documents = catalogue.document_metadata(ids)
    replaced = catalogue.superseded_by(ids)
    return {
        doc_id: attribution(documents.get(doc_id) or Document(doc_id=doc_id), replaced.get(doc_id))
        for doc_id in ids
    }


@dataclass
class AgentAccess:
    """What agents may do with the library, for one process: its services and its guards."""

    services: Services
    guards: Guards

    @classmethod
    def of(cls, app: Starlette) -> AgentAccess:
        return cls(app.state.services, app_guards(app))

    def question(self, text: str) -> str:
        """The question cleaned, or 422 saying why it cannot be asked (too long, empty)."""
        try:
            return clean_question(text, self.services.settings.max_question_chars)
        except QuestionError as exc:
            raise HTTPException(422, str(exc)) from exc

    async def admit(self, user: User, question: str, what: Literal["questions", "searches"]) -> str:
        """The question cleaned and counted against the user's allowance: 422 or 429 if it cannot be."""
        question = self.question(question)
        await check_rate(self.guards.asks if what == "questions" else self.guards.searches, user, what)
        return question

    async def within(self, reader: Reader, filters: EvidenceFilters | None) -> Filters | None:
        """The caller's filters held to what the reader may read (403 when they may read none of it)."""
        chosen = filters.to_filters() if filters is not None else None
        return await held_filters(reader, chosen, self.services.library)

    async def looked_up(self, reader: Reader, channel: Channel, kind: LookupKind, results: int) -> None:
        await count_lookup(self.services.store, reader.user, channel, kind, results)

    async def search(
        self,
        reader: Reader,
        question: str,
        k: int = 10,
        filters: EvidenceFilters | None = None,
        channel: Channel = "mcp",
    ) -> SearchEvidenceOut:
        question = await self.admit(reader.user, question, "searches")
        library = self.services.library
        held = await self.within(reader, filters)
        response = await library.search(question, min(max(k, 1), MAX_RESULTS), held)

        def attributed() -> list[RankedPassage]:
            cited = attributions(library.engine.catalogue, (r.chunk.doc_id for r in response.results))
            return [
                RankedPassage(
                    rank=result.rank,
                    score=round(result.score, 6),
                    chunk_id=result.chunk.chunk_id,
                    section=" > ".join(result.chunk.section_path),
                    text=result.chunk.body,
                    **cited[result.chunk.doc_id],
                )
                for result in response.results
            ]

        passages = await library.run(attributed)
        await self.looked_up(reader, channel, "search", len(passages))
        return SearchEvidenceOut(question=question, filters=response.filters, passages=passages)

    async def answer(
        self,
        reader: Reader,
        question: str,
        filters: EvidenceFilters | None,
        channel: Channel,
        on_delta: OnDelta | None = None,
        admitted: bool = False,
        earlier: Sequence[str] = (),
    ) -> AnswerOut:
        """The cited answer (or the abstention) exactly as the chat gets it, stored in a new
        conversation of the reader's. `admitted`: the question was already through `admit`;
        `earlier`: the conversation's questions before it, as asked, for a follow-up to lean on."""
        if not admitted:
            question = await self.admit(reader.user, question, "questions")
        held = await self.within(reader, filters)
        library = self.services.library
        previous = await library.run(lambda: library.answerer.searched_forms(earlier)) if earlier else []
        answer, passages = await library.ask(question, held, on_delta, previous)
        conversation_id, answer_id = await run_in_threadpool(
            store_exchange, self.services.store, reader.user, None, answer, channel
        )
        return answer_out(answer, answer_id, conversation_id, passages)

    async def passage(self, reader: Reader, chunk_id: str, context: int = 1) -> PassageInContext:
        """A passage with up to `context` neighbours on each side; 404 when it is not in the library
        or not in a collection the reader may read (the two are not told apart)."""
        context = min(max(context, 0), MAX_CONTEXT)
        catalogue = self.services.library.engine.catalogue

        def read() -> PassageInContext:
            chunk = catalogue.get_chunks([chunk_id]).get(chunk_id)
            if chunk is None or not reader.access.may_read(chunk.collection):
                raise HTTPException(404, f"no passage {chunk_id!r} in the library")
            # Its neighbours at the same level: paragraphs beside a paragraph, not the document's overview.
            siblings = [
                c for c in catalogue.chunks(chunk.doc_id) if c.hierarchy_level == chunk.hierarchy_level
            ]
            at = next(i for i, c in enumerate(siblings) if c.chunk_id == chunk_id)

            def shown(chunks: list[Any]) -> list[Neighbour]:
                return [
                    Neighbour(chunk_id=c.chunk_id, section=" > ".join(c.section_path), text=c.body)
                    for c in chunks
                ]

            return PassageInContext(
                chunk_id=chunk.chunk_id,
                section=" > ".join(chunk.section_path),
                text=chunk.body,
                before=shown(siblings[max(0, at - context) : at]),
                after=shown(siblings[at + 1 : at + 1 + context]),
                **attributions(catalogue, [chunk.doc_id])[chunk.doc_id],
            )

        found = await self.services.library.run(read)
        await self.looked_up(reader, "mcp", "passage", 1)
        return found

    async def holdings(self, reader: Reader) -> LibraryOut:
        """What the library holds that the reader may read: per collection, documents, passages,
        years, last update."""
        catalogue = self.services.library.engine.catalogue

        def read() -> LibraryOut:
            updated = catalogue.last_ingested()
            collections = [
                CollectionSummary(
                    collection=name, documents=docs, chunks=chunks or 0, year_min=low, year_max=high,
                    updated_at=updated.get(name),
                )
                for name, docs, chunks, low, high in catalogue.summary()
                if reader.access.may_read(name)
            ]  # fmt: skip
            return LibraryOut(
                documents=sum(c.documents for c in collections),
                chunks=sum(c.chunks for c in collections),
                collections=collections,
            )

        held = await self.services.library.run(read)
        await self.looked_up(reader, "mcp", "collections", len(held.collections))
        return held

    async def document(self, reader: Reader, doc_id: str) -> tuple[Attribution, str]:
        """A document's attribution and its text as Markdown; 404 when it is not in the library or
        the reader may not read it."""

        def read() -> tuple[Attribution, str]:
            document = self.services.library.engine.catalogue.load_document(doc_id)
            if document is None or not reader.access.may_read(document.collection):
                raise HTTPException(404, f"no document {doc_id!r} in the library")
            successor = self.services.library.engine.catalogue.superseded_by([doc_id]).get(doc_id)
            return Attribution(**attribution(document, successor)), as_markdown(document)

        found = await self.services.library.run(read)
        await self.looked_up(reader, "mcp", "document", 1)
        return found


def as_markdown(document: Document) -> str:
    """The document's text: its title, its reference, then each section's heading and paragraphs."""
    lines = [f"# {document.label()}", "", document.reference()]
    for path, section in document.walk():
        if section.heading:
            lines += ["", "#" * min(len(path) + 1, 6) + " " + section.heading]
        lines += [line for paragraph in section.paragraphs for line in ("", paragraph.text)]
    return "\n".join(lines) + "\n"
