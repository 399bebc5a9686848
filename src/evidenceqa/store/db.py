"""Opening the web app's database: an engine, a session factory, and the schema migrated to head.

SQLite (a file in the data home) by default, PostgreSQL by URL. Every open runs the Alembic
migrations shipped in `migrations/`, so a new release brings its schema with it; several workers
opening at once take a lock first, so only one of them migrates.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from sqlalchemy import Connection, Engine, create_engine, event, make_url, text
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import StaticPool

from evidenceqa.registry import MissingExtra
from evidenceqa.store.options import StoreOptions

MIGRATIONS = Path(__file__).parent / "migrations"
# Any fixed number: the PostgreSQL advisory lock that serialises migrations across workers.
_MIGRATION_LOCK = 0x45514153
_ALEMBIC = threading.Lock()


def _utcnow() -> datetime:
    return datetime.now(UTC)


# An execution option: this transaction only reads, so on SQLite it need not take the write lock.
_READ_ONLY = "evidenceqa_read_only"


@dataclass
class Store:
    """The open database. `clock` is replaceable so tests can move time (expiry of sessions, invites)."""

    engine: Engine
    sessions: sessionmaker[Session]
    settings: StoreOptions
    clock: Callable[[], datetime] = field(default=_utcnow)
    readers: sessionmaker[Session] = field(init=False)  # the sessions of `read()`

    def __post_init__(self) -> None:
        self.readers = sessionmaker(self.engine.execution_options(**{_READ_ONLY: True}))

    def now(self) -> datetime:
        return self.clock()

    def ping(self) -> None:
        """A round trip to the database; raises whatever the driver raises when it cannot."""
        with self.engine.connect() as connection:
            connection.execute(text("SELECT 1"))

    @contextmanager
    def transaction(self) -> Iterator[Session]:
        """One unit of work: committed when the block ends, rolled back if it raises."""
        with self.sessions.begin() as session:
            yield session

    @contextmanager
    def read(self) -> Iterator[Session]:
        """A transaction that only reads. On SQLite it is deferred: it reads a WAL snapshot and never
        waits for, or holds up, a writer. It is rolled back when the block ends (closing the session)."""
        with self.readers() as session:
            yield session

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def database_url(settings: StoreOptions) -> str:
    """The configured URL, else the SQLite file in the data home."""
    if settings.database_url:
        return settings.database_url
    return f"sqlite:///{(settings.home / 'app.sqlite3').resolve()}"


def open_store(settings: StoreOptions) -> Store:
    url = database_url(settings)
    engine = _engine(url)
    migrate(engine)
    # expire_on_commit=False: the objects a function returns stay readable after its session closes.
    return Store(engine, sessionmaker(engine, expire_on_commit=False), settings)


def _engine(url: str) -> Engine:
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite":
        # pre_ping: a pilot's database may restart between requests.
        try:
            return create_engine(url, pool_pre_ping=True)
        except ModuleNotFoundError as exc:  # the driver: psycopg for postgresql+psycopg://
            raise MissingExtra(f"a {parsed.get_backend_name()} database", "postgres", exc.name) from None
    options: dict[str, Any] = {}
    if parsed.database in (None, "", ":memory:"):
        # One shared connection, or every thread would see its own empty in-memory database.
        options = {"poolclass": StaticPool, "connect_args": {"check_same_thread": False}}
    else:
        Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(url, **options)
    event.listen(engine, "connect", _sqlite_connect)
    event.listen(engine, "begin", _sqlite_begin)
    return engine


def _sqlite_connect(dbapi_connection: Any, _record: Any) -> None:
    # Python's sqlite3 would BEGIN only before DML (not DDL or SELECT); _sqlite_begin takes over.
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA busy_timeout = 10000")  # first: wait for other writers instead of failing
    cursor.execute("PRAGMA foreign_keys = ON")  # off by default, per connection
    cursor.execute("PRAGMA journal_mode = WAL")  # readers do not wait for the writer
    cursor.close()


def _sqlite_begin(connection: Connection) -> None:
    # IMMEDIATE takes the write lock up front: a deferred transaction that reads and then writes
    # can fail with "database is locked" when another writer got in between, without waiting. A
    # read-only one has no such upgrade to make, so it is deferred and holds no lock.
    read_only = connection.get_execution_options().get(_READ_ONLY, False)
    connection.exec_driver_sql("BEGIN" if read_only else "BEGIN IMMEDIATE")


def alembic_config(connection: Connection | None = None) -> Config:
    """Alembic's configuration built in code (no alembic.ini). With a connection, env.py uses it."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["connection"] = connection
    return config


def migrate(engine: Engine, revision: str = "head") -> None:
    """Upgrade the schema to `revision` in one transaction (PostgreSQL and SQLite have transactional DDL)."""
    # Alembic keeps the running migration in module globals (`alembic.context`): one thread at a time.
    with _ALEMBIC, engine.begin() as connection:
        if engine.dialect.name == "postgresql":
            # Held until commit; on SQLite, BEGIN IMMEDIATE already serialises migrating workers.
            connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _MIGRATION_LOCK})
        command.upgrade(alembic_config(connection), revision)
