"""Soak: many calls to an OpenAI-compatible judge that fails 5% of them, in one run.

The stub (stubs/openai_stub.py) answers each request or, with probability `--faults`, gives it one
of: HTTP 429, HTTP 500, a timeout, a dropped connection, a garbage answer (seeded, counted). The
run scores one item per call, 16 calls at a time, through the real runner, the openai SDK's
retries and a real SQLite file. Checked: every item stored once (ok, unscored or failed), no call
stored twice, each garbage answer an unscored judgment, each other fault one request more (a
retry), and the process's memory flat (RSS after all the calls / after a fifth of them).

    python bench/soak.py [--calls 10000] [--faults 0.05] [--seed 0]

It prints the figures and exits 1 if a check failed.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from _common import fail, header, synthetic_dataset, synthetic_template
from openai_stub import OpenAIStub

import geval


def rss_mb() -> float:
    """This process's resident memory, MB (Linux)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def soak(calls: int, faults: float, seed: int, concurrency: int = 16) -> dict:
    with tempfile.TemporaryDirectory(prefix="geval-soak-") as tmp, OpenAIStub() as stub:
        folder = Path(tmp)
        stub.configure("logprobs", hashed=True, fault_rate=faults, fault_seed=seed, fault_timeout=6.0,
                       keep_requests=False)
        items = synthetic_dataset(calls, folder / "soak.jsonl", name="soak").items
        judge = geval.make_judge("openai", model="stub", base_url=stub.url, api_key="sk-soak", mode="logprobs",
                                 timeout=3.0, max_retries=6)  # 1 s: a loaded machine (two test runs at once) timed out
        # answers that were not faults, and retried them beyond the one retry per fault counted
        store = geval.Store(folder / "soak.sqlite")
        marks: dict[int, float] = {}
        fifth = max(1, calls // 5)

        def watch(progress) -> None:
            if progress.done >= fifth and fifth not in marks:
                marks[fifth] = rss_mb()

        started = time.perf_counter()
        progress = geval.score(store, items, synthetic_template(), judge, "soak", concurrency=concurrency,
                               on_progress=watch)
        seconds = time.perf_counter() - started
        marks[calls] = rss_mb()
        frame = store.judgments("soak")
        statuses = frame["status"].value_counts().to_dict()
        stored_calls = store.db["calls"].count
        store.close()
        retried = sum(n for kind, n in stub.faults.items() if kind != "garbage")
        return {
            "calls": calls, "seconds": seconds, "requests": stub.count, "faults": dict(stub.faults),
            "items stored": frame["item_id"].nunique(), "rows": len(frame), "ok": statuses.get("ok", 0),
            "unscored": statuses.get("unscored", 0), "failed": statuses.get("failed", 0),
            "calls stored": stored_calls, "lost": calls - frame["item_id"].nunique(),
            "doubled": len(frame) - frame["item_id"].nunique(),
            "requests expected": calls + retried - statuses.get("failed", 0),
            "rss": marks, "rss ratio": marks.get(calls, float("nan")) / marks.get(fifth, float("nan")),
            "run status": progress.status,
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=10_000)
    parser.add_argument("--faults", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    header(f"soak: {args.calls:,} calls to the OpenAI stub, {args.faults:.0%} of them faulty (seed {args.seed})")
    f = soak(args.calls, args.faults, args.seed)
    faults = ", ".join(f"{kind} {n}" for kind, n in f["faults"].items())
    print(f"{f['calls']:,} calls in {f['seconds']:.0f} s: {f['requests']:,} requests; faults injected: {faults}")
    print(f"stored: {f['items stored']:,} items in {f['rows']:,} rows (ok {f['ok']:,}, unscored {f['unscored']}, "
          f"failed {f['failed']}), {f['calls stored']:,} calls; run {f['run status']}")
    rss = ", ".join(f"{mb:.0f} MB after {done:,}" for done, mb in sorted(f["rss"].items()))
    print(f"memory: {rss}")
    print(f"FIGURES: calls {f['calls']:,}; faults {sum(f['faults'].values())}; lost {f['lost']}; doubled {f['doubled']}; "
          f"garbage answers unscored {f['unscored']}/{f['faults']['garbage']}; requests {f['requests']:,} of "
          f"{f['requests expected']:,} expected (one retry per other fault); RSS ratio {f['rss ratio']:.2f}")
    problems = []
    if f["lost"] or f["doubled"] or f["calls stored"] != f["calls"] - f["failed"]:
        problems.append("items lost or stored twice")
    if f["unscored"] != f["faults"]["garbage"]:
        problems.append("a garbage answer was not stored as unscored (or an answer was unscored for another reason)")
    if f["requests"] != f["requests expected"]:
        problems.append("a fault was not retried exactly once")
    if args.calls >= 10_000 and not f["rss ratio"] <= 1.2:
        problems.append(f"memory grew {f['rss ratio']:.2f}x from {args.calls // 5:,} to {args.calls:,} calls")
    if problems:
        fail("; ".join(problems))


if __name__ == "__main__":
    main()
