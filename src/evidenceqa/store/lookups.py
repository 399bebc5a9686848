"""Searches and reads that return passages but no answer, by whom and through which channel: so
the pilot report counts an agent's use of the library even when it writes the answer itself."""

from __future__ import annotations

from collections import Counter
from datetime import datetime

from sqlalchemy import func, select

from evidenceqa.store.db import Store
from evidenceqa.store.models import Channel, Lookup, LookupKind, User


def record_lookup(store: Store, user: User, channel: Channel, kind: LookupKind, results: int) -> None:
    with store.transaction() as session:
        session.add(
            Lookup(user_id=user.id, channel=channel, kind=kind, results=results, created_at=store.now())
        )


def lookups_between(store: Store, start: datetime, end: datetime) -> Counter[tuple[str, str]]:
    """(channel, kind) → lookups with start <= created_at < end."""
    query = (
        select(Lookup.channel, Lookup.kind, func.count())
        .where(Lookup.created_at >= start, Lookup.created_at < end)
        .group_by(Lookup.channel, Lookup.kind)
    )
    with store.read() as session:
        return Counter({(channel, kind): count for channel, kind, count in session.execute(query)})
