"""Where each setting lives: every field of `Settings`, its default, the options class that declares
it, and the packages that read it.

Read from the source: `….settings.NAME` or `settings.NAME` attribute reads, and names listed in a
`…_SETTINGS` tuple (the answer cache's key), so the table in docs/architecture.md is regenerated,
never typed.
Run: .venv/bin/python scripts/settings_table.py
"""

from __future__ import annotations

import ast
import inspect
from collections import defaultdict
from pathlib import Path

from pydantic import BaseModel

from evidenceqa.settings import Settings
from evidenceqa.text import markdown

SRC = Path(__file__).resolve().parents[1] / "src" / "evidenceqa"
# The table reads as the pipeline: options of the lower layers first (docs/architecture.md).
STAGES = (
    "home",
    "loaders",
    "chunking",
    "store",
    "embeddings",
    "index",
    "retrieval",
    "answer",
    "analytics",
    "web",
)


def readers() -> dict[str, set[str]]:
    """Setting name → the packages (or root modules) whose code reads it."""
    fields = set(Settings.model_fields)
    derived = _properties()
    found: dict[str, set[str]] = defaultdict(set)
    for path in SRC.rglob("*.py"):
        if "migrations" in path.parts:
            continue
        relative = path.relative_to(SRC)
        where = relative.parts[0] if len(relative.parts) > 1 else relative.stem
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and _is_settings(node.value):
                for name in {node.attr} & fields | derived.get(node.attr, set()):
                    found[name].add(where)
            elif isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id.endswith("_SETTINGS") for t in node.targets
            ):
                for item in ast.walk(node.value):
                    if isinstance(item, ast.Constant) and item.value in fields:
                        found[str(item.value)].add(where)
    return found


def owner(name: str) -> type[BaseModel]:
    """The options class that declares field `name` (the component it belongs to)."""
    return next(c for c in Settings.__mro__ if name in getattr(c, "__annotations__", {}))


def _stage(cls: type) -> tuple[int, int]:
    return STAGES.index(cls.__module__.split(".")[1]), len(cls.__mro__)


def _options_classes() -> list[type[BaseModel]]:
    return [
        c for c in Settings.__mro__ if issubclass(c, BaseModel) and c.__module__.startswith("evidenceqa.")
    ]


def _properties() -> dict[str, set[str]]:
    """Each property of an options class (`models_path`, …) → the fields it is computed from."""
    found: dict[str, set[str]] = {}
    for cls in _options_classes():
        tree = ast.parse(inspect.getsource(cls))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and any(
                getattr(d, "id", "") == "property" for d in node.decorator_list
            ):
                found[node.name] = {
                    a.attr
                    for a in ast.walk(node)
                    if isinstance(a, ast.Attribute) and a.attr in Settings.model_fields
                }
    return found


def _is_settings(value: ast.expr) -> bool:
    name = value.attr if isinstance(value, ast.Attribute) else value.id if isinstance(value, ast.Name) else ""
    return name == "settings" or name.endswith("_settings")


def default(name: str) -> str:
    value = Settings.model_fields[name].get_default(call_default_factory=True)
    if value is None:
        return "–"
    if isinstance(value, Path):
        return f"`{value}`"
    return f"`{value!r}`" if isinstance(value, str) else f"`{value}`"


def main() -> None:
    read = readers()
    rows = []
    for cls in sorted(_options_classes()[1:], key=_stage):  # [0] is Settings: it declares none
        for name in cls.__annotations__:
            if name in Settings.model_fields and owner(name) is cls:
                readers_of = ", ".join(f"`{p}`" for p in sorted(read.get(name, ()))) or "**nothing**"
                rows.append((f"`{name}`", default(name), f"`{cls.__module__}.{cls.__name__}`", readers_of))
    print(markdown.table(("Setting", "Default", "Declared in", "Read by"), rows), end="")


if __name__ == "__main__":
    main()
