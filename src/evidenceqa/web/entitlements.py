"""Searching only what the reader may read: their `store.Access` as the engine's pre-filter.

The filter names the collections the reader may read (never the ones they may not, which a reader
must not learn of), so a collection ingested after the list was made is left out, not let in. They
go in `Filters.readable`, apart from the collections the reader chose, so that an answer shows only
the limits the reader set. When no collection is restricted and the token names none, filters pass
unchanged.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException

from evidenceqa.index.base import Filters
from evidenceqa.store import Access, Store, User, access_of
from evidenceqa.web.library import Library


@dataclass(frozen=True)
class Reader:
    """Who is reading, and what they may read."""

    user: User
    access: Access


async def reader_of(store: Store, user: User, token_collections: list[str] | None) -> Reader:
    return Reader(user, await run_in_threadpool(access_of, store, user, token_collections))


async def held_filters(reader: Reader, chosen: Filters | None, library: Library) -> Filters | None:
    """`within_access` for this reader; the library's collections are read only when the reader's
    access is limited, so an open library costs no catalogue read per question. 422 for a year range
    that holds no year, before any work is done."""
    if chosen is not None and (problem := chosen.year_problem()):
        raise HTTPException(422, problem)
    if reader.access.unlimited:
        return chosen
    return within_access(reader.access, chosen, await library.collections())


def within_access(access: Access, chosen: Filters | None, library: Iterable[str]) -> Filters | None:
    """`chosen` held to the collections of `library` the reader may read; 403 when a collection asked
    for may not be read, or when the reader may read none."""
    if access.unlimited:
        return chosen
    collections = sorted(set(library))
    readable = tuple(c for c in collections if access.may_read(c))
    if chosen is not None and chosen.collections:
        refused = sorted(c for c in chosen.collections if not access.may_read(c))
        if refused:
            raise HTTPException(403, f"your account may not read the collection {', '.join(refused)}")
    elif not readable:
        raise HTTPException(403, "your account may read no collection of this library")
    return replace(chosen or Filters(), readable=readable)
