"""Searches and reads without an answer, counted per channel and kind for a period, on SQLite and
PostgreSQL."""

from __future__ import annotations

from datetime import timedelta

from evidenceqa.store import Store, create_user, lookups_between, record_lookup
from tests.store.conftest import Clock

PASSWORD = "correct horse battery"


def test_lookups_are_counted_per_channel_and_kind_within_the_period(store: Store, clock: Clock) -> None:
    alice = create_user(store, "alice@example.org", "Alice", PASSWORD)
    start = clock.now
    record_lookup(store, alice, "mcp", "search", 10)
    record_lookup(store, alice, "mcp", "search", 0)  # a search that found nothing is still a use
    record_lookup(store, alice, "mcp", "passage", 1)
    record_lookup(store, alice, "api", "search", 5)
    clock.advance(days=2)
    record_lookup(store, alice, "openai", "search", 10)
    first_day = lookups_between(store, start, start + timedelta(days=1))
    assert first_day == {("mcp", "search"): 2, ("mcp", "passage"): 1, ("api", "search"): 1}
    assert lookups_between(store, start + timedelta(days=1), clock.now + timedelta(seconds=1)) == {
        ("openai", "search"): 1
    }
