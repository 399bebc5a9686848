"""The one error type of ingestion: it names the input and the reason, on one line."""

from __future__ import annotations

from pathlib import Path


class LoadError(Exception):
    def __init__(self, path: Path | str, reason: str, record: int | None = None) -> None:
        self.path = str(path)
        # One line, whatever a parser's message held (libxml2's end in a newline): errors are listed by line.
        self.reason = " ".join(reason.split())
        self.record = record  # 1-based line number inside a multi-record file
        super().__init__(str(self))

    def __str__(self) -> str:
        where = f"{self.path}:{self.record}" if self.record is not None else self.path
        return f"{where}: {self.reason}"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LoadError) and (self.path, self.reason, self.record) == (
            other.path,
            other.reason,
            other.record,
        )

    def __hash__(self) -> int:
        return hash((self.path, self.reason, self.record))
