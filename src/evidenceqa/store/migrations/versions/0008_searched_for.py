"""What a follow-up question was searched as, once resolved against its conversation ("And in
children?" → "What are the symptoms of asthma in children?"), so an answer shows and is analysed
by what was really searched.

Revision ID: 0008
Revises: 0007

Answers stored before this revision have none: their questions were searched as asked.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("answer_records") as batch:
        batch.add_column(sa.Column("searched_for", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("answer_records") as batch:
        batch.drop_column("searched_for")
