"""Figure (e): the cache at scale with the scripted judge: a second run vs reading the rows, and memory.

For each size, one subprocess fills a fresh SQLite store (first run: N judge calls, with
`PRAGMA synchronous = OFF` on that connection only, to make the setup quick), then a
second subprocess runs the same work again (0 judge calls) and reads the same rows with
plain sqlite3, side by side, and measures the memory the second run added: peak RSS growth
during the run (VmHWM - VmRSS before; the items themselves are built before and excluded)
and the tracemalloc peak of a repeat of the run. It also times the cache lookups alone for
the same N keys: one `Store.cached_call` per key (what the runner does per item) against one
`Store.cached_calls` for all of them (one query per 500 keys), both parsing every answer.

    python bench/cache_scale.py [--sizes 10000,100000]
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

from _common import fail, header, synthetic_dataset, synthetic_template

import geval

TEMPLATE = synthetic_template()


def _status(field: str) -> int:
    """A /proc/self/status figure in kB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise KeyError(field)


def items_of(size: int, path: str) -> list:
    """The synthetic items, from a JSONL file beside the store (built before anything is timed)."""
    return synthetic_dataset(size, Path(path).with_suffix(".jsonl")).items


def first_run(size: int, path: str) -> dict:
    items = items_of(size, path)
    store = geval.Store(path)
    store.db.execute("PRAGMA synchronous = OFF")  # setup only: no fsync per judgment while filling the store
    judge = geval.make_judge("scripted")
    started = time.perf_counter()
    progress = geval.score(store, items, TEMPLATE, judge, "synthetic")
    seconds = time.perf_counter() - started
    if progress.done != size or len(judge.calls) != size:
        fail(f"first run of {size}: {progress.done} done, {len(judge.calls)} calls")
    return {"first_seconds": seconds}


def second_run(size: int, path: str) -> dict:
    items = items_of(size, path)
    store = geval.Store(path)
    judge = geval.make_judge("scripted")
    rss_before = _status("VmRSS")
    started = time.perf_counter()
    progress = geval.score(store, items, TEMPLATE, judge, "synthetic")
    seconds = time.perf_counter() - started
    rss_growth = _status("VmHWM") - rss_before
    if judge.calls or progress.cached != size:
        fail(f"second run of {size}: {len(judge.calls)} judge calls, {progress.cached} cached")
    conn = sqlite3.connect(path)
    started = time.perf_counter()
    rows = conn.execute(
        "SELECT j.*, c.prompt, c.scores, c.raw FROM judgments j JOIN calls c ON c.key = j.call_key "
        "WHERE j.signature = ?", [progress.signature]).fetchall()
    read_seconds = time.perf_counter() - started
    if len(rows) != size:
        fail(f"plain read of {size}: {len(rows)} rows")
    keys = [key for (key,) in conn.execute("SELECT call_key FROM judgments WHERE signature = ?", [progress.signature])]
    lookups = lookup_seconds(store, keys)
    started = time.perf_counter()
    frame = store.judgments("synthetic")
    frame_seconds = time.perf_counter() - started
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    again = geval.score(store, items, TEMPLATE, judge, "synthetic")
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    if judge.calls or again.cached != size or len(frame) != size:
        fail(f"repeat of {size}: {len(judge.calls)} judge calls")
    return {"second_seconds": seconds, "read_seconds": read_seconds, "frame_seconds": frame_seconds,
            "rss_growth_kb": rss_growth, "peak_rss_kb": _status("VmHWM"), "traced_peak_kb": peak // 1024,
            **lookups}


def lookup_seconds(store: geval.Store, keys: list[str]) -> dict:
    """Seconds to look up (and parse) every key: one `cached_call` each, then one `cached_calls`."""
    started = time.perf_counter()
    one_by_one = [store.cached_call(key) for key in keys]
    single = time.perf_counter() - started
    started = time.perf_counter()
    found = store.cached_calls(keys)
    many = time.perf_counter() - started
    if None in one_by_one or len(found) != len(set(keys)):
        fail(f"cache lookups of {len(keys)} keys: {one_by_one.count(None)} missing one by one, "
             f"{len(found)} found at once")
    return {"cached_call_seconds": single, "cached_calls_seconds": many}


def child(phase: str, size: int, path: str) -> dict:
    result = subprocess.run([sys.executable, __file__, "--phase", phase, "--size", str(size), "--path", path],
                            capture_output=True, text=True)
    if result.returncode:
        fail(f"{phase} {size}: {result.stderr.strip()[-500:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--phase", choices=["first", "second"], help=argparse.SUPPRESS)
    parser.add_argument("--size", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--path", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.phase:
        print(json.dumps((first_run if args.phase == "first" else second_run)(args.size, args.path)))
        raise SystemExit(0)
    sizes = [int(s) for s in args.sizes.split(",")]
    header(f"cache at scale, scripted judge, sizes {sizes}")
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for size in sizes:
            path = str(Path(tmp) / f"s{size}.sqlite")
            results[size] = {**child("first", size, path), **child("second", size, path)}
            r = results[size]
            print(f"{size:>7} items: first run {r['first_seconds']:.1f}s; second run {r['second_seconds']:.2f}s "
                  f"(0 judge calls) vs plain SQLite read {r['read_seconds']:.3f}s = "
                  f"{r['second_seconds'] / r['read_seconds']:.1f}x; store.judgments() {r['frame_seconds']:.2f}s; "
                  f"RSS growth {r['rss_growth_kb'] / 1024:.1f} MB, traced peak {r['traced_peak_kb'] / 1024:.1f} MB, "
                  f"process peak RSS {r['peak_rss_kb'] / 1024:.0f} MB; lookups of {size} keys: cached_call one by one "
                  f"{r['cached_call_seconds']:.2f}s, cached_calls {r['cached_calls_seconds']:.2f}s", flush=True)
    small, large = results[sizes[0]], results[sizes[-1]]
    print(f"FIGURE e1: second run / plain SQLite read of the same rows at {sizes[-1]}: "
          f"{large['second_seconds'] / large['read_seconds']:.1f}x (at {sizes[0]}: "
          f"{small['second_seconds'] / small['read_seconds']:.1f}x)")
    print(f"cache lookups at {sizes[-1]}: one cached_call per key / one cached_calls = "
          f"{large['cached_call_seconds'] / large['cached_calls_seconds']:.1f}x; cached_calls / plain SQLite read "
          f"of the rows = {large['cached_calls_seconds'] / large['read_seconds']:.1f}x")
    print(f"FIGURE e2: memory added by the second run, {sizes[-1]} / {sizes[0]}: RSS growth "
          f"{large['rss_growth_kb'] / max(1, small['rss_growth_kb']):.2f}x, traced peak "
          f"{large['traced_peak_kb'] / max(1, small['traced_peak_kb']):.2f}x (target <= 1.5x); "
          f"whole process peak RSS (items included) {large['peak_rss_kb'] / small['peak_rss_kb']:.2f}x")
