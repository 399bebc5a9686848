"""The reader's access as the engine's pre-filter: only collections they may read are named."""

from __future__ import annotations

import asyncio

import pytest
from starlette.exceptions import HTTPException

from evidenceqa.index.base import Filters
from evidenceqa.store import Access, User
from evidenceqa.web.entitlements import Reader, held_filters, within_access

LIBRARY = ["default", "guidelines", "licensed"]


def test_a_reader_who_may_read_everything_keeps_their_filters() -> None:
    chosen = Filters(year_min=2015)
    assert (
        within_access(Access(), chosen, LIBRARY) is chosen and within_access(Access(), None, LIBRARY) is None
    )


def test_only_the_readable_collections_are_searched_and_the_others_never_named() -> None:
    held = within_access(
        Access(forbidden=frozenset({"licensed", "elsewhere"})), Filters(year_min=2015), LIBRARY
    )
    assert held == Filters(year_min=2015, readable=("default", "guidelines"))
    token = within_access(Access(only=frozenset({"guidelines", "not-ingested"})), None, LIBRARY)
    assert token == Filters(readable=("guidelines",))


def test_asking_for_a_collection_not_granted_or_having_none_is_refused() -> None:
    access = Access(forbidden=frozenset({"licensed"}))
    assert within_access(access, Filters(collections=("default",)), LIBRARY) == Filters(
        collections=("default",), readable=("default", "guidelines")
    )
    with pytest.raises(HTTPException) as refused:
        within_access(access, Filters(collections=("default", "licensed")), LIBRARY)
    assert refused.value.status_code == 403 and refused.value.detail.endswith("collection licensed")
    with pytest.raises(HTTPException, match="may read no collection"):
        within_access(Access(only=frozenset({"journals"})), None, LIBRARY)


class _CountingLibrary:
    """Counts the catalogue reads `held_filters` makes (the real one reads the catalogue)."""

    def __init__(self) -> None:
        self.reads = 0

    async def collections(self) -> list[str]:
        self.reads += 1
        return LIBRARY


def test_the_catalogue_is_read_only_for_a_reader_whose_access_is_limited() -> None:
    library, user = _CountingLibrary(), User(id=1, email="a@example.org", name="A")
    chosen = Filters(year_min=2015)
    assert asyncio.run(held_filters(Reader(user, Access()), chosen, library)) is chosen
    assert library.reads == 0
    limited = Reader(user, Access(forbidden=frozenset({"licensed"})))
    held = asyncio.run(held_filters(limited, None, library))
    assert held == Filters(readable=("default", "guidelines")) and library.reads == 1
