"""Components by name: loaders, embedders, search backends and generators, found through entry points.

The built-ins register in this project's pyproject.toml exactly as a third-party package registers in
its own, so a plugin is a package that declares, say,

    [project.entry-points."evidenceqa.generators"]
    echo = "evidenceqa_echo:from_settings"

and `generator = "echo"` then uses it, without touching this project. What each group's object must
be is in docs/architecture.md ("The four protocols"). An entry point may name the extra its
component needs (`"evidenceqa.index.milvus:open_milvus [milvus]"`): when that extra is not installed,
loading the component is one clear error saying what to install.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from importlib.metadata import EntryPoint, entry_points
from typing import Any, Literal

Kind = Literal["loader", "embedder", "backend", "generator"]
GROUPS: dict[Kind, str] = {
    "loader": "evidenceqa.loaders",
    "embedder": "evidenceqa.embedders",
    "backend": "evidenceqa.backends",
    "generator": "evidenceqa.generators",
}


class UnknownComponent(ValueError):
    """No component of that kind has that name; the message lists the names there are."""


class MissingExtra(ImportError):
    """A component or command needs optional dependencies that are not installed."""

    def __init__(self, what: str, extra: str, missing: str | None) -> None:
        because = f" (no module named {missing!r})" if missing else ""
        super().__init__(f"{what} needs the '{extra}' extra: pip install 'evidenceqa[{extra}]'{because}")
        self.extra = extra


@cache
def _entry_points(kind: Kind) -> dict[str, EntryPoint]:
    # Later distributions do not override earlier ones silently: the first of a name wins, and
    # names() shows which ones there are.
    found: dict[str, EntryPoint] = {}
    for point in entry_points(group=GROUPS[kind]):
        found.setdefault(point.name, point)
    return found


def names(kind: Kind) -> list[str]:
    """Every registered name of this kind, sorted."""
    return sorted(_entry_points(kind))


def is_registered(kind: Kind, name: str) -> bool:
    return name in _entry_points(kind)


def load(kind: Kind, name: str) -> Any:
    """The object registered as `name`: UnknownComponent if there is none, MissingExtra if its extra
    is not installed."""
    point = _point(kind, name)
    with _extra_of(point, kind):
        return point.load()


def create(kind: Kind, name: str, *args: Any) -> Any:
    """The component a registered factory builds from `args`; a factory that imports its extra's
    modules only when called (so that listing components stays light) fails the same clear way."""
    point = _point(kind, name)
    with _extra_of(point, kind):
        return point.load()(*args)


def _point(kind: Kind, name: str) -> EntryPoint:
    point = _entry_points(kind).get(name)
    if point is None:
        raise UnknownComponent(f"unknown {kind} {name!r}; choose from: {', '.join(names(kind))}")
    return point


@contextmanager
def _extra_of(point: EntryPoint, kind: Kind) -> Iterator[None]:
    try:
        yield
    except ModuleNotFoundError as exc:
        if not point.extras:
            raise
        raise MissingExtra(f"the {kind} {point.name!r}", point.extras[0], exc.name) from None
