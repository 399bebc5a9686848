"""The web app's tables: accounts (users, invites, password resets, API tokens, login sessions), the guards'
counters, and conversations (messages, the full record of each answer, and clinicians' feedback on it).

Secrets are never stored: invites, API tokens and login sessions keep the SHA-256 of a random token,
passwords an argon2 hash. Times are UTC and come back timezone-aware on SQLite and PostgreSQL alike.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, ClassVar, Literal

from sqlalchemy import (
    JSON,
    Boolean,
    CheckConstraint,
    DateTime,
    Dialect,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Text,
    TypeDecorator,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

# Feedback ratings: the pilot's three-point scale, as the numbers the analytics average.
RATINGS: dict[str, float] = {"Excellent": 1.0, "Acceptable": 0.6, "Very poor": 0.2}
Channel = Literal["chat", "api", "mcp", "openai"]
# What a caller looked up without asking for an answer: ranked passages, one passage in its context,
# the library's holdings, a whole document.
LookupKind = Literal["search", "passage", "collections", "document"]

# Named constraints, so later migrations (and SQLite's batch mode) can refer to them by name.
NAMING = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class UTCDateTime(TypeDecorator[datetime]):
    """A UTC instant. SQLite keeps no zone and would hand back naive datetimes; this makes both aware."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError(f"naive datetime {value}: pass a timezone-aware one (UTC)")
        return value.astimezone(UTC)

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)
    type_annotation_map: ClassVar[dict[Any, Any]] = {
        datetime: UTCDateTime(),
        dict[str, Any]: JSON,
        list[dict[str, Any]]: JSON,
    }

    def __repr__(self) -> str:
        # The key only: no password hash or other column ends up in a log line or a test failure.
        key = ", ".join(
            f"{column.key}={getattr(self, column.key)!r}" for column in self.__table__.primary_key
        )
        return f"{type(self).__name__}({key})"


class User(Base):
    __tablename__ = "users"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    email: Mapped[str] = mapped_column(String(320), unique=True)  # normalised: stripped, lower case
    name: Mapped[str] = mapped_column(String(200))
    password_hash: Mapped[str] = mapped_column(String(200))
    is_admin: Mapped[bool] = mapped_column(Boolean)
    active: Mapped[bool] = mapped_column(Boolean)
    created_at: Mapped[datetime]


class Invite(Base):
    __tablename__ = "invites"

    token_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    email: Mapped[str] = mapped_column(String(320))
    is_admin: Mapped[bool] = mapped_column(Boolean)
    # None when the first admin is invited from the command line.
    created_by: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    created_at: Mapped[datetime]
    expires_at: Mapped[datetime]
    used_at: Mapped[datetime | None]


class ApiToken(Base):
    __tablename__ = "api_tokens"
    __table_args__ = (Index(None, "user_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(200))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime]
    last_used_at: Mapped[datetime | None]
    # The collections it may read (within its owner's); None: all its owner may read.
    collections: Mapped[list[str] | None] = mapped_column(JSON, default=None)


class RestrictedCollection(Base):
    """A collection only the accounts granted it may read (a publisher's licensed content, say);
    every other collection is open to every account."""

    __tablename__ = "restricted_collections"

    name: Mapped[str] = mapped_column(String(200), primary_key=True)
    created_at: Mapped[datetime]


class CollectionGrant(Base):
    """An account that may read a restricted collection."""

    __tablename__ = "collection_grants"

    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), primary_key=True)
    collection: Mapped[str] = mapped_column(
        ForeignKey("restricted_collections.name", ondelete="CASCADE"), primary_key=True
    )
    created_at: Mapped[datetime]


class LoginSession(Base):
    __tablename__ = "login_sessions"
    __table_args__ = (Index(None, "user_id"),)

    id: Mapped[str] = mapped_column(String(64), primary_key=True)  # SHA-256 of the cookie's token
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    csrf_token: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime]
    expires_at: Mapped[datetime]
    last_seen_at: Mapped[datetime | None]  # written at most once a minute; None: never since created


class PasswordReset(Base):
    """A one-time link an administrator made for someone who forgot their password."""

    __tablename__ = "password_resets"
    __table_args__ = (Index(None, "user_id"),)

    token_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    created_by: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    created_at: Mapped[datetime]
    expires_at: Mapped[datetime]
    used_at: Mapped[datetime | None]


class GuardCounter(Base):
    """One counter of the web app's guards, shared by every worker (guard_counters = "database"): a
    user's recent requests (a rate limit), or an account's or an address's failed logins. The key is a
    hash, so the table lists no emails or addresses; `expires_at` is in seconds since the epoch."""

    __tablename__ = "guard_counters"
    __table_args__ = (Index(None, "expires_at"),)

    key: Mapped[str] = mapped_column(String(80), primary_key=True)
    state: Mapped[Any] = mapped_column(JSON)
    expires_at: Mapped[float] = mapped_column(Float)


class Conversation(Base):
    __tablename__ = "conversations"
    # A user's conversation list, newest first.
    __table_args__ = (Index(None, "user_id", "updated_at"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    title: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime]
    # Deleted by its reader: gone from their list and pages; its answers still count in the pilot.
    deleted_at: Mapped[datetime | None] = mapped_column(default=None)


class Message(Base):
    __tablename__ = "messages"
    __table_args__ = (
        Index(None, "conversation_id", "id"),
        CheckConstraint("role IN ('user', 'assistant')", name="role"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    conversation_id: Mapped[int] = mapped_column(ForeignKey("conversations.id", ondelete="CASCADE"))
    role: Mapped[Literal["user", "assistant"]] = mapped_column(String(16))  # held to these by the CHECK
    text: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime]
    # The answer record behind an assistant message; loaded by `messages_of`.
    answer: Mapped[AnswerRecord | None] = relationship(viewonly=True)


class AnswerRecord(Base):
    """Everything `Answer` holds, so an answer can be shown again and analysed without re-asking."""

    __tablename__ = "answer_records"
    __table_args__ = (Index(None, "created_at"),)  # analytics read answers by time

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    message_id: Mapped[int] = mapped_column(ForeignKey("messages.id", ondelete="CASCADE"), unique=True)
    question: Mapped[str] = mapped_column(Text)
    answer: Mapped[str] = mapped_column(Text)
    abstained: Mapped[bool] = mapped_column(Boolean)
    citations: Mapped[list[dict[str, Any]]]
    sentences: Mapped[list[dict[str, Any]]]
    filters: Mapped[dict[str, Any]]
    temporal: Mapped[str | None] = mapped_column(Text)
    timings_ms: Mapped[dict[str, Any]]
    cost_usd: Mapped[float] = mapped_column(Float)  # the total
    cost_by_stage: Mapped[dict[str, Any]]  # every stage but "total"
    usage: Mapped[dict[str, Any]]  # prompt and completion tokens
    cache_hit: Mapped[bool] = mapped_column(Boolean)
    index_version: Mapped[int] = mapped_column(Integer)
    generator: Mapped[str] = mapped_column(String(200))
    unsupported: Mapped[int] = mapped_column(Integer)
    p_answerable: Mapped[float | None] = mapped_column(Float)
    query_id: Mapped[str | None] = mapped_column(String(200))
    searched_for: Mapped[str | None] = mapped_column(Text)  # a follow-up as it was resolved
    nearest: Mapped[list[dict[str, Any]] | None]  # an abstention's closest passages
    # Who asked through what: the chat page, the JSON API, an MCP client or an OpenAI-compatible one.
    channel: Mapped[Channel] = mapped_column(String(16), default="chat", server_default="chat")
    created_at: Mapped[datetime]


class Lookup(Base):
    """One search or read that returned passages but no answer (an agent's search_evidence, a
    script's /api/search): counted in the pilot report beside the answers. The question is not kept:
    a search is not a conversation, and nothing reads it back."""

    __tablename__ = "lookups"
    __table_args__ = (Index(None, "created_at"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    channel: Mapped[Channel] = mapped_column(String(16))
    kind: Mapped[LookupKind] = mapped_column(String(16))
    results: Mapped[int] = mapped_column(Integer)  # passages (or collections) returned
    created_at: Mapped[datetime]


class GapReport(Base):
    """A reader telling the library team that the library lacks what they asked ("tell the library
    team" under an abstention), with what they were looking for; one per reader per answer."""

    __tablename__ = "gap_reports"
    __table_args__ = (UniqueConstraint("answer_id", "user_id"), Index(None, "created_at"))

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    answer_id: Mapped[int] = mapped_column(ForeignKey("answer_records.id", ondelete="CASCADE"))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    comment: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime]


class Feedback(Base):
    __tablename__ = "feedback"
    __table_args__ = (
        UniqueConstraint("answer_id", "user_id"),  # one rating per user per answer; a new one replaces it
        Index(None, "created_at"),
        CheckConstraint("rating IN (1.0, 0.6, 0.2)", name="rating"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    answer_id: Mapped[int] = mapped_column(ForeignKey("answer_records.id", ondelete="CASCADE"))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    rating: Mapped[float] = mapped_column(Float)
    comment: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime]


# Failure categories of a poorly rated or abstained answer (see evidenceqa.analytics.failures).
FAILURE_CATEGORIES: tuple[str, ...] = ("missing_content", "retrieval_mismatch", "temporal", "edge_case")
_CATEGORY_SQL = "IN ('missing_content', 'retrieval_mismatch', 'temporal', 'edge_case')"


class FailureLabel(Base):
    """The automatic category of a failed answer, with its evidence, and the admin's correction if any."""

    __tablename__ = "failure_labels"
    __table_args__ = (
        CheckConstraint(f"category {_CATEGORY_SQL}", name="category"),
        CheckConstraint(f"automatic_category {_CATEGORY_SQL}", name="automatic_category"),
    )

    answer_id: Mapped[int] = mapped_column(
        ForeignKey("answer_records.id", ondelete="CASCADE"), primary_key=True
    )
    category: Mapped[str] = mapped_column(String(32))  # in force: the correction, else the automatic one
    automatic_category: Mapped[str] = mapped_column(String(32))
    evidence: Mapped[dict[str, Any]]
    labelled_at: Mapped[datetime]  # when the automatic category was last computed
    corrected_by: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    corrected_at: Mapped[datetime | None]


# Benchmark review (evidenceqa.curation): candidate pairs loaded per benchmark, and reviewers' decisions.
class ReviewCandidate(Base):
    """One candidate question–answer pair of a benchmark under review (`data`: Candidate.to_dict())."""

    __tablename__ = "review_candidates"
    __table_args__ = (UniqueConstraint("benchmark", "candidate_id"), Index(None, "benchmark", "position"))

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    benchmark: Mapped[str] = mapped_column(String(100))
    candidate_id: Mapped[str] = mapped_column(String(64))
    position: Mapped[int] = mapped_column(Integer)  # the order of the candidates file
    data: Mapped[dict[str, Any]]
    imported_at: Mapped[datetime]


class ReviewDecision(Base):
    """A reviewer's decision; every one is kept (who, when), the newest is the one in force."""

    __tablename__ = "review_decisions"
    __table_args__ = (
        Index(None, "candidate_pk", "id"),
        CheckConstraint("decision IN ('accept', 'edit', 'reject')", name="decision"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    candidate_pk: Mapped[int] = mapped_column(ForeignKey("review_candidates.id", ondelete="CASCADE"))
    decision: Mapped[str] = mapped_column(String(16))
    question: Mapped[str | None] = mapped_column(Text)  # edits: None keeps the proposal's value
    answer: Mapped[str | None] = mapped_column(Text)
    gold_doc_ids: Mapped[list[str] | None] = mapped_column(JSON)
    question_type: Mapped[str | None] = mapped_column(String(32))
    expected_precision: Mapped[str | None] = mapped_column(String(16))
    topic: Mapped[str | None] = mapped_column(String(200))
    comment: Mapped[str] = mapped_column(Text)
    # The account that decided on the review page; None for decisions imported from a CSV.
    user_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    reviewer: Mapped[str] = mapped_column(String(320))  # as recorded: the account's email, or the CSV's name
    created_at: Mapped[datetime]
