"""A reader's upkeep of their conversations: deleting one hides it from them for good, while its
answers stay in the pilot's figures (which count answers, never show whose).

Revision ID: 0011
Revises: 0010

Conversations stored before this revision are not deleted.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("conversations") as batch:
        batch.add_column(sa.Column("deleted_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("conversations") as batch:
        batch.drop_column("deleted_at")
