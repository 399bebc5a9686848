"""The first schema: accounts, conversations, answer records, feedback.

Revision ID: 0001
Revises: none

Written out in full rather than imported from models.py: a migration must keep creating the schema
as it was at this revision, whatever the models later become. Names are wrapped in op.f() because
they are final: the models' naming convention must not be applied to them again.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

_TIME = sa.DateTime(timezone=True)


def _id() -> sa.Column[int]:
    return sa.Column("id", sa.Integer(), nullable=False)


def upgrade() -> None:
    _accounts()
    _conversations()


def _accounts() -> None:
    op.create_table(
        "users",
        _id(),
        sa.Column("email", sa.String(320), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("password_hash", sa.String(200), nullable=False),
        sa.Column("is_admin", sa.Boolean(), nullable=False),
        sa.Column("active", sa.Boolean(), nullable=False),
        sa.Column("created_at", _TIME, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_users")),
        sa.UniqueConstraint("email", name=op.f("uq_users_email")),
    )
    op.create_table(
        "invites",
        sa.Column("token_hash", sa.String(64), nullable=False),
        sa.Column("email", sa.String(320), nullable=False),
        sa.Column("is_admin", sa.Boolean(), nullable=False),
        sa.Column("created_by", sa.Integer(), nullable=True),
        sa.Column("created_at", _TIME, nullable=False),
        sa.Column("expires_at", _TIME, nullable=False),
        sa.Column("used_at", _TIME, nullable=True),
        sa.PrimaryKeyConstraint("token_hash", name=op.f("pk_invites")),
        sa.ForeignKeyConstraint(
            ["created_by"], ["users.id"], name=op.f("fk_invites_created_by_users"), ondelete="SET NULL"
        ),
    )
    op.create_table(
        "api_tokens",
        _id(),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("token_hash", sa.String(64), nullable=False),
        sa.Column("created_at", _TIME, nullable=False),
        sa.Column("last_used_at", _TIME, nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_api_tokens")),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_api_tokens_user_id_users"), ondelete="CASCADE"
        ),
        sa.UniqueConstraint("token_hash", name=op.f("uq_api_tokens_token_hash")),
    )
    op.create_index(op.f("ix_api_tokens_user_id"), "api_tokens", ["user_id"])
    op.create_table(
        "login_sessions",
        sa.Column("id", sa.String(64), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("csrf_token", sa.String(64), nullable=False),
        sa.Column("created_at", _TIME, nullable=False),
        sa.Column("expires_at", _TIME, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_login_sessions")),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_login_sessions_user_id_users"), ondelete="CASCADE"
        ),
    )
    op.create_index(op.f("ix_login_sessions_user_id"), "login_sessions", ["user_id"])


def _conversations() -> None:
    op.create_table(
        "conversations",
        _id(),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("title", sa.String(200), nullable=False),
        sa.Column("created_at", _TIME, nullable=False),
        sa.Column("updated_at", _TIME, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_conversations")),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_conversations_user_id_users"), ondelete="CASCADE"
        ),
    )
    op.create_index(op.f("ix_conversations_user_id_updated_at"), "conversations", ["user_id", "updated_at"])
    op.create_table(
        "messages",
        _id(),
        sa.Column("conversation_id", sa.Integer(), nullable=False),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("created_at", _TIME, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_messages")),
        sa.ForeignKeyConstraint(
            ["conversation_id"],
            ["conversations.id"],
            name=op.f("fk_messages_conversation_id_conversations"),
            ondelete="CASCADE",
        ),
        sa.CheckConstraint("role IN ('user', 'assistant')", name=op.f("ck_messages_role")),
    )
    op.create_index(op.f("ix_messages_conversation_id_id"), "messages", ["conversation_id", "id"])
    _answer_records()
    _feedback()


def _answer_records() -> None:
    op.create_table(
        "answer_records",
        _id(),
        sa.Column("message_id", sa.Integer(), nullable=False),
        sa.Column("question", sa.Text(), nullable=False),
        sa.Column("answer", sa.Text(), nullable=False),
        sa.Column("abstained", sa.Boolean(), nullable=False),
        sa.Column("citations", sa.JSON(), nullable=False),
        sa.Column("sentences", sa.JSON(), nullable=False),
        sa.Column("filters", sa.JSON(), nullable=False),
        sa.Column("temporal", sa.Text(), nullable=True),
        sa.Column("timings_ms", sa.JSON(), nullable=False),
        sa.Column("cost_usd", sa.Float(), nullable=False),
        sa.Column("cost_by_stage", sa.JSON(), nullable=False),
        sa.Column("usage", sa.JSON(), nullable=False),
        sa.Column("cache_hit", sa.Boolean(), nullable=False),
        sa.Column("index_version", sa.Integer(), nullable=False),
        sa.Column("generator", sa.String(200), nullable=False),
        sa.Column("unsupported", sa.Integer(), nullable=False),
        sa.Column("p_answerable", sa.Float(), nullable=True),
        sa.Column("query_id", sa.String(200), nullable=True),
        sa.Column("created_at", _TIME, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_answer_records")),
        sa.ForeignKeyConstraint(
            ["message_id"],
            ["messages.id"],
            name=op.f("fk_answer_records_message_id_messages"),
            ondelete="CASCADE",
        ),
        sa.UniqueConstraint("message_id", name=op.f("uq_answer_records_message_id")),
    )
    op.create_index(op.f("ix_answer_records_created_at"), "answer_records", ["created_at"])


def _feedback() -> None:
    op.create_table(
        "feedback",
        _id(),
        sa.Column("answer_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("rating", sa.Float(), nullable=False),
        sa.Column("comment", sa.Text(), nullable=False),
        sa.Column("created_at", _TIME, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_feedback")),
        sa.ForeignKeyConstraint(
            ["answer_id"],
            ["answer_records.id"],
            name=op.f("fk_feedback_answer_id_answer_records"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_feedback_user_id_users"), ondelete="CASCADE"
        ),
        sa.UniqueConstraint("answer_id", "user_id", name=op.f("uq_feedback_answer_id_user_id")),
        sa.CheckConstraint("rating IN (1.0, 0.6, 0.2)", name=op.f("ck_feedback_rating")),
    )
    op.create_index(op.f("ix_feedback_created_at"), "feedback", ["created_at"])


def downgrade() -> None:
    for table in ("feedback", "answer_records", "messages", "conversations"):
        op.drop_table(table)
    for table in ("login_sessions", "api_tokens", "invites", "users"):
        op.drop_table(table)
