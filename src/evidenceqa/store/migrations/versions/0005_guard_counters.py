"""The guards' counters in the database, so that several worker processes share rate limits and
login lockouts.

Revision ID: 0005
Revises: 0004

`guard_counters` holds one JSON state per hashed key (a user's recent requests, or an account's or an
address's failed logins) and when it expires, in seconds since the epoch.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "guard_counters",
        sa.Column("key", sa.String(80), nullable=False),
        sa.Column("state", sa.JSON(), nullable=False),
        sa.Column("expires_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("key", name=op.f("pk_guard_counters")),
    )
    op.create_index(op.f("ix_guard_counters_expires_at"), "guard_counters", ["expires_at"])


def downgrade() -> None:
    op.drop_index(op.f("ix_guard_counters_expires_at"), table_name="guard_counters")
    op.drop_table("guard_counters")
