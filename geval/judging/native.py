"""This machine and its llama.cpp build: the CPU's features, the build's, whether they fit, and the
embedded judge's speed as measured here.

The build is meant to run on every x86-64 CPU with AVX2 (requirements-llama.txt: GGML_NATIVE=OFF,
AVX2/FMA/F16C/BMI2, no AVX-512, no AMX). A build made with llama.cpp's default (-march=native)
takes the instructions of the CPU it was built on: it stops with SIGILL on a CPU without them, and
its AMX kernels fault (SIGSEGV) on Intel Xeons in virtual machines whose threads are not granted
the AMX tile state. `build_problems` says which of these applies, with the command that fixes it.
"""

from __future__ import annotations

import json
import os
import platform
import re
from dataclasses import asdict, dataclass
from pathlib import Path

from geval.judging.weights import cache_dir

#: The command that rebuilds llama-cpp-python for every x86-64 CPU with AVX2.
REINSTALL = "pip install --force-reinstall --no-deps --no-cache-dir -r requirements-llama.txt"
#: The features a portable build may use: every x86-64 CPU with AVX2 has them.
PORTABLE = frozenset({"SSE3", "SSSE3", "AVX", "AVX2", "F16C", "FMA", "BMI2"})
#: llama.cpp's name of an instruction set feature (in its system info) -> the CPU flag (/proc/cpuinfo).
CPU_FLAG = {
    "SSE3": "pni", "SSSE3": "ssse3", "AVX": "avx", "AVX2": "avx2", "F16C": "f16c", "FMA": "fma", "BMI2": "bmi2",
    "AVX_VNNI": "avx_vnni", "AVX512": "avx512f", "AVX512_VBMI": "avx512vbmi", "AVX512_VNNI": "avx512_vnni",
    "AVX512_BF16": "avx512_bf16", "AMX_INT8": "amx_int8", "AMX_BF16": "amx_bf16",
}
SPEED_FILE = "speed.json"
#: Where the speeds measured here are kept instead of the cache folder's speed.json (the test suite
#: keeps its own, so that an app scoring in another process changes none of its estimates).
SPEED_FILE_ENV = "GEVAL_SPEED_FILE"


@dataclass(frozen=True)
class Cpu:
    """This machine's CPU: its model name, its feature flags, the CPUs this process may use, and
    whether it runs in a virtual machine."""

    model: str
    flags: frozenset[str]
    cpus: int
    virtual: bool

    def describe(self) -> str:
        """'AMD EPYC, 2 CPUs, in a virtual machine; AVX2 yes, AVX-512 yes, AMX no'."""
        def has(flag: str) -> str:
            return "yes" if flag in self.flags else "no"
        return (f"{self.model}, {self.cpus} CPUs{', in a virtual machine' if self.virtual else ''}; "
                f"AVX2 {has('avx2')}, AVX-512 {has('avx512f')}, AMX {has('amx_tile')}")


def cpu(cpuinfo: str | None = None) -> Cpu:
    """This machine's CPU, from /proc/cpuinfo (or the text given)."""
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text()
        except OSError:
            cpuinfo = ""
    fields = dict(re.findall(r"^(model name|flags)\s*:\s*(.*)$", cpuinfo, flags=re.MULTILINE))
    flags = frozenset(fields.get("flags", "").split())
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return Cpu(fields.get("model name", platform.processor() or "unknown CPU").strip(), flags, cpus,
               "hypervisor" in flags)


def build_features(system_info: str) -> frozenset[str]:
    """The instruction set features a llama.cpp build uses, from its system info
    ('CPU : SSE3 = 1 | AVX = 1 | ... | LLAMAFILE = 1 |'): those of CPU_FLAG set to 1."""
    return frozenset(name for name, value in re.findall(r"(\w+) = (\d+)", system_info)
                     if value != "0" and name in CPU_FLAG)


def build_problems(features: frozenset[str], machine: Cpu) -> list[str]:
    """What keeps a build with `features` from running on `machine`, each with the fix ([] when
    it runs). A build for another CPU than this one's features is only a problem where it uses
    what this CPU lacks (SIGILL) or AMX on a CPU that has it (SIGSEGV in VMs)."""
    if not machine.flags:  # not Linux, or no flags to compare with
        return []
    problems = []
    missing = sorted(feature for feature in features if CPU_FLAG[feature] not in machine.flags)
    if missing:
        problems.append(f"llama-cpp-python was built for another CPU: it uses {', '.join(missing)}, which this CPU "
                        f"lacks, and would stop with SIGILL; rebuild it for every x86-64 CPU: {REINSTALL}")
    amx = sorted(feature for feature in features if feature.startswith("AMX"))
    if amx and "amx_tile" in machine.flags:
        problems.append(f"llama-cpp-python was built with AMX ({', '.join(amx)}), whose kernels fault (SIGSEGV) where "
                        f"the kernel does not grant each thread the AMX tile state (Intel Xeons in VMs); rebuild it "
                        f"for every x86-64 CPU: {REINSTALL}")
    return problems


def native_only(features: frozenset[str]) -> list[str]:
    """The features of a build beyond the portable set (a build for one CPU: -march=native)."""
    return sorted(features - PORTABLE)


def system_info() -> str:
    """llama.cpp's system info of the installed build (loads its native library: call it in a worker)."""
    import llama_cpp

    return llama_cpp.llama_print_system_info().decode("utf-8", "replace").strip()


class BuildInfo:
    """The installed llama.cpp build, read in a worker process (a build for another CPU may
    stop its process as soon as its library runs)."""

    def __init__(self):
        from importlib import metadata

        self.info = {"system": system_info(), "version": metadata.version("llama-cpp-python")}


# --- speed measured here --------------------------------------------------------------------------


@dataclass(frozen=True)
class Speed:
    """A model's measured speed on this machine: tokens per second evaluating a prompt (prefill)
    and producing one token at a time (decode; also the cost of each further forward pass)."""

    prefill: float
    decode: float
    measured: float  # when (Unix time)
    judgments: int = 0  # the judgments of a run it was measured over (0: a test prompt as the model loaded)
    load: float | None = None  # seconds the model took to load (its worker started), when measured

    def seconds(self, evaluated_tokens: float, passes: int) -> float:
        """The time to evaluate `evaluated_tokens` new tokens in `passes` forward passes."""
        return evaluated_tokens / self.prefill + passes / self.decode

    def scaled(self, factor: float, judgments: int, now: float) -> Speed:
        """This speed `factor` times as fast, as measured over `judgments` judgments at `now`
        (the load time kept)."""
        return Speed(self.prefill * factor, self.decode * factor, now, judgments, self.load)

    def describe(self) -> str:
        """'prefill 84 tokens/s, decode 21 tokens/s' (a decimal below 10: 'decode 0.4 tokens/s')."""
        def rate(value: float) -> str:
            return f"{value:.0f}" if value >= 10 else f"{value:.1f}"
        return f"prefill {rate(self.prefill)} tokens/s, decode {rate(self.decode)} tokens/s"


def _speed_key(model: str, machine: Cpu) -> str:
    return f"{model}|{machine.model}|{machine.cpus} CPUs"


def speed_path() -> Path:
    """The file of the speeds measured here: $GEVAL_SPEED_FILE, else the cache folder's speed.json."""
    return Path(os.environ.get(SPEED_FILE_ENV) or cache_dir() / SPEED_FILE)


def remember_speed(model: str, speed: Speed, machine: Cpu | None = None) -> None:
    """Keep the speed measured for `model` (name@weights) on this machine, for estimates made before
    the model is loaded (`speed_path`)."""
    path = speed_path()
    try:
        known = json.loads(path.read_text()) if path.is_file() else {}
    except (OSError, ValueError):
        known = {}
    known[_speed_key(model, machine or cpu())] = asdict(speed)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(f".{os.getpid()}.tmp")
    temporary.write_text(json.dumps(known, indent=1))
    temporary.replace(path)


def remembered_speed(model: str, machine: Cpu | None = None) -> Speed | None:
    """The speed last measured for `model` on this machine (its CPU model and count), if any."""
    path = speed_path()
    try:
        found = json.loads(path.read_text()).get(_speed_key(model, machine or cpu())) if path.is_file() else None
        if not found:
            return None
        load = found.get("load")
        return Speed(float(found["prefill"]), float(found["decode"]), float(found["measured"]),
                     int(found.get("judgments") or 0), float(load) if load else None)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
