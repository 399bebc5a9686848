"""Account security: one-time password-reset links, and each login session's last activity (the idle
timeout).

Revision ID: 0004
Revises: 0003

`password_resets` keeps the SHA-256 of each link's token (like invites), whose account it resets,
which administrator made it, and when it expires or was used. `login_sessions.last_seen_at` is when the
session was last used (written at most once a minute); NULL for sessions made before this revision,
whose activity then counts from their creation.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

_TIME = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "password_resets",
        sa.Column("token_hash", sa.String(64), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("created_by", sa.Integer(), nullable=True),
        sa.Column("created_at", _TIME, nullable=False),
        sa.Column("expires_at", _TIME, nullable=False),
        sa.Column("used_at", _TIME, nullable=True),
        sa.PrimaryKeyConstraint("token_hash", name=op.f("pk_password_resets")),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_password_resets_user_id_users"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["created_by"],
            ["users.id"],
            name=op.f("fk_password_resets_created_by_users"),
            ondelete="SET NULL",
        ),
    )
    op.create_index(op.f("ix_password_resets_user_id"), "password_resets", ["user_id"])
    with op.batch_alter_table("login_sessions") as batch:
        batch.add_column(sa.Column("last_seen_at", _TIME, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("login_sessions") as batch:
        batch.drop_column("last_seen_at")
    op.drop_index(op.f("ix_password_resets_user_id"), table_name="password_resets")
    op.drop_table("password_resets")
