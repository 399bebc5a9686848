"""Searches and reads that return passages but no answer (MCP search_evidence, get_passage,
list_collections and documents; /api/search; the OpenAI endpoint's search model), so the pilot
report counts agents' use beside the answers.

Revision ID: 0009
Revises: 0008
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "lookups",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("channel", sa.String(16), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("results", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_lookups_user_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_lookups")),
    )
    op.create_index(op.f("ix_lookups_created_at"), "lookups", ["created_at"])


def downgrade() -> None:
    op.drop_index(op.f("ix_lookups_created_at"), "lookups")
    op.drop_table("lookups")
