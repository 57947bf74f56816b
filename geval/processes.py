"""Whether a process that started a run still lives (so that a killed run can be told from a
running one): this machine's name, and the process table of POSIX systems (/proc on Linux); and
this process's cycle collector paused while it makes a million objects (`cycles_uncollected`, `made_to_last`)."""

from __future__ import annotations

import functools
import gc
import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

#: This machine's name, recorded with each run beside its process id.
HOST = socket.gethostname()


def process_alive(pid: int, started_by: float | None = None) -> bool:
    """Whether process `pid` of this host is still running and, when `started_by` (a Unix time)
    is given and the start time can be read, began by then: a later process with a reused pid
    (e.g. after a container restart) is another process. A zombie counts as gone. Where it
    cannot be told (not POSIX), True: the run is left as it is."""
    if os.name != "posix":
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # e.g. another user's process: it exists
        return True
    stat = _proc_stat(pid)
    if stat is None:  # no /proc (macOS): alive is all we know
        return True
    state, began = stat
    return state != "Z" and (started_by is None or began <= started_by + 1.0)  # 1 s: /proc's rounding


def _proc_stat(pid: int) -> tuple[str, float] | None:
    """A process's state letter and start time (Unix time) from Linux /proc; None elsewhere."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
        booted = _boot_time()
    except (OSError, ValueError):
        return None
    return fields[0], booted + int(fields[19]) / os.sysconf("SC_CLK_TCK")


@functools.cache
def _boot_time() -> float:
    """When this machine booted (Unix time), from /proc/stat."""
    for line in Path("/proc/stat").read_text().splitlines():
        if line.startswith("btime "):
            return float(line.split()[1])
    raise ValueError("no btime in /proc/stat")


@contextmanager
def cycles_uncollected() -> Iterator[None]:
    """Python's cycle collector paused: the many objects made meanwhile (a batch's lines, a million items
    read) are freed by reference count, while each collection would walk every object alive."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@contextmanager
def made_to_last() -> Iterator[None]:
    """`cycles_uncollected` for objects made to live long (a dataset's million items, kept by the store): once
    made, they go to the collector's oldest generation unwalked (through the younger ones, each of their
    collections walked them all: 3 s of a report at a million items). Every other object alive then goes with
    them: a cycle among those is collected at the next full collection instead of sooner."""
    with cycles_uncollected():
        yield
        gc.freeze()  # every object the collector tracks, set aside ...
        gc.unfreeze()  # ... and back, into its oldest generation
