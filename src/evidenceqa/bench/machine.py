"""What a measurement ran on: the CPU, the instruction sets its kernels can use, and ONNX Runtime.

int8 MiniLM runs about three times faster with AVX-512 VNNI than with AVX2 alone, and its float sums
differ between the kernels each picks, so a figure means little without the machine it came from.
Every benchmark prints `Machine.tag()` under its table and stores `Machine.as_dict()` in its record.
"""

from __future__ import annotations

import os
import platform
from dataclasses import asdict, dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from evidenceqa.embeddings.onnx import PROVIDER

# /proc/cpuinfo flag → the name a reader knows, in order of capability; each one changes which
# int8/fp32 kernels ONNX Runtime's MLAS dispatches to.
_FEATURES = (
    ("avx2", "AVX2"),
    ("avx512f", "AVX-512"),
    ("avx512_vnni", "AVX-512 VNNI"),
    ("avx_vnni", "AVX-VNNI"),
    ("avx512_bf16", "AVX-512 BF16"),
    ("amx_int8", "AMX"),
)


@dataclass(frozen=True)
class Machine:
    cpu: str
    arch: str
    cores: int  # the logical CPUs this process may run on
    physical_cores: int  # what ONNX Runtime's default intra-op thread count follows
    features: tuple[str, ...]
    onnxruntime: str
    provider: str

    def tag(self) -> str:
        """One line for under a table: the CPU, its instruction sets and the runtime's threads."""
        features = ", ".join(self.features) or "no AVX2"
        return (
            f"{self.cpu} ({self.arch}), {self.cores} cores · {features} · onnxruntime {self.onnxruntime} "
            f"{self.provider}, {self.physical_cores} intra-op threads"
        )

    def measured_on(self) -> str:
        """The sentence under a generated table whose figures depend on the machine (timings, dense scores)."""
        return f"Measured on {self.tag()}."

    def as_dict(self) -> dict[str, Any]:
        return asdict(self) | {"features": list(self.features)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Machine:
        return cls(**(data | {"features": tuple(data["features"])}))


def current() -> Machine:
    flags = _cpu_flags()
    return Machine(
        cpu=_cpu_model(),
        arch=platform.machine(),
        cores=len(os.sched_getaffinity(0)),
        physical_cores=_physical_cores(),
        features=tuple(name for flag, name in _FEATURES if flag in flags),
        onnxruntime=installed("onnxruntime"),
        provider=PROVIDER,
    )


def installed(package: str) -> str:
    try:
        return version(package)
    except PackageNotFoundError:
        return "not installed"


def _cpuinfo() -> list[str]:
    try:
        return Path("/proc/cpuinfo").read_text().splitlines()
    except OSError:  # not Linux: the model from platform, features unknown
        return []


def _cpu_model() -> str:
    for line in _cpuinfo():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown CPU"


def _cpu_flags() -> set[str]:
    for line in _cpuinfo():
        if line.startswith("flags"):
            return set(line.split(":", 1)[1].split())
    return set()


def _physical_cores() -> int:
    """Distinct (package, core) pairs among the CPUs this process may use: hyperthread siblings count once."""
    cores = set()
    for cpu in os.sched_getaffinity(0):
        topology = Path(f"/sys/devices/system/cpu/cpu{cpu}/topology")
        try:
            cores.add(((topology / "physical_package_id").read_text(), (topology / "core_id").read_text()))
        except OSError:
            cores.add(("", str(cpu)))
    return len(cores)


def measured_on() -> str:
    return current().measured_on()
