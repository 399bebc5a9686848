"""Fixtures: the analytics' data home (tests/analytics/home.py), opened, and cheap password hashing."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from argon2 import PasswordHasher

from evidenceqa.answer.engine import Engine
from evidenceqa.settings import Settings
from evidenceqa.store import accounts
from tests.analytics.home import build_home


@pytest.fixture(scope="session")
def analytics_settings(tmp_path_factory: pytest.TempPathFactory, models_dir: Path) -> Settings:
    return build_home(tmp_path_factory.mktemp("analytics"), models_dir)


@pytest.fixture(scope="session")
def engine(analytics_settings: Settings) -> Iterator[Engine]:
    with Engine.open(analytics_settings) as opened:
        yield opened


@pytest.fixture(autouse=True)
def cheap_hashing(monkeypatch: pytest.MonkeyPatch) -> None:
    # Real argon2 with the smallest parameters: the simulated pilot logs in several people.
    monkeypatch.setattr(
        accounts, "password_hasher", PasswordHasher(time_cost=1, memory_cost=8, parallelism=1)
    )
