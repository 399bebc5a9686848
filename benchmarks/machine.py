"""The machine and software the benchmarks ran on, as a Markdown table (for docs/performance.md).

.venv/bin/python benchmarks/machine.py
"""

from __future__ import annotations

import os
import platform
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from evidenceqa.text import markdown

PACKAGES = ("lancedb", "pymilvus", "milvus-lite", "onnxruntime", "tokenizers", "bm25s", "fastapi", "uvicorn")


def cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def memory_gb() -> float:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) / 2**20
    return 0.0


def installed(name: str) -> str:
    try:
        return version(name)
    except PackageNotFoundError:
        return "not installed"


def main() -> None:
    rows = [
        ["CPU", f"{cpu_model()}, {len(os.sched_getaffinity(0))} cores available ({platform.machine()})"],
        ["Memory", f"{memory_gb():.0f} GB"],
        ["OS", platform.platform()],
        ["Python", platform.python_version()],
        ["Packages", ", ".join(f"{name} {installed(name)}" for name in PACKAGES)],
    ]
    print(markdown.table(["Component", "Value"], rows, [False, False]), end="")


if __name__ == "__main__":
    main()
