"""Opening the store: URLs, migrations from empty and again, models matching migrations, SQLite pragmas."""

from __future__ import annotations

import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import inspect, text
from sqlalchemy.exc import IntegrityError

from evidenceqa.settings import Settings
from evidenceqa.store import Store, create_user, database_url, list_users, open_store
from evidenceqa.store.db import MIGRATIONS, alembic_config, migrate
from evidenceqa.store.models import Base, Message, User

TABLES = {
    "users",
    "invites",
    "password_resets",
    "api_tokens",
    "restricted_collections",
    "collection_grants",
    "login_sessions",
    "guard_counters",
    "lookups",
    "gap_reports",
    "conversations",
    "messages",
    "answer_records",
    "feedback",
    "failure_labels",
    "review_candidates",
    "review_decisions",
}


def test_default_url_is_sqlite_in_the_home(tmp_path: Path) -> None:
    assert database_url(Settings(home=tmp_path / "h")) == f"sqlite:///{tmp_path / 'h' / 'app.sqlite3'}"
    url = "postgresql+psycopg://u:p@db.example/evidenceqa"
    assert database_url(Settings(home=tmp_path, database_url=url)) == url


def test_database_url_from_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("EVIDENCEQA_DATABASE_URL", "postgresql+psycopg://u@h/d")
    monkeypatch.setenv("EVIDENCEQA_SESSION_DAYS", "3")
    settings = Settings(home=tmp_path)
    assert (settings.database_url, settings.session_days) == ("postgresql+psycopg://u@h/d", 3)
    monkeypatch.delenv("EVIDENCEQA_SESSION_DAYS")
    assert Settings(home=tmp_path).session_days == 14


def test_migrations_create_the_schema_from_empty(settings: Settings) -> None:
    with open_store(settings) as store:
        tables = set(inspect(store.engine).get_table_names())
        assert tables == TABLES | {"alembic_version"}
        with store.engine.connect() as connection:
            assert MigrationContext.configure(connection).get_current_revision() == _head()


def _head() -> str:
    return max(path.name.split("_")[0] for path in (MIGRATIONS / "versions").glob("[0-9]*.py"))


def test_migrating_again_changes_nothing(settings: Settings) -> None:
    with open_store(settings) as store:
        create_user(store, "a@example.org", "A", "correct horse battery")
        migrate(store.engine)  # upgrade to head twice
    with open_store(settings) as again:  # and a third time by opening
        assert [u.email for u in list_users(again)] == ["a@example.org"]
        assert set(inspect(again.engine).get_table_names()) == TABLES | {"alembic_version"}


def test_models_match_the_migrations(store: Store) -> None:
    """A model change without a migration (or the reverse) shows up here."""
    with store.engine.connect() as connection:
        context = MigrationContext.configure(connection, opts={"compare_type": True})
        assert compare_metadata(context, Base.metadata) == []


def test_downgrade_to_empty_and_up_again(settings: Settings) -> None:
    with open_store(settings) as store:
        with store.engine.begin() as connection:
            command.downgrade(alembic_config(connection), "base")
        assert set(inspect(store.engine).get_table_names()) <= {"alembic_version"}
        migrate(store.engine)
        assert set(inspect(store.engine).get_table_names()) == TABLES | {"alembic_version"}


def test_threads_opening_a_new_database_at_once_all_succeed(settings: Settings) -> None:
    with ThreadPoolExecutor(4) as pool:
        stores = list(pool.map(lambda _: open_store(settings), range(4)))
    for opened in stores:
        assert set(inspect(opened.engine).get_table_names()) == TABLES | {"alembic_version"}
        opened.close()


def test_worker_processes_opening_a_new_database_at_once_all_succeed(settings: Settings) -> None:
    """Web workers are processes: only the database's lock keeps them from migrating together."""
    script = "import sys; from evidenceqa.settings import Settings; from evidenceqa.store import open_store; "
    script += "open_store(Settings(home=sys.argv[1], database_url=sys.argv[2] or None)).close()"
    command = [sys.executable, "-c", script, str(settings.home), settings.database_url or ""]
    workers = [subprocess.Popen(command, stderr=subprocess.PIPE, text=True) for _ in range(3)]
    try:
        errors = [worker.communicate(timeout=120)[1] for worker in workers]
    finally:
        for worker in workers:
            worker.kill()
    assert [worker.returncode for worker in workers] == [0, 0, 0], errors
    with open_store(settings) as store:
        assert set(inspect(store.engine).get_table_names()) == TABLES | {"alembic_version"}


def test_foreign_keys_are_enforced(store: Store) -> None:
    with pytest.raises(IntegrityError), store.transaction() as session:
        session.add(Message(conversation_id=12345, role="user", text="orphan", created_at=store.now()))


def test_a_failed_transaction_leaves_nothing(store: Store) -> None:
    create_user(store, "kept@example.org", "K", "correct horse battery")
    with pytest.raises(RuntimeError), store.transaction() as session:
        session.add(User(email="gone@example.org", name="G", password_hash="x", is_admin=False,
                         active=True, created_at=store.now()))  # fmt: skip
        session.flush()
        raise RuntimeError("boom")
    assert [u.email for u in list_users(store)] == ["kept@example.org"]


def test_sqlite_runs_with_foreign_keys_and_wal(tmp_path: Path) -> None:
    with open_store(Settings(home=tmp_path)) as store, store.engine.connect() as connection:
        assert connection.execute(text("PRAGMA foreign_keys")).scalar() == 1
        assert connection.execute(text("PRAGMA journal_mode")).scalar() == "wal"
    assert (tmp_path / "app.sqlite3").exists()


def test_in_memory_sqlite_is_one_database_for_every_thread() -> None:
    with open_store(Settings(database_url="sqlite://")) as store:
        with ThreadPoolExecutor(1) as pool:
            pool.submit(create_user, store, "t@example.org", "T", "correct horse battery").result()
        assert [u.email for u in list_users(store)] == ["t@example.org"]
