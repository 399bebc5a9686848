"""A throwaway PostgreSQL cluster for tests (Debian's postgresql package), reusable by any test package:

    server = start_postgres()          # skips (fails under CI=true) when the binaries are missing
    url = server.create_database()     # a fresh, empty database: postgresql+psycopg://…
    server.stop()

initdb and postgres refuse to run as root, so as root the cluster runs as the `postgres` user, in a
temporary folder it owns. fsync is off: the data is thrown away, and it makes each test faster.
"""

from __future__ import annotations

import itertools
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

import psycopg

from tests.skips import unavailable

# Debian's layout, newest major version first.
BIN_DIRS = sorted(
    Path("/usr/lib/postgresql").glob("*/bin"),
    key=lambda path: [int(part) for part in path.parent.name.split(".") if part.isdigit()],
    reverse=True,
)
SUPERUSER = "evidenceqa"


def postgres_bin() -> Path:
    """The folder holding initdb/pg_ctl; skip (or fail under CI) when PostgreSQL is not installed."""
    if "EVIDENCEQA_PG_BIN" in os.environ:  # an explicit choice is not second-guessed
        candidates = [Path(os.environ["EVIDENCEQA_PG_BIN"])]
    else:
        on_path = shutil.which("pg_ctl")
        candidates = BIN_DIRS + ([Path(on_path).resolve().parent] if on_path else [])
    for folder in candidates:
        if (folder / "initdb").exists() and (folder / "pg_ctl").exists():
            return folder
    where = ", ".join(map(str, candidates)) or "/usr/lib/postgresql/*/bin or PATH"
    unavailable(f"PostgreSQL server binaries (initdb, pg_ctl) not found in {where} "
                "(apt-get install postgresql, or set EVIDENCEQA_PG_BIN)", "CI must have them")  # fmt: skip


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class PostgresServer:
    def __init__(self, bin_dir: Path) -> None:
        self.bin_dir = bin_dir
        self.as_postgres = os.geteuid() == 0  # root: run the server as the postgres user
        # As root, /tmp rather than $TMPDIR: the postgres user must be able to reach the folder
        # (and a short path keeps the unix socket's name within its 107-character limit).
        self.root = Path(tempfile.mkdtemp(prefix="evidenceqa-pg-", dir="/tmp" if self.as_postgres else None))
        self.port = _free_port()
        self._names = itertools.count(1)
        if self.as_postgres:
            shutil.chown(self.root, user="postgres", group="postgres")

    def _run(self, *command: str) -> None:
        prefix = ["runuser", "-u", "postgres", "--"] if self.as_postgres else []
        result = subprocess.run(prefix + list(command), capture_output=True, text=True, check=False)
        if result.returncode != 0:
            log = self.root / "server.log"
            tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
            raise RuntimeError(f"{' '.join(command)} failed:\n{result.stdout}{result.stderr}{tail}")

    def start(self) -> None:
        data = self.root / "data"
        self._run(str(self.bin_dir / "initdb"), "-D", str(data), "-U", SUPERUSER, "--auth=trust",
                  "-E", "UTF8", "--no-sync", "--no-instructions")  # fmt: skip
        self.resume()

    def pause(self) -> None:
        """Stop the server, keeping its data: an outage the app must ride out (`resume` ends it)."""
        self._run(str(self.bin_dir / "pg_ctl"), "-D", str(self.root / "data"), "-m", "fast", "-w", "stop")

    def resume(self) -> None:
        """Start the server on its data and port (again, after `pause`)."""
        options = (
            f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 "
            "-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        )
        self._run(str(self.bin_dir / "pg_ctl"), "-D", str(self.root / "data"), "-o", options,
                  "-l", str(self.root / "server.log"), "-w", "-t", "60", "start")  # fmt: skip

    def url(self, database: str) -> str:
        return f"postgresql+psycopg://{SUPERUSER}@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str | None = None) -> str:
        """A new empty database; returns its SQLAlchemy URL."""
        name = name or f"test_{next(self._names)}"
        with psycopg.connect(host="127.0.0.1", port=self.port, user=SUPERUSER, dbname="postgres",
                             autocommit=True) as connection:  # fmt: skip
            connection.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def stop(self) -> None:
        try:
            self._run(
                str(self.bin_dir / "pg_ctl"), "-D", str(self.root / "data"), "-m", "immediate", "-w", "stop"
            )
        finally:
            shutil.rmtree(self.root, ignore_errors=True)


def start_postgres() -> PostgresServer:
    """A running throwaway cluster; the caller stops it (a session fixture's teardown)."""
    bin_dir = postgres_bin()
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            unavailable("running as root, and there is no `postgres` user to run PostgreSQL as")
    server = PostgresServer(bin_dir)
    try:
        server.start()
    except BaseException:
        shutil.rmtree(server.root, ignore_errors=True)
        raise
    return server
