"""Bounds on reading one PDF: the bytes its compressed streams inflate to (pages: pdf_layout; time: limits).

A PDF is bounded by its file size before it is read (max_file_mb), but its streams are compressed:
a few kilobytes of Flate data can inflate to gigabytes, and pdfminer inflates a stream whole, in
memory. While a PDF is read here, pdfminer's zlib is one that counts what every stream inflates to
against the file's budget (the same max_file_mb, as a .gz's decompressed size is), and stops with a
clear error at the limit instead of filling memory.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import pdfminer.pdftypes

from evidenceqa.loaders.limits import LimitExceeded

MB = 1024 * 1024
MAX_PAGES = 2000  # a book, not an article; beyond this a file is refused whole


@dataclass
class Budget:
    inflated_left: int
    max_mb: float

    def inflated(self, size: int) -> None:
        self.inflated_left -= size
        if self.inflated_left < 0:
            raise LimitExceeded(
                f"its compressed streams inflate to more than {self.max_mb:g} MB (setting max_file_mb)"
            )


_budget: ContextVar[Budget | None] = ContextVar("pdf_budget", default=None)


class _Inflater:
    """zlib.decompressobj whose output counts against the budget of the PDF being read."""

    def __init__(self, *args: Any) -> None:
        self._inflater = zlib.decompressobj(*args)

    def decompress(self, data: bytes, max_length: int = 0) -> bytes:
        budget = _budget.get()
        if budget is None:
            return self._inflater.decompress(data, max_length)
        # One byte past what is left: enough to know the limit is passed, never more in memory.
        allowed = budget.inflated_left + 1
        out = self._inflater.decompress(data, min(max_length, allowed) if max_length else allowed)
        budget.inflated(len(out))
        return out

    def flush(self, *args: Any) -> bytes:
        out = self._inflater.flush(*args)
        budget = _budget.get()
        if budget is not None:
            budget.inflated(len(out))
        return out

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inflater, name)


class _BoundedZlib:
    """What pdfminer.pdftypes sees as `zlib`: the real module, but inflation is counted."""

    error = zlib.error

    @staticmethod
    def decompressobj(*args: Any) -> _Inflater:
        return _Inflater(*args)

    @staticmethod
    def decompress(data: bytes, *args: Any) -> bytes:
        inflater = _Inflater(*args[:1])  # zlib.decompress(data, wbits, bufsize): keep wbits
        out = inflater.decompress(data)  # past the budget, this raises LimitExceeded
        if not inflater.eof:
            raise zlib.error("incomplete or truncated stream")  # as zlib.decompress says it
        return out + inflater.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(zlib, name)


# pdfminer reads `zlib` from its module's globals at each call, so this takes effect at once. Outside a
# `bounded()` block the counting zlib behaves exactly as the real one.
pdfminer.pdftypes.zlib = _BoundedZlib()  # type: ignore[assignment]


@contextmanager
def bounded(max_bytes: int) -> Iterator[Budget]:
    """The bounds of one PDF's reading, for the block (and only this thread or task's reading)."""
    budget = Budget(max_bytes, max_bytes / MB)
    token = _budget.set(budget)
    try:
        yield budget
    finally:
        _budget.reset(token)
