"""Reading JSONL files whose rows are checked: a bad line is an error that names it; and the short
digest of a JSON value that identifies a model or a list in a cache key."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")


def read_rows(path: Path, parse: Callable[[Any], T], what: str) -> Iterator[T]:
    """Each non-blank line of `path`, decoded and passed through `parse`. A line that is not JSON,
    or that `parse` refuses (KeyError, TypeError, ValueError), is a ValueError naming the file, the
    line and `what` it should have been ("a benchmark row")."""
    with path.open(encoding="utf-8") as stream:
        for line_no, line in enumerate(stream, start=1):
            if not line.strip():
                continue
            try:
                row = parse(json.loads(line))
            except (KeyError, TypeError, ValueError) as exc:  # JSONDecodeError is a ValueError
                raise ValueError(f"{path}:{line_no}: not {what} ({exc})") from None
            yield row


def json_fingerprint(value: Any) -> str:
    """16 hex digits of the SHA-256 of `value` as key-sorted JSON: the same value, the same digest."""
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()[:16]
