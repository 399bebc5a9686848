"""Failure labels: the category of a poorly rated or abstained answer, and an admin's correction.

Revision ID: 0002
Revises: 0001

One row per answer. `automatic_category` is what the analytics found (with `evidence`, the signals
behind it); `category` is the label in force — the automatic one until an admin corrects it, when
`corrected_by` / `corrected_at` are set. Re-labelling never overwrites a corrected `category`.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

_CATEGORIES = "('missing_content', 'retrieval_mismatch', 'temporal', 'edge_case')"


def upgrade() -> None:
    op.create_table(
        "failure_labels",
        sa.Column("answer_id", sa.Integer(), nullable=False),
        sa.Column("category", sa.String(32), nullable=False),
        sa.Column("automatic_category", sa.String(32), nullable=False),
        sa.Column("evidence", sa.JSON(), nullable=False),
        sa.Column("labelled_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("corrected_by", sa.Integer(), nullable=True),
        sa.Column("corrected_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("answer_id", name=op.f("pk_failure_labels")),
        sa.ForeignKeyConstraint(
            ["answer_id"],
            ["answer_records.id"],
            name=op.f("fk_failure_labels_answer_id_answer_records"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["corrected_by"],
            ["users.id"],
            name=op.f("fk_failure_labels_corrected_by_users"),
            ondelete="SET NULL",
        ),
        sa.CheckConstraint(f"category IN {_CATEGORIES}", name=op.f("ck_failure_labels_category")),
        sa.CheckConstraint(
            f"automatic_category IN {_CATEGORIES}",
            name=op.f("ck_failure_labels_automatic_category"),
        ),
    )


def downgrade() -> None:
    op.drop_table("failure_labels")
