"""Which collections an account may read: every collection but the restricted ones, and of those the
ones granted to it. An API token may be held to fewer (`api_tokens.collections`).

What a reader may read is decided here; searching only within it is the web layer's
(`web/entitlements.py`), which turns it into the engine's pre-filter.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import delete, select
from sqlalchemy.exc import IntegrityError

from evidenceqa.store.db import Store
from evidenceqa.store.models import CollectionGrant, RestrictedCollection, User


class EntitlementError(ValueError):
    """A restriction or grant that cannot be made; the message says why."""


@dataclass(frozen=True)
class Access:
    """What one reader may read: not `forbidden`, and only `only` when it is set (a token's list)."""

    forbidden: frozenset[str] = frozenset()  # restricted collections not granted to the account
    only: frozenset[str] | None = None

    @property
    def unlimited(self) -> bool:
        return not self.forbidden and self.only is None

    def may_read(self, collection: str) -> bool:
        return collection not in self.forbidden and (self.only is None or collection in self.only)


def _name(collection: str) -> str:
    name = collection.strip()
    if not name or len(name) > 200:
        raise EntitlementError(f"a collection name is 1 to 200 characters: {collection!r}")
    return name


def restricted_collections(store: Store) -> dict[str, list[str]]:
    """Each restricted collection → the emails of the accounts granted it."""
    with store.read() as session:
        names = list(session.scalars(select(RestrictedCollection.name).order_by(RestrictedCollection.name)))
        grants = session.execute(
            select(CollectionGrant.collection, User.email)
            .join(User, CollectionGrant.user_id == User.id)
            .order_by(User.email)
        )
        found: dict[str, list[str]] = {name: [] for name in names}
        for collection, email in grants:
            found[collection].append(email)
    return found


def restrict(store: Store, collection: str) -> bool:
    """Only accounts granted `collection` may read it from now on; False when it already was."""
    name = _name(collection)
    try:
        with store.transaction() as session:
            session.add(RestrictedCollection(name=name, created_at=store.now()))
    except IntegrityError:
        return False
    return True


def open_to_all(store: Store, collection: str) -> bool:
    """Every account may read `collection` again (its grants go); False when it was not restricted."""
    with store.transaction() as session:
        session.execute(delete(CollectionGrant).where(CollectionGrant.collection == collection))
        found = session.get(RestrictedCollection, collection)
        if found is not None:
            session.delete(found)
        return found is not None


def grant(store: Store, user: User, collection: str) -> None:
    """Let `user` read the restricted `collection` (EntitlementError when it is not restricted)."""
    with store.transaction() as session:
        if session.get(RestrictedCollection, collection) is None:
            raise EntitlementError(
                f"{collection!r} is not a restricted collection: every account may read it"
            )
        if session.get(CollectionGrant, (user.id, collection)) is None:
            session.add(CollectionGrant(user_id=user.id, collection=collection, created_at=store.now()))


def withdraw(store: Store, user: User, collection: str) -> bool:
    """`user` may no longer read the restricted `collection`; False when they had no grant."""
    with store.transaction() as session:
        found = session.get(CollectionGrant, (user.id, collection))
        if found is not None:
            session.delete(found)
        return found is not None


def access_of(store: Store, user: User, token_collections: list[str] | None = None) -> Access:
    """What `user` may read, through a token held to `token_collections` when it is."""
    with store.read() as session:
        restricted = set(session.scalars(select(RestrictedCollection.name)))
        granted = set(
            session.scalars(select(CollectionGrant.collection).where(CollectionGrant.user_id == user.id))
        )
    only = frozenset(token_collections) if token_collections is not None else None
    return Access(frozenset(restricted - granted), only)


def check_token_collections(store: Store, user: User, collections: list[str]) -> list[str]:
    """A token's collections, each named once, when the account may read every one; else EntitlementError."""
    names = list(dict.fromkeys(_name(c) for c in collections))
    if not names:
        raise EntitlementError(
            "a token's collections: name at least one (or none at all, for all the account may read)"
        )
    forbidden = sorted(set(names) & access_of(store, user).forbidden)
    if forbidden:
        raise EntitlementError(
            f"{user.email} may not read {', '.join(forbidden)}: a token cannot read more than its account"
        )
    return names
