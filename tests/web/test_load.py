"""Short runs of benchmarks/load.py against `evidenceqa serve` on loopback: 50 simulated users for 10 s
with no errors, the p95 reported, and the server's memory growing by less than MAX_GROWTH_MB; 200
logins at the same moment (the start of a shift), every one of them let in; 50 users for a minute while
a CPU hog keeps every core busy; one of two workers killed with SIGKILL under load; and PostgreSQL, then
Redis, stopped and started again mid-run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest

from evidenceqa.settings import Settings
from tests.conftest import REPO

pytestmark = pytest.mark.slow
USERS, SECONDS = 50, 10
# After the warm-up round, ten seconds of load may grow the server's resident memory by this much at most
# (sessions, the answer cache and SQLite pages; a leak per request would pass it within the run).
MAX_GROWTH_MB = 64


BURST = 200


def load(settings: Settings, *arguments: str) -> dict[str, Any]:
    command = [sys.executable, str(REPO / "benchmarks" / "load.py"), "--home", str(settings.home), *arguments,
               "--json"]  # fmt: skip
    env = {**os.environ, "EVIDENCEQA_MODELS_DIR": str(settings.models_path)}
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    summary: dict[str, Any] = json.loads(result.stdout)
    return summary


def test_two_hundred_logins_at_once_all_get_in(web_settings: Settings) -> None:
    summary = load(web_settings, "--users", str(BURST), "--logins-only")
    assert summary["errors"] == 0, summary["error_samples"]
    assert summary["logged_in"] == summary["latency_ms"]["login"]["n"] == BURST


def test_fifty_users_for_ten_seconds_without_errors(web_settings: Settings) -> None:
    summary = load(web_settings, "--users", str(USERS), "--seconds", str(SECONDS), "--think-s", "1")
    assert summary["errors"] == 0, summary["error_samples"]
    assert summary["latency_ms"]["ask"]["n"] >= USERS and summary["latency_ms"]["ask"]["p95"] > 0
    assert set(summary["latency_ms"]) == {"ask", "search", "conversations", "feedback"}
    assert summary["rss_mb"]["growth"] < MAX_GROWTH_MB, summary["rss_mb"]


def test_fifty_users_for_a_minute_on_a_busy_machine_without_errors(web_settings: Settings) -> None:
    summary = load(web_settings, "--users", str(USERS), "--seconds", "60", "--think-s", "1", "--hog")
    assert summary["setup"]["hog"] and summary["errors"] == 0, summary["error_samples"]
    assert summary["latency_ms"]["ask"]["n"] >= USERS


def test_a_worker_killed_under_load_leaves_the_others_answering(web_settings: Settings) -> None:
    users = 10
    summary = load(web_settings, "--users", str(users), "--seconds", "15", "--think-s", "1", "--workers", "2",
                   "--kill-worker-at", "4")  # fmt: skip
    killed = summary["killed_worker"]
    assert summary["errors"] <= users, summary["error_samples"]  # at most what the killed one was serving
    assert killed["errors_after_5_s"] == 0, summary["error_samples"]
    assert killed["workers_at_the_end"] == 2  # uvicorn started another in its place
    assert summary["latency_ms"]["ask"]["n"] >= 2 * users


def test_postgresql_stopped_mid_run_costs_only_clear_503s_and_loses_nothing(web_settings: Settings) -> None:
    summary = load(web_settings, "--users", "10", "--seconds", "20", "--think-s", "1", "--workers", "2",
                   "--postgres", "--outage", "postgres:5:4")  # fmt: skip
    outage = summary["outage"]
    assert outage["refused_clearly"] > 0  # the outage was felt
    assert outage["unclear_in_outage"] == outage["errors_outside"] == 0, summary["error_samples"]
    assert outage["acknowledged"]["answers"] > 0 and outage["lost"] == {"answers": 0, "ratings": 0}


def test_redis_stopped_mid_run_costs_no_request(web_settings: Settings) -> None:
    summary = load(web_settings, "--users", "10", "--seconds", "20", "--think-s", "1", "--workers", "2",
                   "--redis", "--outage", "redis:5:4")  # fmt: skip
    assert summary["errors"] == 0, summary["error_samples"]
    assert summary["outage"]["lost"] == {"answers": 0, "ratings": 0}
