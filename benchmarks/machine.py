"""The machine and software the benchmarks ran on, as a Markdown table (for docs/performance.md).

.venv/bin/python benchmarks/machine.py
"""

from __future__ import annotations

import platform
from pathlib import Path

from evidenceqa.bench import machine
from evidenceqa.text import markdown

PACKAGES = ("lancedb", "pymilvus", "milvus-lite", "onnxruntime", "tokenizers", "bm25s", "fastapi", "uvicorn")


def memory_gb() -> float:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) / 2**20
    return 0.0


def main() -> None:
    here = machine.current()
    rows = [
        ["CPU", f"{here.cpu}, {here.cores} cores available, {here.physical_cores} physical ({here.arch})"],
        ["Instruction sets", ", ".join(here.features) or "no AVX2"],
        ["ONNX Runtime", f"{here.onnxruntime}, {here.provider}, {here.physical_cores} intra-op threads"],
        ["Memory", f"{memory_gb():.0f} GB"],
        ["OS", platform.platform()],
        ["Python", platform.python_version()],
        ["Packages", ", ".join(f"{name} {machine.installed(name)}" for name in PACKAGES)],
    ]
    print(markdown.table(["Component", "Value"], rows, [False, False]), end="")


if __name__ == "__main__":
    main()
