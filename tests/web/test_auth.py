"""Where a login returns to: only a path on this site."""

from __future__ import annotations

import pytest

from evidenceqa.web.auth import login_url, safe_next


@pytest.mark.parametrize(
    ("asked", "goes_to"),
    [("/admin", "/admin"), ("/conversations/3?x=1", "/conversations/3?x=1"), ("//evil.example", "/"),
     ("/\\evil.example", "/"), ("https://evil.example/", "/"), ("", "/"), (None, "/")],
)  # fmt: skip
def test_login_only_returns_to_a_path_on_this_site(asked: str | None, goes_to: str) -> None:
    assert safe_next(asked) == goes_to


def test_the_login_link_carries_the_page_asked_for() -> None:
    assert login_url("/") == "/login"
    assert login_url("/conversations/3") == "/login?next=/conversations/3"
