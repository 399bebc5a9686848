"""The bounds every loader shares: a file's size (max_file_mb) and the seconds spent reading it
(max_read_seconds), the loaders' options.

A file's bytes are bounded before it is read (max_file_mb), but the work they cost is not: 200 MB of
deeply nested HTML takes minutes to walk, and a plugin's parser can take any time at all. The
dispatcher (`loaders.load`) runs each file's loader on a clock that counts only while the loader runs
— not while the caller stores what it yielded, so a large JSONL is never cut short by a slow
database. Loaders call `check(unit, number)` in their loops (per page, element, line); the dispatcher also
checks after every document, so a loader that never checks still stops at the next one. One C call
(lxml parsing a file) cannot be interrupted; its time is bounded by the file's size.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TypeVar

from pydantic import BaseModel, Field

T = TypeVar("T")


class LoaderOptions(BaseModel):
    # A file to ingest may hold, and a .gz may decompress to, at most this much (a zip bomb stops here).
    max_file_mb: float = Field(200, gt=0)
    max_read_seconds: float = Field(300, gt=0)  # reading one file (parsing, not storing); then refused


DEFAULT = LoaderOptions()


class LimitExceeded(Exception):
    """Reading stopped at one of the bounds; the message says which (shown as the file's LoadError)."""


@dataclass
class ReadingClock:
    limit_s: float
    spent_s: float = 0.0  # while paused
    resumed_at: float = 0.0
    deadline: float = math.inf  # while running: when the time left runs out (inf while paused)

    def resume(self) -> None:
        self.resumed_at = time.monotonic()
        self.deadline = self.resumed_at + self.limit_s - self.spent_s

    def pause(self) -> None:
        self.spent_s += time.monotonic() - self.resumed_at
        self.deadline = math.inf

    def exceeded(self, unit: str, number: int | None) -> LimitExceeded:
        where = unit if number is None else f"{unit} {number}"
        return LimitExceeded(
            f"reading took longer than {self.limit_s:g} s (setting max_read_seconds; stopped at {where})"
        )


_clock: ContextVar[ReadingClock | None] = ContextVar("reading_clock", default=None)


def check(unit: str, number: int | None) -> None:
    """LimitExceeded when the file being read has used its time; the message says how far it got
    ("stopped at line 1234"). Cheap enough to call per element: no string is built until then."""
    clock = _clock.get()
    if clock is not None and time.monotonic() > clock.deadline:
        raise clock.exceeded(unit, number)


def timed(items: Iterator[T], limit_s: float) -> Iterator[T]:
    """`items`, with the clock running (and `check` live) only inside each step of the loader."""
    clock = ReadingClock(limit_s)
    count = 0
    while True:
        token = _clock.set(clock)
        clock.resume()
        try:
            item = next(items)
        except StopIteration:
            return
        finally:
            clock.pause()
            _clock.reset(token)
        count += 1
        if clock.spent_s > clock.limit_s:
            raise clock.exceeded("document", count)
        yield item
