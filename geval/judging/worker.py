"""Native models in a child process of their own, so that a crash cannot take the caller down.

llama.cpp (the embedded judge, the likelihood gain) and the sentence encoder run native code: a
fault there (SIGSEGV, SIGILL, SIGBUS), a kill by the out-of-memory killer or a hang would end or
freeze the process that runs it, and in the app that process is the Streamlit server of every
session. Each model therefore lives in a worker process (`python -m geval.judging.worker`) that
builds it once and answers calls on it over a socket: method name and arguments in, the result
out (prompts in, score distributions out), one call at a time. Whatever the model keeps between
calls (llama.cpp's KV cache: the prefix two prompts share is evaluated once) stays in the worker. Its llama.cpp
threads sleep while they wait for work (OMP_WAIT_POLICY=PASSIVE, unless the caller's environment sets it): as
fast alone, and not spinning against other work on the same cores.

A worker stays, its model loaded, across the calls, runs and checks of its process, until it goes
`IDLE_SECONDS` without a call (a thread of this process ends it then, freeing the model's memory)
or another model of its role starts (another GGUF chosen for the judge): the next call loads its
model again.

When the worker dies or does not answer within a call's limit, the call raises `WorkerDied`,
whose message names what happened and what to do ("the embedded judge crashed (SIGSEGV, in
native code under llama_cpp/llama.py eval): run `python -m geval doctor`"); the dead worker is
forgotten and the next call starts a fresh one. The worker ends when its caller does (its socket
closes).

A test hook makes a worker fail on purpose: GEVAL_WORKER_FAULT="<role>:<fault>:<after>[:<file>]",
e.g. "judge:SIGSEGV:3" kills the judge's worker with SIGSEGV at its 4th call (`fault` is a signal
name, or "hang" to stop answering); with a file, the fault is made once, and the file marks it made.
Another counts the models built: with GEVAL_WORKER_LOADS=<file>, each worker appends a line
"<role> <target>" to the file once its model is built (`loads` reads it).
"""

from __future__ import annotations

import atexit
import faulthandler
import importlib
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from geval.errors import GevalError, WorkerDied

#: The test hooks' environment variables (see the module's docstring).
FAULT = "GEVAL_WORKER_FAULT"
LOADS = "GEVAL_WORKER_LOADS"
#: Seconds a worker may take to start and build its model before it counts as hung.
START_SECONDS = 600.0
#: Seconds without a call after which a worker ends (its model's memory freed; the next call loads it again).
IDLE_SECONDS = 15 * 60.0
#: How often idle workers are looked for.
REAP_EVERY = 30.0
#: OMP_WAIT_POLICY of a worker whose caller sets none: llama.cpp's OpenMP threads sleep while they wait.
WAIT_POLICY = "PASSIVE"
DOCTOR = "run `python -m geval doctor`"
#: What each signal that ends a worker means, in words.
SIGNALS = {
    "SIGSEGV": "a fault in native code",
    "SIGBUS": "a fault in native code",
    "SIGILL": "an instruction this CPU does not have: the native library was built for another CPU",
    "SIGABRT": "native code gave up (an assertion)",
    "SIGFPE": "an arithmetic fault in native code",
    "SIGKILL": "killed from outside: the out-of-memory killer, or someone ended it",
    "SIGTERM": "ended from outside",
}


@dataclass
class Worker:
    """One model in a child process: `target` ("module:Class") built with `options`, named for
    messages by `name` ("the embedded judge"); `role` is what the test hook matches."""

    target: str
    options: dict
    name: str
    role: str
    info: dict = field(default_factory=dict)  # what the model said of itself once built (e.g. its measured speed)
    process: subprocess.Popen | None = None
    connection: Connection | None = None
    log: Path | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)
    load_seconds: float | None = None  # how long starting it and building its model took
    last_used: float = field(default_factory=time.time)  # when it was last handed out or answered

    @property
    def alive(self) -> bool:
        """Whether the worker process runs (it may still be building its model)."""
        return self.process is not None and self.process.poll() is None

    def start(self) -> dict:
        """Start the process and build the model in it; returns what the model says of itself."""
        parent, child = socket.socketpair()
        handle, log = tempfile.mkstemp(prefix=f"geval-{self.role}-", suffix=".log")
        self.log = Path(log)
        # the child imports what this process can: its module search path, this package's first
        # llama.cpp's threads sleep while they wait (WAIT_POLICY) unless the caller chose: as fast on idle cores,
        # faster beside other work on them (bench/README.md, (q))
        environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parents[2]),
                                                                   *filter(None, sys.path)]),
                       "OMP_WAIT_POLICY": os.environ.get("OMP_WAIT_POLICY", WAIT_POLICY)}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "geval.judging.worker", str(child.fileno())],
            pass_fds=(child.fileno(),), stdin=subprocess.DEVNULL, stdout=handle, stderr=handle, env=environment,
        )
        os.close(handle)
        child.close()
        self.connection = Connection(parent.detach())
        started = time.perf_counter()
        self.info = self._exchange(("build", self.target, self.options, self.role), START_SECONDS,
                                   " while loading its model")
        self.load_seconds = time.perf_counter() - started
        self.last_used = time.time()
        return self.info

    def call(self, method: str, *args: Any, seconds: float) -> Any:
        """`method(*args)` on the model; raises WorkerDied when the worker dies or gives no answer
        within `seconds`, and the model's own GevalError as it was raised there."""
        with self.lock:
            if not self.alive:  # it died between two calls (killed from outside)
                raise WorkerDied(self._death(True, seconds, ""))
            try:
                return self._exchange(("call", method, args), seconds, "")
            finally:
                self.last_used = time.time()

    def _exchange(self, message: tuple, seconds: float, doing: str) -> Any:
        try:
            self.connection.send(message)
            answered = self.connection.poll(seconds)
            reply = self.connection.recv() if answered else None
        except (EOFError, OSError):
            answered, reply = True, None
        if reply is None:
            raise WorkerDied(self._death(answered, seconds, doing))
        kind, value = reply
        if kind == "ok":
            return value
        raise _error_class(value[0])(value[1])

    def _death(self, answered: bool, seconds: float, doing: str) -> str:
        """Why the worker gave no answer, in one line with what to do; ends it. `doing`: what it
        was asked (" while loading its model"; "" for a call)."""
        if not answered:  # no answer in time: a hang (or a machine far slower than estimated)
            self.close()
            return (f"{self.name} did not answer within {seconds:.0f} s{doing} and was stopped: it hung, or this "
                    f"machine is far slower than measured; {DOCTOR}")
        try:
            code = self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            code = None
        said = self.log.read_text(errors="replace") if self.log and self.log.exists() else ""
        self.close()
        if code is not None and code < 0:
            name = signal.Signals(-code).name
            where = native_frame(said) if name != "SIGKILL" else ""
            return (f"{self.name} crashed{doing} ({name}, {SIGNALS.get(name, 'a signal')}"
                    f"{', under ' + where if where else ''}): {DOCTOR}")
        last = next((line for line in reversed(said.splitlines()) if line.strip()), "")
        return f"{self.name} ended unexpectedly{doing} (exit code {code}{': ' + last[:200] if last else ''}): {DOCTOR}"

    def close(self) -> None:
        """End the worker (its model is freed with it) and remove its log."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        if self.connection is not None:
            self.connection.close()
        if self.log is not None:
            self.log.unlink(missing_ok=True)


def native_frame(text: str) -> str:
    """The innermost Python frame of the traceback faulthandler printed at a crash, as
    'llama_cpp/llama.py eval' ("" when there is none)."""
    frames = re.findall(r'File "([^"]+)", line \d+ in (\S+)', text)
    if not frames:
        return ""
    path, function = frames[0]
    return f"{'/'.join(Path(path).parts[-2:])} {function}"


def _error_name(exc: Exception) -> tuple[str, str]:
    """An error raised in the worker as it crosses to the caller: ("module:Class", message);
    anything but a GevalError is an unexpected error, named with its type."""
    if isinstance(exc, GevalError):
        return f"{type(exc).__module__}:{type(exc).__qualname__}", str(exc)
    return "geval.errors:GevalError", f"unexpected error: {type(exc).__name__}: {exc}"


def _error_class(name: str) -> type[GevalError]:
    """The GevalError class a worker named ("module:Class"); GevalError when it is not one."""
    module, _, cls = name.partition(":")
    try:
        found = getattr(importlib.import_module(module), cls, None)
    except ImportError:
        found = None
    return found if isinstance(found, type) and issubclass(found, GevalError) else GevalError


_WORKERS: dict[tuple, Worker] = {}
_WORKERS_LOCK = threading.Lock()
_REAPER: list[threading.Thread] = []  # the thread that ends idle workers, once started


def worker(target: str, options: dict, name: str, role: str) -> Worker:
    """The running worker of this process for `target` built with `options`, started (and its
    model built) when there is none or the last one died; starting one ends the idle workers of
    the same role (another model chosen for it)."""
    key = (target, tuple(sorted(options.items())))
    with _WORKERS_LOCK:
        found = _WORKERS.get(key)
        if found is None or not found.alive:
            found = Worker(target, dict(options), name, role)
            _WORKERS[key] = found
        if found.process is None:
            _close_where(lambda other: other is not found and other.role == role)
            _start_reaper()
            try:
                found.start()
            except BaseException:
                del _WORKERS[key]
                found.close()
                raise
        found.last_used = time.time()  # handed out: not idle
        return found


def running(target: str, options: dict) -> Worker | None:
    """The live worker for `target` and `options`, if there is one (nothing is started)."""
    found = _WORKERS.get((target, tuple(sorted(options.items()))))
    return found if found is not None and found.alive and found.process is not None else None


def end(target: str, options: dict) -> bool:
    """End the worker for `target` and `options` now (its model's memory freed; the next call loads
    it again); False when there is none, or it is in a call."""
    key = (target, tuple(sorted(options.items())))
    with _WORKERS_LOCK:
        return bool(_close_where(lambda each: _WORKERS.get(key) is each))


def close_idle(now: float | None = None) -> int:
    """End the workers that had no call for `IDLE_SECONDS` (as of `now`), freeing their models'
    memory; returns how many ended. A worker in a call is never ended."""
    now = time.time() if now is None else now
    with _WORKERS_LOCK:
        return _close_where(lambda each: now - each.last_used >= IDLE_SECONDS)


def _close_where(condition) -> int:
    """End the workers (not in a call) that meet `condition`; the caller holds _WORKERS_LOCK."""
    ended = 0
    for key, each in list(_WORKERS.items()):
        if condition(each) and each.lock.acquire(blocking=False):
            try:
                each.close()
                del _WORKERS[key]
                ended += 1
            finally:
                each.lock.release()
    return ended


def _start_reaper() -> None:
    """Start the thread that ends idle workers, once per process (the caller holds _WORKERS_LOCK)."""
    if _REAPER:
        return

    def reap() -> None:
        while True:
            time.sleep(REAP_EVERY)
            close_idle()

    _REAPER.append(threading.Thread(target=reap, name="geval-worker-reaper", daemon=True))
    _REAPER[0].start()


def loads(path: str | Path, role: str) -> int:
    """How many models of `role` the workers built, as the GEVAL_WORKER_LOADS hook counted them in `path`."""
    path = Path(path)
    return sum(line.split()[0] == role for line in path.read_text().splitlines() if line.strip()) \
        if path.is_file() else 0


@atexit.register
def close_all() -> None:
    """End every worker of this process."""
    with _WORKERS_LOCK:
        for each in _WORKERS.values():
            each.close()
        _WORKERS.clear()


# --- the worker process ------------------------------------------------------------------------------


def _fault(role: str) -> tuple[str, int, Path | None] | None:
    """The test hook's (fault, calls before it, file that marks it done) for this role, if set (see
    the module's docstring); a fault whose file exists already happened: it is not made again."""
    parts = os.environ.get(FAULT, "").split(":", 3)
    if len(parts) < 3 or parts[0] != role:
        return None
    once = Path(parts[3]) if len(parts) == 4 else None
    return None if once is not None and once.exists() else (parts[1], int(parts[2]), once)


def _serve(connection: Connection) -> None:
    """Build the model the first message asks for, then answer calls until the caller goes."""
    _, target, options, role = connection.recv()
    module, _, cls = target.partition(":")
    try:
        model = getattr(importlib.import_module(module), cls)(**options)
    except Exception as exc:  # the model could not be built: said to the caller, which raises it
        connection.send(("error", _error_name(exc)))
        return
    if os.environ.get(LOADS):
        with open(os.environ[LOADS], "a") as counted:
            counted.write(f"{role} {target}\n")
    connection.send(("ok", getattr(model, "info", {})))
    fault, calls, once = _fault(role) or ("", -1, None)
    while True:
        try:
            _, method, args = connection.recv()
        except EOFError:  # the caller ended
            return
        if calls == 0:
            if once is not None:
                once.touch()
            if fault == "hang":
                time.sleep(10**6)
            os.kill(os.getpid(), getattr(signal, fault))
        calls -= 1
        try:
            result = getattr(model, method)(*args)
        except Exception as exc:  # the call failed, the model stands: the caller raises it
            connection.send(("error", _error_name(exc)))
            continue
        connection.send(("ok", result))


def main() -> None:
    """The worker process's entry: `python -m geval.judging.worker FD`."""
    faulthandler.enable()  # a crash prints the Python stack to the log the caller reads
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl+C is the caller's to handle
    connection = Connection(int(sys.argv[1]))
    try:
        _serve(connection)
    except (EOFError, BrokenPipeError, ConnectionResetError):
        pass
    finally:
        connection.close()
    os._exit(0)  # no interpreter shutdown: llama.cpp's finalizers can fail there


if __name__ == "__main__":
    main()
