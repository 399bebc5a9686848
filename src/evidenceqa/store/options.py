"""The store's options: where the web app's database is, and how long a login lasts.

Apart from the store's modules (SQLAlchemy, the web extra), so the core's Settings composes them."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from evidenceqa.home import HomeOptions

# Where the web app's guards keep their counts (evidenceqa.store.counters).
CounterKind = Literal["memory", "database", "redis"]


class StoreOptions(HomeOptions):
    # Users, conversations, answers, feedback. None: SQLite at <home>/app.sqlite3; else a SQLAlchemy
    # URL, e.g. postgresql+psycopg://user:pw@host/db.
    database_url: str | None = None
    session_days: int = Field(14, ge=1)  # how long a login lasts at most
    # A login unused this long ends: a ward's computers are shared, and a chat left open is someone's.
    session_idle_minutes: int = Field(60, ge=5)
