"""The API's request and response bodies: what /openapi.json publishes and every route returns."""

from __future__ import annotations

from dataclasses import asdict
from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import Path
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from evidenceqa import evidence_types
from evidenceqa.index.base import Filters
from evidenceqa.library.versions import Successor
from evidenceqa.store import RATINGS

Rating = Literal["excellent", "acceptable", "very_poor"]
# The pilot's three-point scale as the API spells it, and the numbers the analytics average.
RATING_SCORES: dict[str, float] = {
    "excellent": RATINGS["Excellent"], "acceptable": RATINGS["Acceptable"], "very_poor": RATINGS["Very poor"],
}  # fmt: skip
RATING_NAMES: dict[float, str] = {score: name for name, score in RATING_SCORES.items()}


# The most a database id can be (SQLite's and PostgreSQL's BIGINT): a larger one in a path or body is a
# 422, not an overflow in the driver.
MAX_ID = 2**63 - 1
RowId = Annotated[int, Path(ge=1, le=MAX_ID)]
BodyId = Annotated[int, Field(ge=1, le=MAX_ID)]
Name = Annotated[str, Field(min_length=1, max_length=200)]


def _unpaired_surrogate(value: object) -> bool:
    if isinstance(value, str):
        return any("\ud800" <= c <= "\udfff" for c in value)
    if isinstance(value, dict):
        return any(_unpaired_surrogate(k) or _unpaired_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_unpaired_surrogate(v) for v in value)
    return False


class Body(BaseModel):
    """A request body: unknown fields refused, and no string that is not text."""

    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _text_only(cls, data: Any) -> Any:
        # JSON may spell an unpaired surrogate ("\ud800"); no database or log encoder can write one.
        if _unpaired_surrogate(data):
            raise ValueError(
                "a string holds an unpaired UTF-16 surrogate (\\ud800–\\udfff), which is not text"
            )
        return data


EVIDENCE_TYPE_NOTE = f"The kind of evidence: {', '.join(evidence_types.KEYS)} (docs/evidence.md)."
EVIDENCE_TYPES_NOTE = f"Only these kinds of evidence: {', '.join(evidence_types.KEYS)} (docs/evidence.md)."
PREFER_EVIDENCE_NOTE = "Rank stronger evidence (guidelines, systematic reviews, trials) higher; not a filter."


class FiltersIn(Body):
    """Limits on the evidence an answer may use; a year bound leaves out documents of unknown year."""

    year_min: int | None = Field(None, ge=1000, le=3000)
    year_max: int | None = Field(None, ge=1000, le=3000)
    collections: list[Name] = Field(default_factory=list, max_length=50)
    doc_types: list[Name] = Field(default_factory=list, max_length=50)
    evidence_types: list[Name] = Field(
        default_factory=list, max_length=len(evidence_types.KEYS), description=EVIDENCE_TYPES_NOTE
    )
    topics: list[Name] = Field(default_factory=list, max_length=50)
    prefer_evidence: bool = Field(False, description=PREFER_EVIDENCE_NOTE)

    @field_validator("evidence_types")
    @classmethod
    def _known_types(cls, keys: list[str]) -> list[str]:
        if problem := evidence_types.unknown_types(keys):
            raise ValueError(problem)
        return keys

    def to_filters(self) -> Filters:
        return Filters(
            year_min=self.year_min, year_max=self.year_max, collections=tuple(self.collections),
            doc_types=tuple(self.doc_types), evidence_types=tuple(self.evidence_types),
            topics=tuple(self.topics), prefer_evidence=self.prefer_evidence,
        )  # fmt: skip


# The schema's bound only caps what is parsed; the max_question_chars setting (checked by the route,
# 422 with the reason) is the limit that applies.
QUESTION_CEILING = 100_000
QUESTION_NOTE = "The question; at most max_question_chars characters (2,000 by default), else 422."


class AskIn(Body):
    question: str = Field(min_length=1, max_length=QUESTION_CEILING, description=QUESTION_NOTE)
    filters: FiltersIn | None = None
    conversation_id: BodyId | None = Field(
        None, description="Continue this conversation; omitted: start one."
    )
    question_years: bool = Field(
        True,
        description='Apply a year limit the question\'s own words set ("since 2015"); false: '
        "asked again without it, as removing its chip does.",
    )


LimitKind = Literal["years", "collections", "doc_types", "evidence_types", "topics", "prefer_evidence"]


class AppliedLimit(BaseModel):
    """One limit the evidence was held to, as the chat shows it, and what removing it takes away."""

    label: str
    limit: LimitKind | None = Field(
        description="The filter it is (years: typed or read from the question); null: a note only."
    )
    value: str | None = None  # the collection, document type or topic it names


class TableOut(BaseModel):
    """A cited table, to draw as rows and columns: the rows the citation quotes are `cited`."""

    caption: list[str] = Field(description="The lines before the table: its label and caption.")
    header: list[str]
    rows: list[list[str]]
    cited: list[int] = Field(description="Indices into `rows` of the rows the supporting text quotes.")
    notes: list[str] = Field(description="The lines after the table: its footnotes.")


class SuccessorOut(BaseModel):
    """The version that supersedes a cited document (docs/evidence.md#superseded-guidance)."""

    doc_id: str
    title: str | None
    year: int | None
    stated: bool = Field(description="The metadata says so; false: the same title and issuer, a later year.")
    label: str = Field(description="How a card names it: its title and year.")

    @classmethod
    def of(cls, successor: Successor | None) -> SuccessorOut | None:
        return cls(**asdict(successor), label=successor.label()) if successor else None


class CitationOut(BaseModel):
    n: int
    doc_id: str
    chunk_id: str
    title: str | None
    year: int | None
    section: str | None
    text: str = Field(description="The exact supporting text, found verbatim inside `body`.")
    body: str | None = Field(description="The cited chunk's full text; null when it has left the library.")
    url: str | None = Field(description="The document's http(s) address (else its DOI's), when it has one.")
    label: str = Field(description="What to call the document: its title, or for an untitled one (a "
                       "PubMed abstract) its kind and topics or opening words, never its bare id.")  # fmt: skip
    journal: str | None = Field(None, description="The journal, guideline series or website.")
    doc_type: str | None = Field(None, description="The kind of document (journal-article, …).")
    evidence_type: str | None = Field(
        None,
        description="The kind of evidence: guideline, systematic-review, rct, observational, "
        "case-report, narrative-review, patient-information or other (docs/evidence.md).",
    )
    evidence_name: str | None = Field(None, description="The kind of evidence in words, as a card shows it.")
    table: TableOut | None = Field(None, description="The cited passage as a table, when it is one.")
    superseded_by: SuccessorOut | None = Field(
        None, description="The newer version of this document that replaces it, when the library holds one."
    )
    doi: str | None = None
    reference: str = Field(description="The document as a reference (Vancouver order), for copying.")


class AnswerOut(BaseModel):
    """One stored answer: the record `evidenceqa ask --json` prints, with its ids and cited passages."""

    answer_id: int
    conversation_id: int
    question: str
    searched_for: str | None = Field(
        None, description="A follow-up as it was resolved against the conversation and searched."
    )
    answer: str
    abstained: bool
    citations: list[CitationOut]
    nearest: list[CitationOut] = Field(
        default_factory=list,
        description="An abstention's closest passages, each marked where it comes closest to the "
        "question. They do not answer it: they show what the library holds nearby.",
    )
    unsupported_sentences: list[str]
    filters: dict[str, Any]
    timings_ms: dict[str, float]
    cost_usd: float
    cost_by_stage_usd: dict[str, float]
    generator: str
    p_answerable: float | None
    cache_hit: bool
    index_version: int
    rating: Rating | None = Field(None, description="The asking user's feedback on this answer, if any.")
    feedback_comment: str | None = Field(None, description="The comment the asking user gave with it.")
    applied_filters: list[AppliedLimit] = Field(
        default_factory=list,
        description="Each limit the evidence was held to, as the chat shows it: typed in the form, or "
        'read from the question ("since 2015").',
    )


class SearchResultOut(BaseModel):
    rank: int
    chunk_id: str
    doc_id: str
    title: str | None
    section: str
    hierarchy_level: str
    year: int | None
    evidence_type: str | None = None
    text: str
    score: float
    found_by: dict[str, int] = Field(description="Retriever → the rank at which it found this chunk.")


class SearchOut(BaseModel):
    """The record `evidenceqa search --json` prints."""

    question: str
    query_text: str
    mode: str
    filters: dict[str, Any]
    temporal: str | None
    expansions: list[list[str]]
    query_class: str
    alpha: float | None
    timings_ms: dict[str, float]
    results: list[SearchResultOut]


class ConversationIn(Body):
    title: str = Field("New conversation", min_length=1, max_length=200)


class ConversationOut(BaseModel):
    id: int
    title: str
    created_at: datetime
    updated_at: datetime


class MessageOut(BaseModel):
    role: Literal["user", "assistant"]
    text: str
    created_at: datetime
    answer: AnswerOut | None = Field(None, description="The full answer record of an assistant message.")


class ConversationDetailOut(ConversationOut):
    messages: list[MessageOut]


class FeedbackIn(Body):
    rating: Rating
    comment: str | None = Field(None, max_length=4000)


class GapIn(Body):
    comment: str | None = Field(None, max_length=4000, description="What the reader was looking for.")


class GapOut(BaseModel):
    answer_id: int
    comment: str


class FeedbackOut(BaseModel):
    answer_id: int
    rating: Rating
    score: float = Field(description="The rating as the analytics average it: 1.0, 0.6 or 0.2.")
    comment: str


class HealthOut(BaseModel):
    """Liveness: the process answers. Nothing is checked, so a load balancer never restarts a
    healthy app because its database is down."""

    ok: bool


class ReadyOut(BaseModel):
    """Readiness: whether this instance can answer questions now, and each dependency's state
    ("ok", or what is wrong without any address or secret)."""

    ready: bool
    checks: dict[str, str]
    index_version: int | None
    documents: int | None


class CollectionOut(BaseModel):
    collection: str | None
    documents: int
    chunks: int
    year_min: int | None
    year_max: int | None


class AdminStatusOut(BaseModel):
    documents: int
    chunks: int
    collections: list[CollectionOut]
    index_version: int
    index_current: bool = Field(description="Whether every catalogue change is in the search index.")
    pending_chunks: int = Field(description="Chunks waiting to be indexed (`evidenceqa index`).")
    backend: str
    embedder: str


class UserIn(Body):
    email: str = Field(min_length=3, max_length=320, pattern=r"^[^@\s]+@[^@\s]+$")
    name: str = Field(min_length=1, max_length=200)
    password: str = Field(min_length=10, max_length=1000)
    is_admin: bool = False


class UserOut(BaseModel):
    id: int
    email: str
    name: str
    is_admin: bool
    active: bool


class ActiveIn(Body):
    active: bool = Field(description="false: logins and API tokens refused from now on, sessions ended.")


class ResetLinkOut(BaseModel):
    url: str = Field(description="A one-time link to set a new password; shown only now.")
    hours: int


class InviteIn(Body):
    email: str = Field(min_length=3, max_length=320, pattern=r"^[^@\s]+@[^@\s]+$")
    is_admin: bool = False
    days: int = Field(7, ge=1, le=90)


class InviteOut(BaseModel):
    email: str
    url: str = Field(description="The one-time link to send the invitee; shown only now.")
    days: int


class TokenIn(Body):
    name: str = Field(
        min_length=1, max_length=200, description="What will use the token, to know what to revoke."
    )
    collections: list[Name] | None = Field(
        None,
        max_length=50,
        description="It reads only these (each one you may read); null: all you may read.",
    )


class TokenOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    name: str
    collections: list[str] | None = Field(
        description="The collections it is held to; null: all its owner may read."
    )
    created_at: datetime
    last_used_at: datetime | None


class NewTokenOut(TokenOut):
    token: str = Field(description="Send it as `Authorization: Bearer <token>`; shown only now.")
