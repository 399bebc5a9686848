"""Entitlements: collections only the accounts granted them may read, and API tokens that read fewer
collections than their owner may.

Revision ID: 0007
Revises: 0006

`restricted_collections` names the restricted collections (every other one is open to every
account); `collection_grants` pairs an account with a restricted collection it may read;
`api_tokens.collections` is the list a token is held to (NULL: all its owner may read).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

_TIME = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "restricted_collections",
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("created_at", _TIME, nullable=False),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_restricted_collections")),
    )
    op.create_table(
        "collection_grants",
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("collection", sa.String(200), nullable=False),
        sa.Column("created_at", _TIME, nullable=False),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_collection_grants_user_id_users"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["collection"],
            ["restricted_collections.name"],
            name=op.f("fk_collection_grants_collection_restricted_collections"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("user_id", "collection", name=op.f("pk_collection_grants")),
    )
    with op.batch_alter_table("api_tokens") as batch:
        batch.add_column(sa.Column("collections", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("api_tokens") as batch:
        batch.drop_column("collections")
    op.drop_table("collection_grants")
    op.drop_table("restricted_collections")
