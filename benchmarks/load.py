"""Load: simulated clinicians against `evidenceqa serve` on loopback (a benchmark; tests/web/test_load.py
runs a short one). Each user logs in with an account of their own, then for the whole run loops: ask
(JSON), search, list their conversations, rate the answer, think. Reports errors, p50 / p95 / max per
request kind and the server's resident memory after the warm-up and at the end. Example:

    .venv/bin/python benchmarks/load.py --home .evidenceqa --users 50 --seconds 60
    .venv/bin/python benchmarks/load.py --home .evidenceqa --users 200 --logins-only

`--logins-only` is the start of a shift: every user logs in at the same moment, and nothing else.

The server gets a fresh SQLite database in a temporary folder, so the data home is only read. The
per-user rate limit is off (ask_rate_per_minute=0): a cached answer returns at once, and the limit has
its own test; everything else is the deployed default.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from search_latency import percentile, write_record

from evidenceqa.bench.retrieval import read_questions
from evidenceqa.config import load_settings
from evidenceqa.store import create_user, open_store
from evidenceqa.text import markdown
from evidenceqa.web.simulate import FORM_TOKEN

QUESTIONS = [
    "Does shaving the incision site increase infection after spinal surgery?",
    "Can chlorhexidine gluconate be used on mucous membranes?",
    "Does tranexamic acid reduce blood loss after knee arthroplasty?",
    "When should cefazolin be given before incision?",
    "How should hair be removed before surgery?",
    "What reduces surgical site infection after hip replacement?",
    "Is povidone-iodine or chlorhexidine better for skin antisepsis?",
    "How long should antibiotic prophylaxis continue after surgery?",
]
PASSWORD = "load test passphrase"
KINDS = ("login", "ask", "search", "conversations", "feedback")


@dataclass
class Results:
    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    errors: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, kind: str, started: float, error: str | None) -> None:
        with self.lock:
            self.latencies[kind].append((time.perf_counter() - started) * 1000)
            if error:
                self.errors.append(f"{kind}: {error}")


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class User:
    """One simulated clinician with their own cookie jar and CSRF token."""

    def __init__(self, url: str, email: str, results: Results, questions: list[str], seed: int) -> None:
        self.client = httpx.Client(base_url=url, timeout=300)
        self.email, self.results, self.csrf = email, results, ""
        self.questions, self.random = questions, random.Random(seed)

    def call(self, kind: str, method: str, path: str, **options: Any) -> httpx.Response | None:
        started = time.perf_counter()
        try:
            response = self.client.request(method, path, **options)
        except httpx.HTTPError as exc:
            self.results.record(kind, started, f"{type(exc).__name__}: {exc}")
            return None
        ok = response.status_code < 400
        self.results.record(kind, started, None if ok else f"{response.status_code} {response.text[:200]}")
        return response if ok else None

    def log_in(self) -> None:
        form = FORM_TOKEN.search(self.client.get("/login").text)
        data = {"email": self.email, "password": PASSWORD, "csrf_token": form.group(1) if form else ""}
        self.call("login", "POST", "/login", data=data)
        page = self.client.get("/")
        found = re.search(r'<meta name="csrf-token" content="([^"]+)">', page.text)
        self.csrf = found.group(1) if found else ""

    def round(self) -> None:
        question = self.random.choice(self.questions)
        headers = {"X-CSRF-Token": self.csrf}
        answered = self.call("ask", "POST", "/api/ask", json={"question": question}, headers=headers)
        self.call("search", "GET", "/api/search", params={"q": question, "k": 5})
        self.call("conversations", "GET", "/api/conversations")
        if answered is not None:
            rating = self.random.choice(["excellent", "acceptable", "very_poor"])
            self.call("feedback", "POST", f"/api/answers/{answered.json()['answer_id']}/feedback",
                      json={"rating": rating}, headers=headers)  # fmt: skip

    def run_until(self, deadline: float, think_s: float) -> None:
        while time.monotonic() < deadline:
            self.round()
            time.sleep(self.random.uniform(0.5, 1.5) * think_s)


class Server:
    """`evidenceqa serve` over `home` with its own fresh database, started and stopped by `with`."""

    def __init__(self, home: Path, users: int) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="evidenceqa-load-"))
        self.database = f"sqlite:///{self.folder / 'app.sqlite3'}"
        self.home, self.users = home, users
        self.url = f"http://127.0.0.1:{free_port()}"
        self.process: subprocess.Popen[str] | None = None

    def __enter__(self) -> Server:
        settings = load_settings(home=self.home, database_url=self.database)
        with open_store(settings) as store:  # the accounts first: serve then creates no admin
            for n in range(self.users):
                create_user(store, f"user{n}@example.org", f"User {n}", PASSWORD)
        env = {**os.environ, "EVIDENCEQA_DATABASE_URL": self.database, "EVIDENCEQA_ASK_RATE_PER_MINUTE": "0"}
        command = [sys.executable, "-m", "evidenceqa", "--home", str(self.home), "serve",
                   "--port", self.url.rsplit(":", 1)[1]]  # fmt: skip
        log = (self.folder / "server.log").open("w")
        self.process = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT, text=True)
        self._wait_healthy()
        return self

    def _wait_healthy(self, timeout_s: float = 180) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            assert self.process is not None
            if self.process.poll() is not None:
                raise SystemExit(f"the server exited: {(self.folder / 'server.log').read_text()[-2000:]}")
            try:
                if httpx.get(f"{self.url}/readyz", timeout=2).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.3)
        raise SystemExit("the server never became healthy")

    def __exit__(self, *exc: object) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=60)


def _together(users: list[User], work: str, *args: float) -> None:
    threads = [threading.Thread(target=getattr(user, work), args=args) for user in users]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def logins(home: Path, users: int) -> dict[str, Any]:
    """Every user logging in at once: errors and latency of the logins alone."""
    results = Results()
    with Server(home, users) as server:
        clients = [User(server.url, f"user{n}@example.org", results, [], n) for n in range(users)]
        _together(clients, "log_in")
    times = results.latencies["login"]
    return {
        "users": users, "requests": len(times), "errors": len(results.errors),
        "error_samples": results.errors[:5], "logged_in": sum(bool(c.csrf) for c in clients),
        "latency_ms": {"login": {"n": len(times), "p50": percentile(times, 0.5), "p95": percentile(times, 0.95),
                                 "max": max(times)}},
    }  # fmt: skip


def run(home: Path, users: int, seconds: float, think_s: float, questions: list[str]) -> dict[str, Any]:
    results = Results()
    with Server(home, users) as server:
        assert server.process is not None
        clients = [User(server.url, f"user{n}@example.org", results, questions, n) for n in range(users)]
        _together(clients, "log_in")
        _together(clients, "round")  # warm-up: every path taken once, caches and arenas sized
        warm_errors, results.errors = results.errors, []
        results.latencies.clear()
        baseline = rss_mb(server.process.pid)
        peak = baseline
        deadline = time.monotonic() + seconds
        workers = [threading.Thread(target=c.run_until, args=(deadline, think_s)) for c in clients]
        for worker in workers:
            worker.start()
        while any(w.is_alive() for w in workers):
            peak = max(peak, rss_mb(server.process.pid))
            time.sleep(0.5)
        end = rss_mb(server.process.pid)
    requests = sum(len(v) for v in results.latencies.values())
    return {
        "users": users, "seconds": seconds, "requests": requests, "requests_per_s": requests / seconds,
        "errors": len(results.errors) + len(warm_errors), "error_samples": (warm_errors + results.errors)[:5],
        "latency_ms": {kind: {"n": len(v), "p50": percentile(v, 0.5), "p95": percentile(v, 0.95), "max": max(v)}
                       for kind, v in results.latencies.items() if v},
        "rss_mb": {"after_warm_up": baseline, "peak": peak, "end": end, "growth": end - baseline},
    }  # fmt: skip


def report(summary: dict[str, Any]) -> str:
    rows = [[kind, str(s["n"]), f"{s['p50']:.0f}", f"{s['p95']:.0f}", f"{s['max']:.0f}"]
            for kind, s in summary["latency_ms"].items()]  # fmt: skip
    table = markdown.table(
        ["Request", "n", "p50 ms", "p95 ms", "max ms"], rows, [False, True, True, True, True]
    )
    if "rss_mb" not in summary:  # --logins-only
        return table + (
            f"\n{summary['users']} users logging in at once on loopback · {summary['logged_in']} logged in · "
            f"{summary['errors']} errors · {len(os.sched_getaffinity(0))} cores\n"
        )
    rss = summary["rss_mb"]
    return (
        table
        + f"\n{summary['users']} users × {summary['seconds']:g} s on loopback · {summary['requests']} requests "
        f"({summary['requests_per_s']:.1f}/s) · {summary['errors']} errors · server memory "
        f"{rss['after_warm_up']:.0f} MB after the warm-up, {rss['end']:.0f} MB at the end "
        f"(growth {rss['growth']:+.0f} MB, peak {rss['peak']:.0f} MB) · {len(os.sched_getaffinity(0))} cores\n"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--home", type=Path, required=True, help="an ingested, indexed data home")
    parser.add_argument("--users", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--think-s", type=float, default=2.0, help="mean pause between a user's rounds")
    parser.add_argument("--questions", type=Path, help="benchmark JSONL to draw questions from")
    parser.add_argument("--limit", type=int, default=200, help="questions taken from --questions")
    parser.add_argument("--logins-only", action="store_true", help="only every user logging in at once")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--record", type=Path, help="also save the figures as JSON here")
    args = parser.parse_args()
    questions = (
        [q.question for q in read_questions(args.questions, args.limit)] if args.questions else QUESTIONS
    )
    if args.logins_only:
        summary = logins(args.home, args.users)
    else:
        summary = run(args.home, args.users, args.seconds, args.think_s, questions)
    print(json.dumps(summary, indent=1) if args.json else report(summary), end="\n" if args.json else "")
    write_record(args.record, summary)


if __name__ == "__main__":
    main()
