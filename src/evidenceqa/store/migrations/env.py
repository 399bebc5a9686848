"""Alembic environment for the web app's store.

`evidenceqa.store.db.migrate` runs this with a connection already inside a transaction (passed in
`config.attributes["connection"]`). To write a new migration, autogenerate against a database at head:

    from evidenceqa.store.db import alembic_config
    from alembic import command
    config = alembic_config(); config.set_main_option("sqlalchemy.url", "sqlite:///dev.sqlite3")
    command.revision(config, message="what changed", autogenerate=True)

then read and edit the generated file in versions/ (name it NNNN_what.py, revision = "NNNN").
"""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection, create_engine

from evidenceqa.store.models import Base

config = context.config


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=Base.metadata,
        # SQLite cannot ALTER most things; batch mode copies the table instead.
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def _run_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    engine = create_engine(config.get_main_option("sqlalchemy.url") or "")
    with engine.begin() as connection:
        _run(connection)
    engine.dispose()


if context.is_offline_mode():
    raise SystemExit("offline (--sql) migrations are not supported; run against a database")
_run_online()
