"""Restricted collections, grants and tokens held to some collections, on SQLite and PostgreSQL."""

from __future__ import annotations

import pytest

from evidenceqa.store import (
    Access,
    EntitlementError,
    Store,
    access_of,
    create_api_token,
    create_user,
    grant,
    open_to_all,
    restrict,
    restricted_collections,
    token_owner,
    withdraw,
)

PASSWORD = "correct horse battery"


def test_a_restricted_collection_is_read_only_by_the_accounts_granted_it(store: Store) -> None:
    alice = create_user(store, "alice@example.org", "Alice", PASSWORD)
    bob = create_user(store, "bob@example.org", "Bob", PASSWORD)
    assert access_of(store, alice) == Access()  # nothing restricted: everything may be read
    assert restrict(store, "licensed") and not restrict(store, "licensed")
    grant(store, bob, "licensed")
    grant(store, bob, "licensed")  # twice is once
    assert not access_of(store, alice).may_read("licensed") and access_of(store, alice).may_read("default")
    assert access_of(store, bob).may_read("licensed")
    assert restricted_collections(store) == {"licensed": ["bob@example.org"]}
    assert withdraw(store, bob, "licensed") and not withdraw(store, bob, "licensed")
    assert not access_of(store, bob).may_read("licensed")


def test_opening_a_collection_ends_its_restriction_and_its_grants(store: Store) -> None:
    bob = create_user(store, "bob@example.org", "Bob", PASSWORD)
    restrict(store, "licensed")
    grant(store, bob, "licensed")
    assert open_to_all(store, "licensed") and not open_to_all(store, "licensed")
    assert restricted_collections(store) == {} and access_of(store, bob) == Access()
    with pytest.raises(EntitlementError, match="'licensed' is not a restricted collection"):
        grant(store, bob, "licensed")


def test_a_token_reads_only_its_collections_and_never_more_than_its_account(store: Store) -> None:
    alice = create_user(store, "alice@example.org", "Alice", PASSWORD)
    restrict(store, "licensed")
    _, raw = create_api_token(store, alice, "open only", ["default", " default ", "guidelines"])
    owner = token_owner(store, raw)
    assert owner is not None and owner[1] == ["default", "guidelines"]  # each named once
    access = access_of(store, *owner)
    assert (
        access.may_read("guidelines") and not access.may_read("journals") and not access.may_read("licensed")
    )
    with pytest.raises(EntitlementError, match=r"alice@example\.org may not read licensed"):
        create_api_token(store, alice, "too much", ["default", "licensed"])
    with pytest.raises(EntitlementError, match="name at least one"):
        create_api_token(store, alice, "none", [])
    with pytest.raises(EntitlementError, match="a collection name is 1 to 200 characters"):
        create_api_token(store, alice, "blank", [" "])
    _, everything = create_api_token(store, alice, "all")
    found = token_owner(store, everything)
    assert found is not None and (found[0].id, found[1]) == (alice.id, None)
