"""Which way each answer was asked: the chat page, the JSON API, an MCP client or an
OpenAI-compatible client, so pilot analytics count agents' use beside clinicians'.

Revision ID: 0006
Revises: 0005

Answers stored before this revision read "chat": most were, and nothing recorded which were not.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("answer_records") as batch:
        batch.add_column(sa.Column("channel", sa.String(16), nullable=False, server_default="chat"))


def downgrade() -> None:
    with op.batch_alter_table("answer_records") as batch:
        batch.drop_column("channel")
