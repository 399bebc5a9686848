"""The `evidenceqa` command: thin shells over the pipeline's functions, one module per group."""

from evidenceqa.cli import adapt, ask, bench, benchmark, calibrate, library, report, search, serve
from evidenceqa.cli.app import app

__all__ = ["adapt", "app", "ask", "bench", "benchmark", "calibrate", "library", "report", "search", "serve"]
