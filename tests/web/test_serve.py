"""`evidenceqa serve`'s first start: an administrator with a one-time password, and only once.
(The browser test runs the command itself and logs in with what it prints.)"""

from __future__ import annotations

from pathlib import Path

from evidenceqa.cli.serve import first_admin
from evidenceqa.config import Settings
from evidenceqa.store import authenticate, list_users, open_store


def test_the_first_start_creates_one_administrator(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path, admin_email="Lead@Example.org")
    email, password = first_admin(settings)
    assert email == "Lead@Example.org" and len(password) >= 16
    assert first_admin(settings) is None  # accounts exist: no second admin, no password shown
    with open_store(settings) as store:
        [admin] = list_users(store)
        assert admin.is_admin and admin.email == "lead@example.org"
        assert authenticate(store, email, password).id == admin.id
