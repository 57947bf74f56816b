"""The embedded judge's llama.cpp, built in the background on a new machine while the app already
answers: the README's first command starts it (`python -m geval doctor --build`), and the Score page
and `python -m geval doctor` show how far it is, read from pip's log.

PyPI has no prebuilt wheel of llama-cpp-python, so pip builds llama.cpp from source, for every
x86-64 CPU with AVX2 (requirements-llama.txt): 2-3 minutes on an idle 2-core machine, 15-40 on a
busy one. pip runs verbosely in a process of its own (a new session: it outlives the command that
started it) and writes its output to a log in the user cache folder; the build's steps are ninja's
"[57/187] Building CXX object ..." lines. Nothing else is kept: whether it runs is its process (its
id is kept with its start), whether it succeeded is whether llama_cpp is then importable.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from geval.errors import JudgeError
from geval.judging.weights import cache_dir

#: The requirements file pip builds llama-cpp-python from (in the project's folder).
REQUIREMENTS = Path(__file__).resolve().parents[2] / "requirements-llama.txt"
#: Leaves llama.cpp's common library out of the build (the Python package never loads it): 83 steps instead of 140,
#: 0.45x the CPU time, the same logits (bench/README row p). Given in CMAKE_ARGS, which scikit-build-core reads.
WITHOUT_COMMON = Path(__file__).with_name("llama_without_common.cmake")
#: The command that builds it in the background (the README's first command runs it).
BUILD = "python -m geval doctor --build"
#: ninja's line for each step of the build: "[57/187] Building CXX object ...".
STEP = re.compile(r"^\s*\[(\d+)/(\d+)\] ", re.MULTILINE)
#: How much of a long log is read for the last step (its end).
TAIL = 64_000


def folder() -> Path:
    """Where the build's log and its process id are kept: the user cache folder's llama-build/."""
    return cache_dir().parent / "llama-build"


def installed() -> bool:
    """Whether llama-cpp-python is importable (without loading its native library)."""
    importlib.invalidate_caches()  # a build that ended since this process last looked
    return importlib.util.find_spec("llama_cpp") is not None


@dataclass(frozen=True)
class Build:
    """The build as it stands: `state` is "installed", "building", "failed" or "none" (never
    started here); `step` of `steps` the last step ninja began (0 before compiling starts)."""

    state: str
    step: int = 0
    steps: int = 0
    started: float | None = None
    log: Path | None = None
    reason: str = ""  # why it failed: the log's last error line

    def minutes(self, now: float | None = None) -> float:
        """Minutes since the build started."""
        return ((time.time() if now is None else now) - self.started) / 60 if self.started else 0.0

    def line(self, now: float | None = None) -> str:
        """What a user reads: where the build is, or why it failed and what to do."""
        if self.state == "installed":
            return "llama-cpp-python is installed: the embedded judge can run."
        if self.state == "building":
            where = (f"step {self.step} of {self.steps} ({self.step / self.steps:.0%})" if self.steps else
                     "preparing (pip is fetching and configuring llama.cpp)")
            return (f"The embedded judge's llama.cpp is being built in the background, for every x86-64 CPU with "
                    f"AVX2: {where}, {self.minutes(now):.0f} min so far (about 3 min on an idle 2-core machine, much "
                    f"longer on a busy one). The other judges work meanwhile; this one is ready when it ends.")
        if self.state == "failed":
            at = f" at step {self.step} of {self.steps}" if self.steps else ""
            reason = self.reason or "pip ended without installing it"
            return (f"The embedded judge's llama.cpp build failed{at}: {reason}. The log is {self.log}; build it again "
                    f"with `{BUILD}`.")
        return (f"The embedded judge needs llama-cpp-python, built from source for this machine's kind of CPU: "
                f"`{BUILD}` builds it in the background (2-3 minutes on an idle 2-core machine).")


def _running(pid: int) -> bool:
    """Whether `pid` is a pip process still at work (not a later process that took its id). Just after
    it is started its command line may still read empty (the kernel sets it late in exec): that is it."""
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes()
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z" and (not command or b"pip" in command.split(b"\0"))


def _last_error(text: str) -> str:
    """The log's last line that names an error (pip's, the compiler's or CMake's)."""
    lines = [line.strip() for line in text.splitlines() if re.search(r"\berror\b", line, re.IGNORECASE)]
    return lines[-1][:300] if lines else ""


def status() -> Build:
    """The build as it stands now (reads the kept process id and the log's end)."""
    started_file, log = folder() / "started.json", folder() / "pip.log"
    try:
        started = json.loads(started_file.read_text())
    except (OSError, ValueError):
        started = None
    if started is None or not _running(int(started.get("pid", 0))):
        if installed():
            return Build("installed")
        if started is None:
            return Build("none")
    text = ""
    try:
        with open(log, "rb") as handle:
            handle.seek(max(0, log.stat().st_size - TAIL))
            text = handle.read().decode("utf-8", "replace")
    except OSError:
        pass
    steps = STEP.findall(text)
    step, total = (int(steps[-1][0]), int(steps[-1][1])) if steps else (0, 0)
    began = float(started.get("time", 0)) or None
    if _running(int(started.get("pid", 0))):
        return Build("building", step, total, began, log)
    return Build("failed", step, total, began, log, _last_error(text))


def build_environment() -> dict[str, str]:
    """This process's environment with WITHOUT_COMMON added to CMAKE_ARGS (after any the user set)."""
    given = os.environ.get("CMAKE_ARGS", "")
    return {**os.environ, "CMAKE_ARGS": f"{given} -DCMAKE_PROJECT_llama.cpp_INCLUDE={WITHOUT_COMMON}".strip()}


def start(requirements: Path | None = None) -> Build:
    """Start building llama-cpp-python in the background (pip in a session of its own, its output in
    the log) from `requirements` (default REQUIREMENTS), unless it is installed or being built
    already; the build as it then stands."""
    requirements = requirements or REQUIREMENTS
    now = status()
    if now.state in ("installed", "building"):
        return now
    if not requirements.is_file():
        raise JudgeError(f"{requirements} is not there: run `pip install -r requirements-llama.txt` in the "
                         "project's folder to build the embedded judge's llama.cpp")
    folder().mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "pip", "install", "--verbose", "--disable-pip-version-check", "-r",
               str(requirements)]
    with open(folder() / "pip.log", "wb") as log:
        log.write(f"$ {' '.join(command)}\n".encode())
        log.flush()
        process = subprocess.Popen(command, cwd=requirements.parent, stdin=subprocess.DEVNULL, stdout=log,
                                   stderr=subprocess.STDOUT, start_new_session=True, env=build_environment())
    (folder() / "started.json").write_text(json.dumps({"pid": process.pid, "time": time.time()}))
    return status()
