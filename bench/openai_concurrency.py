"""Figure (d): items/s of an OpenAI-compatible judge with N concurrent workers vs 1 worker.

Against tests/openai_stub.py on 127.0.0.1, answering each request after 200 ms, with the
real runner, the real openai SDK and a real SQLite store file. Each worker count scores its
own fresh items (about 10 rounds of requests), side by side in the same process.

    python bench/openai_concurrency.py [--delay 0.2] [--workers 1,4,8,16] [--rounds 10]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from _common import fail, header, synthetic_dataset, synthetic_template
from openai_stub import OpenAIStub

import geval


def measure(stub: OpenAIStub, workers: int, rounds: int, delay: float, folder: Path) -> dict:
    items = synthetic_dataset(workers * rounds, folder / f"w{workers}.jsonl", name=f"bench{workers}").items
    template = synthetic_template()
    judge = geval.make_judge("openai", model="stub-model", base_url=stub.url, api_key="sk-bench", mode="logprobs",
                             max_retries=2)
    store = geval.Store(folder / f"w{workers}.sqlite")
    stub.configure("logprobs", delay=delay)
    started = time.perf_counter()
    progress = geval.score(store, items, template, judge, f"bench{workers}", concurrency=workers)
    seconds = time.perf_counter() - started
    stored = store.db["calls"].count
    store.close()
    if progress.failed or progress.done != len(items) or stored != len(items) or stub.count != len(items):
        fail(f"{workers} workers: {progress.failed} failed, {progress.done} done, {stored} stored, "
             f"{stub.count} requests for {len(items)} items")
    return {"workers": workers, "items": len(items), "seconds": seconds, "rate": len(items) / seconds,
            "max_in_flight": stub.max_in_flight}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--delay", type=float, default=0.2)
    parser.add_argument("--workers", default="1,4,8,16")
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    counts = [int(w) for w in args.workers.split(",")]
    if 1 not in counts:
        counts.insert(0, 1)
    header(f"OpenAI-compatible concurrency (stub delay {args.delay * 1000:.0f} ms, ~{args.rounds} rounds each)")
    with OpenAIStub() as stub, tempfile.TemporaryDirectory() as tmp:
        results = [measure(stub, w, args.rounds, args.delay, Path(tmp)) for w in counts]
    base = results[0]["rate"]
    print(f"{'workers':>7} {'items':>6} {'seconds':>8} {'items/s':>8} {'ratio':>7} {'max in flight':>14}")
    for r in results:
        print(f"{r['workers']:>7} {r['items']:>6} {r['seconds']:>8.2f} {r['rate']:>8.2f} "
              f"{r['rate'] / base:>6.2f}x {r['max_in_flight']:>14}")
    top = results[-1]
    over = [r for r in results if r["max_in_flight"] > r["workers"]]
    if over:
        fail(f"the stub saw {over[0]['max_in_flight']} requests at once with {over[0]['workers']} workers")
    print(f"FIGURE d: {top['workers']} workers / 1 worker = {top['rate'] / base:.2f}x items/s "
          f"(target >= 12x); stub max_in_flight {top['max_in_flight']} <= {top['workers']}")
