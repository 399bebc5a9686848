"""Load: simulated clinicians against `evidenceqa serve` on loopback (a benchmark; tests/web/test_load.py
runs a short one). Each user logs in with an account of their own, then for the whole run loops: ask
(JSON), search, list their conversations, rate the answer, think. Reports errors, p50 / p95 / max per
request kind and the server's resident memory after the warm-up and at the end. Example:

    .venv/bin/python benchmarks/load.py --home .evidenceqa --users 50 --seconds 60
    .venv/bin/python benchmarks/load.py --home .evidenceqa --users 200 --logins-only

`--logins-only` is the start of a shift: every user logs in at the same moment, and nothing else.
The chaos options (docs/reliability.md):

    --workers 2            serve with two worker processes (their counters then in the database)
    --hog                  one busy-looping process per core for the whole run
    --kill-worker-at 5     kill -9 one worker 5 s into the timed run; the others must keep answering
    --postgres             a throwaway PostgreSQL cluster (tests/store/postgres.py) instead of SQLite
    --redis                a throwaway redis-server for the answer cache and the guards' counters
    --outage postgres:10:5 stop PostgreSQL (or redis) 10 s into the timed run, start it 5 s later;
                           then every error must be a 503 with Retry-After inside the outage, and
                           every answer and rating acknowledged must be in the database at the end

The server gets a fresh database, so the data home is only read. The per-user rate limit is off
(ask_rate_per_minute=0): a cached answer returns at once, and the limit has its own test; everything
else is the deployed default.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import httpx
from search_latency import percentile, write_record
from sqlalchemy import select

from evidenceqa.bench import machine
from evidenceqa.bench.retrieval import read_questions
from evidenceqa.settings import load_settings
from evidenceqa.store import create_user, open_store
from evidenceqa.store.models import AnswerRecord, Feedback
from evidenceqa.text import markdown
from evidenceqa.web.simulate import FORM_TOKEN

# --postgres and --redis start the throwaway services the tests use (tests/store/postgres.py, redis_server.py).
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

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


GRACE_S = 5.0  # after a service is back, requests already waiting on it may still fail this long


@dataclass
class Results:
    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    errors: list[str] = field(default_factory=list)
    error_times: list[float] = field(default_factory=list)  # time.monotonic() of each error
    clear: list[bool] = field(default_factory=list)  # per error: a 503 with Retry-After
    answers: set[int] = field(default_factory=set)  # answer ids the server acknowledged (200)
    ratings: set[int] = field(default_factory=set)  # answer ids whose rating it acknowledged
    lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, kind: str, started: float, error: str | None, clear: bool = False) -> None:
        with self.lock:
            self.latencies[kind].append((time.perf_counter() - started) * 1000)
            if error:
                self.errors.append(f"{kind}: {error}")
                self.error_times.append(time.monotonic())
                self.clear.append(clear)

    def restart(self) -> list[str]:
        """Forget the errors so far (the warm-up's), returning them."""
        with self.lock:
            errors, self.errors, self.error_times, self.clear = self.errors, [], [], []
            return errors


def children(pid: int) -> list[int]:
    """The processes whose parent is `pid` (uvicorn's workers, when it runs several)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # it ended while we looked
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return sorted(found)


def rss_mb(pid: int) -> float:
    """Resident memory of `pid` and its children (the workers)."""
    total = 0.0
    for process in [pid, *children(pid)]:
        try:
            lines = Path(f"/proc/{process}/status").read_text().splitlines()
        except OSError:
            continue
        total += sum(int(line.split()[1]) / 1024 for line in lines if line.startswith("VmRSS:"))
    return total


def workers_of(pid: int) -> list[int]:
    """uvicorn's worker processes under `serve` (multiprocessing's spawned children, not its tracker)."""
    return [child for child in children(pid)
            if b"resource_tracker" not in Path(f"/proc/{child}/cmdline").read_bytes()]  # fmt: skip


@contextmanager
def cpu_hog(on: bool) -> Iterator[int]:
    """One busy-looping process per core while the block runs (a busy machine); yields how many."""
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
            for _ in range(len(os.sched_getaffinity(0)) if on else 0)]  # fmt: skip
    try:
        yield len(hogs)
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()


@contextmanager
def database(postgres: bool, folder: Path) -> Iterator[tuple[str, Any]]:
    """A fresh database URL, and the PostgreSQL cluster that holds it (None for SQLite in `folder`)."""
    if not postgres:
        yield f"sqlite:///{folder / 'app.sqlite3'}", None
        return
    from tests.store.postgres import start_postgres

    server = start_postgres()
    try:
        yield server.create_database("load"), server
    finally:
        server.stop()


@contextmanager
def redis_server(on: bool, folder: Path) -> Iterator[Any]:
    """A throwaway redis-server (tests/store/redis_server.py), or None."""
    if not on:
        yield None
        return
    from tests.store.redis_server import RedisServer, redis_binary

    server = RedisServer(redis_binary(), folder)
    server.start()
    try:
        yield server
    finally:
        server.stop()


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
        clear = response.status_code == 503 and "retry-after" in response.headers
        self.results.record(
            kind, started, None if ok else f"{response.status_code} {response.text[:200]}", clear
        )
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
            answer_id = answered.json()["answer_id"]
            self.results.answers.add(answer_id)
            rating = self.random.choice(["excellent", "acceptable", "very_poor"])
            if self.call("feedback", "POST", f"/api/answers/{answer_id}/feedback", json={"rating": rating},
                         headers=headers):  # fmt: skip
                self.results.ratings.add(answer_id)

    def run_until(self, deadline: float, think_s: float) -> None:
        while time.monotonic() < deadline:
            self.round()
            time.sleep(self.random.uniform(0.5, 1.5) * think_s)


@dataclass
class Setup:
    """How the server runs: its worker processes, its database, and whether the machine is kept busy."""

    workers: int = 1
    postgres: bool = False
    hog: bool = False
    redis: bool = False

    def describe(self) -> str:
        return (f"{self.workers} worker{'s' if self.workers > 1 else ''} · "
                f"{'PostgreSQL' if self.postgres else 'SQLite'}{' · Redis' if self.redis else ''}"
                f"{' · CPU hog on every core' if self.hog else ''}")  # fmt: skip


@dataclass
class Outage:
    """`service` ("postgres" or "redis") stopped `at_s` seconds into the timed run, for `seconds`."""

    service: str
    at_s: float
    seconds: float

    @classmethod
    def parse(cls, text: str) -> Outage:
        service, at_s, seconds = text.split(":")
        if service not in ("postgres", "redis"):
            raise ValueError(f"--outage names postgres or redis, not {service!r}")
        return cls(service, float(at_s), float(seconds))


class Server:
    """`evidenceqa serve` over `home` with its own fresh database, started and stopped by `with`."""

    def __init__(self, home: Path, users: int, setup: Setup) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="evidenceqa-load-"))
        self.home, self.users, self.setup = home, users, setup
        self.url = f"http://127.0.0.1:{free_port()}"
        self.process: subprocess.Popen[str] | None = None
        self.database_url = ""
        self.postgres: Any = None  # the PostgreSQL cluster, with --postgres
        self.redis: Any = None  # the redis-server, with --redis
        self._stack = ExitStack()

    def __enter__(self) -> Server:
        self.database_url, self.postgres = self._stack.enter_context(
            database(self.setup.postgres, self.folder)
        )
        self.redis = self._stack.enter_context(redis_server(self.setup.redis, self.folder))
        with open_store(load_settings(home=self.home, database_url=self.database_url)) as store:
            for n in range(self.users):  # the accounts first: serve then creates no admin
                create_user(store, f"user{n}@example.org", f"User {n}", PASSWORD)
        env = {**os.environ, "EVIDENCEQA_DATABASE_URL": self.database_url, "EVIDENCEQA_ASK_RATE_PER_MINUTE": "0",
               **({"EVIDENCEQA_REDIS_URL": self.redis.url} if self.redis else {})}  # fmt: skip
        command = [sys.executable, "-m", "evidenceqa", "--home", str(self.home), "serve",
                   "--port", self.url.rsplit(":", 1)[1], "--workers", str(self.setup.workers)]  # fmt: skip
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
            started = (self.folder / "server.log").read_text().count("Application startup complete")
            try:
                if (
                    started >= self.setup.workers
                    and httpx.get(f"{self.url}/readyz", timeout=2).status_code == 200
                ):
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.3)
        raise SystemExit("the server never became healthy")

    def stored(self) -> tuple[set[int], set[int]]:
        """The ids of the answers in the database, and of the answers rated there."""
        settings = load_settings(home=self.home, database_url=self.database_url)
        with open_store(settings) as store, store.read() as session:
            return set(session.scalars(select(AnswerRecord.id))), set(
                session.scalars(select(Feedback.answer_id))
            )

    def interrupt(self, outage: Outage) -> None:
        """Stop the outage's service, wait its length, start it again on the same port."""
        stop, start = ((self.postgres.pause, self.postgres.resume) if outage.service == "postgres"
                       else (self.redis.stop, self.redis.start))  # fmt: skip
        stop()
        time.sleep(outage.seconds)
        start()

    def __exit__(self, *exc: object) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=60)
        self._stack.close()


def _together(users: list[User], work: str, *args: float) -> None:
    threads = [threading.Thread(target=getattr(user, work), args=args) for user in users]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def logins(home: Path, users: int, setup: Setup) -> dict[str, Any]:
    """Every user logging in at once: errors and latency of the logins alone."""
    results = Results()
    with Server(home, users, setup) as server, cpu_hog(setup.hog):
        clients = [User(server.url, f"user{n}@example.org", results, [], n) for n in range(users)]
        _together(clients, "log_in")
    times = results.latencies["login"]
    return {
        "setup": asdict(setup), "users": users, "requests": len(times), "errors": len(results.errors),
        "error_samples": results.errors[:5], "logged_in": sum(bool(c.csrf) for c in clients),
        "latency_ms": {"login": {"n": len(times), "p50": percentile(times, 0.5), "p95": percentile(times, 0.95),
                                 "max": max(times)}},
    }  # fmt: skip


def run(home: Path, users: int, seconds: float, think_s: float, questions: list[str], setup: Setup,
        kill_worker_at: float | None = None, outage: Outage | None = None) -> dict[str, Any]:  # fmt: skip
    results = Results()
    killed: dict[str, Any] = {}
    window: list[float] = []  # the outage's start and end (time.monotonic())
    with Server(home, users, setup) as server:
        assert server.process is not None
        clients = [User(server.url, f"user{n}@example.org", results, questions, n) for n in range(users)]
        _together(clients, "log_in")
        _together(clients, "round")  # warm-up: every path taken once, caches and arenas sized
        warm_errors = results.restart()
        results.latencies.clear()
        with cpu_hog(setup.hog):
            baseline = rss_mb(server.process.pid)
            peak = baseline
            start = time.monotonic()
            deadline = start + seconds
            workers = [threading.Thread(target=c.run_until, args=(deadline, think_s)) for c in clients]
            for worker in workers:
                worker.start()
            while any(w.is_alive() for w in workers):
                if kill_worker_at is not None and not killed and time.monotonic() - start >= kill_worker_at:
                    killed = kill_a_worker(server.process.pid, start)
                if outage and not window and time.monotonic() - start >= outage.at_s:
                    window.append(time.monotonic())
                    server.interrupt(outage)  # blocks for the outage; the users go on meanwhile
                    window.append(time.monotonic())
                peak = max(peak, rss_mb(server.process.pid))
                time.sleep(0.5)
            end = rss_mb(server.process.pid)
        if killed:
            killed["workers_at_the_end"] = len(workers_of(server.process.pid))
            killed["errors_after_5_s"] = sum(t > start + killed["at_s"] + 5 for t in results.error_times)
        interrupted = outage_figures(outage, window, results, *server.stored()) if outage else {}
    requests = sum(len(v) for v in results.latencies.values())
    return {
        "setup": asdict(setup), "users": users, "seconds": seconds, "requests": requests,
        "requests_per_s": requests / seconds,
        "errors": len(results.errors) + len(warm_errors), "error_samples": (warm_errors + results.errors)[:5],
        "latency_ms": {kind: {"n": len(v), "p50": percentile(v, 0.5), "p95": percentile(v, 0.95), "max": max(v)}
                       for kind, v in results.latencies.items() if v},
        "rss_mb": {"after_warm_up": baseline, "peak": peak, "end": end, "growth": end - baseline},
        **({"killed_worker": killed} if killed else {}),
        **({"outage": interrupted} if interrupted else {}),
    }  # fmt: skip


def outage_figures(outage: Outage, window: list[float], results: Results, answers: set[int], rated: set[int]
                   ) -> dict[str, Any]:  # fmt: skip
    """How the errors fell around the outage, and whether anything acknowledged was lost."""
    begin, end = window
    inside = [clear for at, clear in zip(results.error_times, results.clear, strict=True)
              if begin <= at <= end + GRACE_S]  # fmt: skip
    return {
        **asdict(outage), "measured_s": end - begin,
        "refused_clearly": sum(inside), "unclear_in_outage": inside.count(False),
        "errors_outside": len(results.errors) - len(inside),
        "acknowledged": {"answers": len(results.answers), "ratings": len(results.ratings)},
        "lost": {"answers": len(results.answers - answers), "ratings": len(results.ratings - rated)},
    }  # fmt: skip


def kill_a_worker(server_pid: int, start: float) -> dict[str, Any]:
    """kill -9 of one of uvicorn's workers; uvicorn starts another in its place."""
    victim = workers_of(server_pid)[0]
    os.kill(victim, signal.SIGKILL)
    return {"pid": victim, "at_s": time.monotonic() - start}


def report(summary: dict[str, Any]) -> str:
    rows = [[kind, str(s["n"]), f"{s['p50']:.0f}", f"{s['p95']:.0f}", f"{s['max']:.0f}"]
            for kind, s in summary["latency_ms"].items()]  # fmt: skip
    table = markdown.table(
        ["Request", "n", "p50 ms", "p95 ms", "max ms"], rows, [False, True, True, True, True]
    )
    setup = Setup(**summary["setup"]).describe()
    if "rss_mb" not in summary:  # --logins-only
        return table + (
            f"\n{summary['users']} users logging in at once on loopback · {setup} · {summary['logged_in']} logged in · "
            f"{summary['errors']} errors · {machine.current().tag()}\n"
        )
    rss = summary["rss_mb"]
    killed = summary.get("killed_worker")
    return (
        table
        + f"\n{summary['users']} users × {summary['seconds']:g} s on loopback · {setup} · {summary['requests']} "
        f"requests ({summary['requests_per_s']:.1f}/s) · {summary['errors']} errors · server memory "
        f"{rss['after_warm_up']:.0f} MB after the warm-up, {rss['end']:.0f} MB at the end "
        f"(growth {rss['growth']:+.0f} MB, peak {rss['peak']:.0f} MB) · {machine.current().tag()}\n"
        + (f"\nOne worker killed with SIGKILL {killed['at_s']:.0f} s in: {summary['errors']} requests failed "
           f"(those it was serving), {killed['errors_after_5_s']} from 5 s after the kill on; "
           f"{killed['workers_at_the_end']} workers at the end (uvicorn replaced it)\n" if killed else "")
        + (f"\n{'PostgreSQL' if outage['service'] == 'postgres' else 'Redis'} stopped {outage['at_s']:g} s in for "
           f"{outage['measured_s']:.0f} s: {outage['refused_clearly']} requests answered 503 with Retry-After during "
           f"the outage, {outage['unclear_in_outage']} other errors in it, {outage['errors_outside']} outside it; "
           f"{outage['acknowledged']['answers']} answers and {outage['acknowledged']['ratings']} ratings "
           f"acknowledged, {outage['lost']['answers']} and {outage['lost']['ratings']} of them missing from the "
           f"database at the end\n" if (outage := summary.get("outage")) else "")
    )  # fmt: skip


def matrix(home: Path, users: int, seconds: float, think_s: float, questions: list[str], workers: int
           ) -> dict[str, Any]:  # fmt: skip
    """The same load on SQLite and PostgreSQL, one worker and `workers`, with and without a CPU hog."""
    setups = [
        Setup(n, postgres, hog) for postgres in (False, True) for n in (1, workers) for hog in (False, True)
    ]
    return {"runs": [run(home, users, seconds, think_s, questions, setup) for setup in setups]}


def report_matrix(summary: dict[str, Any]) -> str:
    rows = []
    for one in summary["runs"]:
        setup, latency = Setup(**one["setup"]), one["latency_ms"]
        every = max(s["p95"] for s in latency.values())
        rows.append([f"{setup.workers}", "PostgreSQL" if setup.postgres else "SQLite", "yes" if setup.hog else "no",
                     str(one["users"]), f"{one['seconds']:g}", str(one["requests"]), str(one["errors"]),
                     f"{latency['ask']['p95']:.0f}", f"{latency['search']['p95']:.0f}", f"{every:.0f}"])  # fmt: skip
    table = markdown.table(
        ["Workers", "Database", "CPU hog", "Users", "Seconds", "Requests", "Errors", "ask p95 ms",
         "search p95 ms", "worst p95 ms"], rows, [True, False, False, True, True, True, True, True, True, True],
    )  # fmt: skip
    failed = [f"- {Setup(**one['setup']).describe()}: {'; '.join(one['error_samples'])}\n"
              for one in summary["runs"] if one["errors"]]  # fmt: skip
    return (table + f"\nOn loopback · {machine.current().tag()}\n"
            + ("\nThe errors (at most five of each run):\n\n" + "".join(failed) if failed else ""))  # fmt: skip


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
    parser.add_argument("--workers", type=int, default=1, help="serve's worker processes")
    parser.add_argument("--postgres", action="store_true", help="a throwaway PostgreSQL instead of SQLite")
    parser.add_argument("--hog", action="store_true", help="keep every core busy during the run")
    parser.add_argument("--redis", action="store_true", help="a throwaway Redis for the cache and counters")
    parser.add_argument("--outage", type=Outage.parse, help="SERVICE:AT:SECONDS, SERVICE postgres or redis")
    parser.add_argument("--kill-worker-at", type=float, help="kill -9 one worker this many seconds in")
    parser.add_argument(
        "--matrix",
        action="store_true",
        help="SQLite and PostgreSQL × one worker and --workers (at least 2) × with and without a hog",
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--record", type=Path, help="also save the figures as JSON here")
    args = parser.parse_args()
    questions = (
        [q.question for q in read_questions(args.questions, args.limit)] if args.questions else QUESTIONS
    )
    setup = Setup(args.workers, args.postgres, args.hog, args.redis)
    if args.kill_worker_at is not None and args.workers < 2:
        parser.error("--kill-worker-at needs --workers 2 or more")
    if args.outage and not (args.postgres if args.outage.service == "postgres" else args.redis):
        parser.error(f"--outage {args.outage.service}:… needs --{args.outage.service}")
    if args.matrix:
        summary = matrix(args.home, args.users, args.seconds, args.think_s, questions, max(2, args.workers))
    elif args.logins_only:
        summary = logins(args.home, args.users, setup)
    else:
        summary = run(args.home, args.users, args.seconds, args.think_s, questions, setup, args.kill_worker_at,
                      args.outage)  # fmt: skip
    text = report_matrix(summary) if args.matrix else report(summary)
    print(json.dumps(summary, indent=1) if args.json else text, end="\n" if args.json else "")
    write_record(args.record, summary)


if __name__ == "__main__":
    main()
