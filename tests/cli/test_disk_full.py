"""A disk that fills while ingesting: the data home on a small tmpfs (mounted by the test, as root),
filled to its last few hundred kilobytes. The ingest ends with one line saying the disk is full, the
library and the index that were there still answer, and once there is space the same command completes."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import SAMPLE
from tests.skips import unavailable

pytestmark = pytest.mark.slow
FIRST = SAMPLE / "library" / "covidqa_infection_control.jsonl"  # 6 documents: fits
SECOND = SAMPLE / "library" / "pubmedqa_periop.jsonl"  # 210 documents: does not, once the disk is full
LEFT_KB = 200


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 32 MB tmpfs at tmp_path/disk, unmounted afterwards."""
    mount = tmp_path / "disk"
    mount.mkdir()
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=32m", "tmpfs", str(mount)],
                          capture_output=True, text=True, check=False)  # fmt: skip
    if made.returncode:
        unavailable(f"cannot mount a tmpfs ({made.stderr.strip() or 'needs root'})", "CI runs as root")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def evidenceqa(home: Path, models_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "EVIDENCEQA_MODELS_DIR": str(models_dir), "EVIDENCEQA_CALIBRATION_QUESTIONS": "0"}
    return subprocess.run([sys.executable, "-m", "evidenceqa", "--home", str(home), *args], env=env,
                          capture_output=True, text=True, timeout=600, check=False)  # fmt: skip


def top_document(home: Path, models_dir: Path, question: str) -> str:
    found = evidenceqa(home, models_dir, "search", question, "--k", "1", "--json")
    assert found.returncode == 0, found.stderr
    return str(json.loads(found.stdout)["results"][0]["doc_id"])


def fill(disk: Path, leave_kb: int) -> Path:
    free_kb = os.statvfs(disk).f_bavail * os.statvfs(disk).f_frsize // 1024
    filler = disk / "filler"
    with filler.open("wb") as handle:
        handle.write(b"\0" * max(0, free_kb - leave_kb) * 1024)
    return filler


def catalogue_state(home: Path) -> tuple[str, int]:
    with sqlite3.connect(home / "catalogue.sqlite3") as db:
        return db.execute("PRAGMA integrity_check").fetchone()[0], db.execute(
            "SELECT count(*) FROM documents"
        ).fetchone()[0]


def test_a_full_disk_is_one_line_and_the_previous_library_still_answers(
    small_disk: Path, models_dir: Path
) -> None:
    home = small_disk / "home"
    assert evidenceqa(home, models_dir, "ingest", str(FIRST)).returncode == 0
    question = "How long does the coronavirus survive on surfaces?"
    before, documents = top_document(home, models_dir, question), catalogue_state(home)

    filler = fill(small_disk, LEFT_KB)
    for command in (["ingest", str(SECOND)], ["ingest", str(SECOND), "--no-index"]):
        failed = evidenceqa(home, models_dir, *command)
        assert failed.returncode == 1, failed.stderr
        assert "Traceback" not in failed.stderr
        last = failed.stderr.strip().splitlines()[-1]
        assert last.startswith("error: the disk is full (") and last.endswith("run the command again"), last
        assert catalogue_state(home) == documents  # the file that did not fit left nothing behind
        assert top_document(home, models_dir, question) == before  # the index that was there answers

    filler.unlink()
    assert evidenceqa(home, models_dir, "ingest", str(SECOND)).returncode == 0  # with space, it completes
    assert catalogue_state(home) == ("ok", documents[1] + 210)
    assert top_document(home, models_dir, "Does tranexamic acid reduce blood loss?").startswith("pubmed-")
