"""An abstention with a next step: its closest passages, kept with the answer so the chat shows
them again, and the gaps readers report to the library team ("tell the library team"), which the
pilot report's content-gap list reads.

Revision ID: 0010
Revises: 0009

Answers stored before this revision have no closest passages.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("answer_records") as batch:
        batch.add_column(sa.Column("nearest", sa.JSON(), nullable=True))
    op.create_table(
        "gap_reports",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("answer_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("comment", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["answer_id"],
            ["answer_records.id"],
            name=op.f("fk_gap_reports_answer_id_answer_records"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_gap_reports_user_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_gap_reports")),
        sa.UniqueConstraint("answer_id", "user_id", name=op.f("uq_gap_reports_answer_id_user_id")),
    )
    op.create_index(op.f("ix_gap_reports_created_at"), "gap_reports", ["created_at"])


def downgrade() -> None:
    op.drop_index(op.f("ix_gap_reports_created_at"), "gap_reports")
    op.drop_table("gap_reports")
    with op.batch_alter_table("answer_records") as batch:
        batch.drop_column("nearest")
