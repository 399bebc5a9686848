"""The layers import one way (docs/architecture.md): a module may import its own package and the layers
below it, never a layer above, and packages that share a layer never import each other.

Every import counts, at module level or inside a function, `TYPE_CHECKING` included: a deferred
import is still a dependency, and the cycle it hides is still there."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"

# Lowest first. The store sits low on purpose: it keeps answers, accounts and feedback, and needs
# nothing of search or answering to do so (the record types it stores are in `records`).
LAYERS: list[set[str]] = [
    {"(root)", "documents", "home", "jsonl", "records", "registry", "text"},
    {"evidence_types"},  # reads a Document; loaders may state a type, so it sits below them
    {"loaders", "chunking", "store"},
    {"embeddings", "index"},
    {"library"},
    {"retrieval"},
    {"answer"},
    {"analytics", "curation", "adapt"},
    {"bench", "web"},
    {"settings"},  # composes every component's options: the composition root of the shells below
    {"asgi", "cli"},
    {"__main__"},
]
RANK = {part: rank for rank, parts in enumerate(LAYERS) for part in parts}


def part_of(module: str) -> str:
    """The first component under `evidenceqa`: its package, or the root module's name."""
    parts = module.split(".")
    if len(parts) == 1:
        return "(root)"
    return parts[1]


def imports(path: Path) -> set[str]:
    """Every evidenceqa module `path` imports, relative imports resolved."""
    module = ".".join(path.relative_to(SRC).with_suffix("").parts)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            names = [target] if node.module else [f"{target}.{a.name}" for a in node.names]
            found.update(n for n in names if n.split(".")[0] == "evidenceqa")
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "evidenceqa")
    return found


def violations(edges: dict[str, set[str]]) -> list[str]:
    """Each import (importer → imported, as module names) that points up or sideways."""
    wrong = []
    for importer, imported in sorted(edges.items()):
        source = part_of(importer)
        for target in sorted(imported):
            dest = part_of(target)
            if dest == source:
                continue
            if dest not in RANK:
                wrong.append(f"{importer} → {target}: {dest!r} is in no layer")
            elif RANK[dest] > RANK[source]:
                wrong.append(f"{importer} → {target}: {dest} is above {source}")
            elif RANK[dest] == RANK[source]:
                wrong.append(f"{importer} → {target}: {source} and {dest} share a layer")
    return wrong


def source_edges() -> dict[str, set[str]]:
    edges = {}
    for path in SRC.joinpath("evidenceqa").rglob("*.py"):
        if "migrations" in path.parts:  # Alembic's scripts, run by Alembic alone
            continue
        module = ".".join(path.relative_to(SRC).with_suffix("").parts).removesuffix(".__init__")
        edges[module] = imports(path)
    return edges


def test_every_package_is_in_a_layer() -> None:
    packages = {p.name for p in SRC.joinpath("evidenceqa").iterdir() if (p / "__init__.py").exists()}
    modules = {p.stem for p in SRC.joinpath("evidenceqa").glob("*.py")} - {"__init__"}
    assert (packages | modules) - set(RANK) == set()


def test_imports_point_down_only() -> None:
    assert violations(source_edges()) == []


@pytest.mark.parametrize(
    ("importer", "imported", "wrong"),
    [
        ("evidenceqa.web.api", "evidenceqa.cli.search", True),
        ("evidenceqa.web.pages", "evidenceqa.cli.app", True),
        ("evidenceqa.store.conversations", "evidenceqa.answer.pipeline", True),
        ("evidenceqa.store.review", "evidenceqa.curation.candidates", True),
        ("evidenceqa.index.lancedb", "evidenceqa.retrieval.fusion", True),
        ("evidenceqa.web.dashboard", "evidenceqa.bench.plots", True),  # same layer
        ("evidenceqa.retrieval.retriever", "evidenceqa.settings", True),  # options come from below
        ("evidenceqa.retrieval.temporal", "evidenceqa.index.base", False),
        ("evidenceqa.web.api", "evidenceqa.records", False),
    ],
)
def test_the_check_catches_the_wrong_way_imports_of_issue_18(
    importer: str, imported: str, wrong: bool
) -> None:
    assert bool(violations({importer: {imported}})) is wrong


def loaded_after(statement: str) -> set[str]:
    code = f"import sys; {statement}; print('\\n'.join(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return set(out.split())


def test_the_web_app_loads_no_cli_plotting_or_training_code() -> None:
    loaded = loaded_after("import evidenceqa.web.app")
    heavy = {m for m in loaded if m.split(".")[0] in {"typer", "matplotlib", "scipy", "torch"}}
    assert heavy == set()
    assert not any(m.startswith("evidenceqa.cli") for m in loaded)


def test_a_worker_process_loads_no_cli_code() -> None:
    loaded = loaded_after("import evidenceqa.asgi")
    assert "evidenceqa.web.app" in loaded
    assert not any(m.split(".")[0] == "typer" or m.startswith("evidenceqa.cli") for m in loaded)


def test_the_store_loads_no_search_answering_or_embedding_code() -> None:
    loaded = loaded_after("from evidenceqa.store import Store, open_store, record_exchange, start_session")
    ours = {m for m in loaded if m.startswith("evidenceqa.")}
    assert "evidenceqa.store.conversations" in ours  # the names the package exports were loaded
    assert {m.split(".")[1] for m in ours} <= {"home", "records", "registry", "store", "text"}


def test_settings_compose_every_option_without_the_web_extra() -> None:
    """The core installs no SQLAlchemy, FastAPI or matplotlib: the options of the store, the web app
    and the pilot report are declared apart from the code that needs them."""
    loaded = loaded_after("from evidenceqa.settings import Settings; Settings()")
    heavy = {"sqlalchemy", "alembic", "fastapi", "starlette", "matplotlib", "lancedb", "onnxruntime"}
    assert {m.split(".")[0] for m in loaded} & heavy == set()
