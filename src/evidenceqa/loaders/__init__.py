"""Turn files into Documents. `load(path)` sniffs the content, picks the loader and never raises.

Each format has its own module exposing `load(path: Path) -> Iterator[Document | LoadError]`,
registered by name (group `evidenceqa.loaders`), and `VERSION`, bumped when it reads files
differently (so ingest reads again the files an earlier version read). The built-in formats are
recognised by their content; a plugin's loader also declares `SUFFIXES`, the file endings it reads,
and is chosen by them. A loader raises `LoadError` for a whole-file problem; a multi-record format
(JSONL) yields a `LoadError` for a bad record and goes on with the rest. Files are untrusted input:
a file over `max_file_mb` is refused before it is read, and a .gz stops decompressing at the same
size; reading one file may take `max_read_seconds` (limits: the time the loader runs, not the
caller's storing).
"""

from __future__ import annotations

import gzip
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path

from evidenceqa import registry
from evidenceqa.documents import Document
from evidenceqa.loaders.errors import LoadError
from evidenceqa.loaders.limits import DEFAULT, LimitExceeded, LoaderOptions, timed

__all__ = [
    "DEFAULT_MAX_FILE_MB",
    "DEFAULT_MAX_READ_SECONDS",
    "SUPPORTED_SUFFIXES",
    "LoadError",
    "LoaderOptions",
    "detect_format",
    "iter_files",
    "load",
    "reader_version",
]

DEFAULT_MAX_FILE_MB = DEFAULT.max_file_mb
DEFAULT_MAX_READ_SECONDS = DEFAULT.max_read_seconds
MB = 1 << 20

# What each extension promises; content sniffing decides, and a mismatch is an error.
_SUFFIX_FORMATS: dict[str, set[str]] = {
    ".jsonl": {"jsonl"},
    ".json": {"jsonl"},
    ".xml": {"jats", "medquad", "bmc", "html"},
    ".nxml": {"jats"},
    ".pdf": {"pdf"},
    ".html": {"html"},
    ".htm": {"html"},
    ".xhtml": {"html"},
    ".md": {"markdown"},
    ".markdown": {"markdown"},
    ".txt": {"text", "markdown"},
}
SUPPORTED_SUFFIXES = frozenset(_SUFFIX_FORMATS) | {s + ".gz" for s in (".jsonl", ".json")}

# The formats content sniffing recognises; any other registered loader is a plugin's.
BUILT_IN = frozenset({"jsonl", "jats", "bmc", "medquad", "pdf", "html", "markdown", "text"})
_ROOT_TAG = re.compile(rb"<(?!\?|!)([A-Za-z][\w:.-]*)")
_SNIFF_BYTES = 4096


_XML_ROOTS = {"article": "jats", "document": "medquad", "art": "bmc"}


def _xml_root(text: bytes) -> str:
    """The root element's local name, skipping the prolog, comments and DOCTYPE."""
    match = _ROOT_TAG.search(re.sub(rb"<!--.*?-->|<!DOCTYPE[^>]*>", b"", text, flags=re.S))
    return match.group(1).decode("ascii", "replace").split(":")[-1] if match else ""


def _sniff(head: bytes) -> str | None:
    """Guess the format from the first bytes; None when nothing matches (not a document we know)."""
    if head.startswith(b"%PDF") or b"%PDF-" in head[:1024]:
        return "pdf"
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if text.startswith(b"{"):
        return "jsonl"
    lowered = text.lower()
    if lowered.startswith(b"<!doctype html") or b"<html" in lowered[:2048]:
        return "html"
    if text.startswith(b"<"):
        return _XML_ROOTS.get(_xml_root(text).lower())
    if b"\x00" in head:
        return None
    return "text"


def detect_format(path: Path) -> str:
    """The loader name for `path`, or LoadError saying why the file is not a document we can read."""
    suffixes = [s.lower() for s in path.suffixes[-2:]]
    gzipped = bool(suffixes) and suffixes[-1] == ".gz"
    suffix = suffixes[-2] if gzipped and len(suffixes) == 2 else (suffixes[-1] if suffixes else "")
    if not gzipped and suffix in plugin_suffixes():
        return plugin_suffixes()[suffix]
    try:
        with path.open("rb") as raw:
            head = raw.read(_SNIFF_BYTES)
        if head.startswith(b"\x1f\x8b"):
            gzipped = True
            with gzip.open(path, "rb") as inner:
                head = inner.read(_SNIFF_BYTES)
    except FileNotFoundError:
        raise LoadError(path, "file not found") from None
    except IsADirectoryError:
        raise LoadError(path, "is a directory") from None
    except (OSError, EOFError) as exc:
        raise LoadError(path, f"cannot be read ({exc})") from None
    if not head.strip():
        raise LoadError(path, "empty file")
    fmt = _sniff(head)
    if fmt == "text" and suffix in {".md", ".markdown"}:
        fmt = "markdown"
    if fmt is None and head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"<"):
        raise LoadError(
            path, f"XML of an unknown kind (root <{_xml_root(head)}>; expected JATS, MedQuAD or BMC)"
        )
    if fmt is None:
        raise LoadError(path, "not a document (binary content of an unknown type)")
    if gzipped and fmt != "jsonl":
        raise LoadError(path, f"compressed {fmt} is not supported; only .jsonl.gz is")
    expected = _SUFFIX_FORMATS.get(suffix)
    if expected is not None and fmt not in expected:
        raise LoadError(path, f"wrong extension: '{suffix}' but the content is {fmt.upper()}")
    if expected is None and fmt == "text":
        raise LoadError(path, f"unsupported file type '{suffix or path.name}'")
    return fmt


def load(
    path: Path | str, max_mb: float = DEFAULT_MAX_FILE_MB, max_seconds: float = DEFAULT_MAX_READ_SECONDS
) -> Iterator[Document | LoadError]:
    """Every document in `path`, with problems as LoadError values instead of exceptions."""
    path = Path(path)
    try:
        _check_size(path, max_mb)
        fmt = detect_format(path)
        module = registry.load("loader", fmt)
        # JSONL reads a stream (it may be gzipped) and PDF inflates streams, both bounded by the same
        # size; the others read a file already checked above.
        items = module.load(path, int(max_mb * MB)) if fmt in ("jsonl", "pdf") else module.load(path)
        for item in timed(items, max_seconds):
            if isinstance(item, Document) and item.source is None:
                item.source = str(path)
            yield item
    except LoadError as exc:
        yield exc
    except LimitExceeded as exc:
        yield LoadError(path, f"refused: {exc}")
    except Exception as exc:  # a parser bug must cost one file, never the batch
        yield LoadError(path, f"could not be parsed ({type(exc).__name__}: {exc})")


def reader_version(fmt: str) -> str:
    """`fmt@VERSION`: the loader that reads format `fmt` and its version (0 where it declares none).
    Ingest stores it with each file, so a file read by an earlier version of its loader is read
    again, and what the loader now reads better (a PDF's tables, say) reaches libraries made before."""
    return f"{fmt}@{getattr(registry.load('loader', fmt), 'VERSION', 0)}"


@cache
def plugin_suffixes() -> dict[str, str]:
    """File ending → the plugin loader that reads it. A plugin cannot take over a built-in ending:
    those are decided by content."""
    claimed: dict[str, str] = {}
    for name in registry.names("loader"):
        if name not in BUILT_IN:
            for suffix in registry.load("loader", name).SUFFIXES:
                if suffix.lower() not in _SUFFIX_FORMATS:
                    claimed.setdefault(suffix.lower(), name)
    return claimed


def _check_size(path: Path, max_mb: float) -> None:
    """Refuse a file over the limit before reading it: parsers hold a whole file (and more) in memory."""
    try:
        size = path.stat().st_size
    except OSError:
        return  # detect_format names the problem (missing, unreadable)
    if size > max_mb * MB:
        raise LoadError(
            path, f"too large: {size / MB:.1f} MB, over the {max_mb:g} MB limit (setting max_file_mb)"
        )


def iter_files(paths: list[Path]) -> Iterator[Path]:
    """Expand directories into the supported files below them, in a stable order.

    Licence, README and similar files inside a folder are passed over; a file named explicitly
    is always tried.
    """
    for path in paths:
        if path.is_dir():
            for child in sorted(p for p in path.rglob("*") if p.is_file()):
                if _is_supported(child):
                    yield child
        else:
            yield path


# Files that travel with a collection but are not evidence: never index a licence as an answer.
_NOT_DOCUMENTS = re.compile(r"^(license|licence|copying|notice|readme|attribution|changelog|sources)\b", re.I)


def _is_supported(path: Path) -> bool:
    name = path.name.lower()
    if _NOT_DOCUMENTS.match(name) or name.startswith("."):
        return False
    return any(name.endswith(suffix) for suffix in SUPPORTED_SUFFIXES | plugin_suffixes().keys())
