"""Benchmark review: candidate question–answer pairs per benchmark, and reviewers' decisions on them.

Revision ID: 0003
Revises: 0002

`review_candidates` holds each candidate as loaded by `evidenceqa benchmark review` (the whole
candidate as JSON in `data`); `review_decisions` keeps every decision taken on one — accept, edit or
reject, the edited fields, who and when — and the newest one is in force.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

_TIME = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "review_candidates",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("benchmark", sa.String(100), nullable=False),
        sa.Column("candidate_id", sa.String(64), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("data", sa.JSON(), nullable=False),
        sa.Column("imported_at", _TIME, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_review_candidates")),
        sa.UniqueConstraint(
            "benchmark", "candidate_id", name=op.f("uq_review_candidates_benchmark_candidate_id")
        ),
    )
    op.create_index(
        op.f("ix_review_candidates_benchmark_position"), "review_candidates", ["benchmark", "position"]
    )
    op.create_table(
        "review_decisions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("candidate_pk", sa.Integer(), nullable=False),
        sa.Column("decision", sa.String(16), nullable=False),
        sa.Column("question", sa.Text(), nullable=True),
        sa.Column("answer", sa.Text(), nullable=True),
        sa.Column("gold_doc_ids", sa.JSON(), nullable=True),
        sa.Column("question_type", sa.String(32), nullable=True),
        sa.Column("expected_precision", sa.String(16), nullable=True),
        sa.Column("topic", sa.String(200), nullable=True),
        sa.Column("comment", sa.Text(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=True),
        sa.Column("reviewer", sa.String(320), nullable=False),
        sa.Column("created_at", _TIME, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_review_decisions")),
        sa.ForeignKeyConstraint(
            ["candidate_pk"],
            ["review_candidates.id"],
            name=op.f("fk_review_decisions_candidate_pk_review_candidates"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_review_decisions_user_id_users"), ondelete="SET NULL"
        ),
        sa.CheckConstraint(
            "decision IN ('accept', 'edit', 'reject')", name=op.f("ck_review_decisions_decision")
        ),
    )
    op.create_index(op.f("ix_review_decisions_candidate_pk_id"), "review_decisions", ["candidate_pk", "id"])


def downgrade() -> None:
    op.drop_table("review_decisions")
    op.drop_table("review_candidates")
