"""A measurement names its machine: the CPU's instruction sets, read from /proc/cpuinfo, and ONNX Runtime."""

from __future__ import annotations

import pytest

from evidenceqa.bench import machine

AVX2_ONLY = ["processor\t: 0", "model name\t: AMD EPYC 7B12", "flags\t\t: fpu sse4_2 avx avx2 fma"]
VNNI = ["model name\t: Intel Xeon", "flags\t\t: avx2 avx512f avx512bw avx512_vnni amx_tile amx_int8"]


def test_an_avx2_only_cpu_is_named_without_avx512_or_vnni(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(machine, "_cpuinfo", lambda: AVX2_ONLY)
    here = machine.current()
    assert here.cpu == "AMD EPYC 7B12" and here.features == ("AVX2",)
    assert " · AVX2 · onnxruntime " in here.tag() and "CPUExecutionProvider" in here.tag()


def test_int8_capable_features_are_listed_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(machine, "_cpuinfo", lambda: VNNI)
    assert machine.current().features == ("AVX2", "AVX-512", "AVX-512 VNNI", "AMX")


def test_a_cpu_without_avx2_says_so_and_a_machine_survives_its_record(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(machine, "_cpuinfo", lambda: ["flags\t\t: sse2"])
    here = machine.current()
    assert here.features == () and "no AVX2" in here.tag()
    assert machine.Machine.from_dict(here.as_dict()) == here
    assert 1 <= here.physical_cores <= here.cores
