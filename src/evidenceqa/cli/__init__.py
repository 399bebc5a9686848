"""The `evidenceqa` command: thin shells over the pipeline's functions, one module per group.

The core commands (ingest, search, ask, calibrate…) need the core install only. A command group that
needs an extra registers only when the extra is installed; without it, the group is still listed and
answers with one line naming the extra to install.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys

from rich.markup import escape

from evidenceqa.cli import ask, calibrate, library, search
from evidenceqa.cli.app import app
from evidenceqa.cli.common import disk_full, err, labelled
from evidenceqa.library.vocabulary import ShorthandError
from evidenceqa.registry import MissingExtra, UnknownComponent

# module: (its extra, the commands it adds, the top-level packages of that extra)
_WEB = {
    "fastapi",
    "uvicorn",
    "jinja2",
    "multipart",
    "sqlalchemy",
    "alembic",
    "argon2",
    "httpx",
    "matplotlib",
    "mcp",
}
OPTIONAL: dict[str, tuple[str, tuple[str, ...], set[str]]] = {
    "serve": ("web", ("serve", "admin"), _WEB),
    "agents": ("web", ("mcp", "token"), _WEB),
    "report": ("web", ("report",), _WEB),
    "benchmark": ("web", ("benchmark",), _WEB),
    "bench": ("bench", ("bench",), _WEB),
    "adapt": (
        "adapt",
        ("adapt", "train-reranker"),
        {"scipy", "torch", "sentence_transformers", "transformers"},
    ),
}

__all__ = ["app", "ask", "calibrate", "library", "main", "search"]


def _needs(extra: str, command: str, missing: str) -> None:
    @app.command(command, context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
                 add_help_option=False, help=escape(f"(needs the '{extra}' extra: pip install 'evidenceqa[{extra}]')"))  # fmt: skip
    def unavailable() -> None:
        raise MissingExtra(f"evidenceqa {command}", extra, missing)


def _register_optional() -> None:
    # Looked up, not imported: training imports torch only when it starts, and a command whose extra
    # is half there should still fail at once in one line.
    for module, (extra, commands, packages) in OPTIONAL.items():
        missing = next((p for p in sorted(packages) if importlib.util.find_spec(p) is None), None)
        if missing is None:
            importlib.import_module(f"evidenceqa.cli.{module}")
            continue
        for command in commands:
            _needs(extra, command, missing)


_register_optional()


def main() -> None:
    """The console script: a missing extra, an unknown component name or a malformed shorthand file
    is one line, exit status 2; a full disk is one line, exit status 1."""
    try:
        app(prog_name="evidenceqa")
    except (MissingExtra, UnknownComponent, ShorthandError) as exc:
        err.print(labelled("error", "red", str(exc)), soft_wrap=True)
        sys.exit(2)
    except Exception as exc:
        if (reason := disk_full(exc)) is None:
            raise
        # Each file is ingested in one transaction and the index records a version only once it holds
        # all of it, so what was stored before the write that failed is whole, and a rerun completes.
        err.print(labelled("error", "red", f"the disk is full ({reason}); what was stored before is unchanged: "
                           "free some space and run the command again"), soft_wrap=True)  # fmt: skip
        sys.exit(1)
