"""The reader's access as the engine's pre-filter: only collections they may read are named."""

from __future__ import annotations

import pytest
from starlette.exceptions import HTTPException

from evidenceqa.index.base import Filters
from evidenceqa.store import Access
from evidenceqa.web.entitlements import within_access

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
    assert held == Filters(year_min=2015, collections=("default", "guidelines"))
    token = within_access(Access(only=frozenset({"guidelines", "not-ingested"})), None, LIBRARY)
    assert token == Filters(collections=("guidelines",))


def test_asking_for_a_collection_not_granted_or_having_none_is_refused() -> None:
    access = Access(forbidden=frozenset({"licensed"}))
    assert within_access(access, Filters(collections=("default",)), LIBRARY) == Filters(
        collections=("default",)
    )
    with pytest.raises(HTTPException) as refused:
        within_access(access, Filters(collections=("default", "licensed")), LIBRARY)
    assert refused.value.status_code == 403 and refused.value.detail.endswith("collection licensed")
    with pytest.raises(HTTPException, match="may read no collection"):
        within_access(Access(only=frozenset({"journals"})), None, LIBRARY)
