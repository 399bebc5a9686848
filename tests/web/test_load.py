"""A short run of benchmarks/load.py: 50 simulated users for 10 s against `evidenceqa serve` on loopback,
with no errors, the p95 reported, and the server's memory growing by less than MAX_GROWTH_MB."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from evidenceqa.config import Settings
from tests.conftest import REPO

pytestmark = pytest.mark.slow
USERS, SECONDS = 50, 10
# After the warm-up round, ten seconds of load may grow the server's resident memory by this much at most
# (sessions, the answer cache and SQLite pages; a leak per request would pass it within the run).
MAX_GROWTH_MB = 64


def test_fifty_users_for_ten_seconds_without_errors(web_settings: Settings) -> None:
    command = [sys.executable, str(REPO / "benchmarks" / "load.py"), "--home", str(web_settings.home),
               "--users", str(USERS), "--seconds", str(SECONDS), "--think-s", "1", "--json"]  # fmt: skip
    env = {**os.environ, "EVIDENCEQA_MODELS_DIR": str(web_settings.models_path)}
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    summary = json.loads(result.stdout)
    assert summary["errors"] == 0, summary["error_samples"]
    assert summary["latency_ms"]["ask"]["n"] >= USERS and summary["latency_ms"]["ask"]["p95"] > 0
    assert set(summary["latency_ms"]) == {"ask", "search", "conversations", "feedback"}
    assert summary["rss_mb"]["growth"] < MAX_GROWTH_MB, summary["rss_mb"]
