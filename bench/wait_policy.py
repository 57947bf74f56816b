"""Figure (q): the embedded judge's time with its threads sleeping while they wait (OMP_WAIT_POLICY=PASSIVE, the
worker's default) / spinning a while first (libgomp's own default, the worker's before), alone and with a second
judge on the same cores, beside the judgments' distributions (the same in every run).

Each run is a fresh process scoring the first R responses of the first D dialogues of USR Topical-Chat with
prompts/topicalchat-naturalness.txt (an in-memory store: no cache), its model loaded outside the timing; "two at
once" starts two such processes together and times each.

    nice -n 5 python bench/wait_policy.py [--groups 2] [--per-group 6]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

from _common import REPO, embedded_judge, fail, header, topicalchat

#: The policies compared: libgomp's own default (the worker gets an empty value, which libgomp reads as unset and
#: says so in the worker's log) and the worker's default now.
POLICIES = {"spin a while (libgomp's default)": "", "sleep (PASSIVE)": "PASSIVE"}


def score(groups: int, per_group: int) -> dict:
    """In a child process: the judge's seconds over the items and each judgment's distribution."""
    import geval

    judge = embedded_judge()
    items = topicalchat(groups, per_group)
    store = geval.Store(":memory:")
    started = time.perf_counter()
    progress = geval.score(store, items, geval.Template.load("topicalchat-naturalness"), judge, "bench")
    seconds = time.perf_counter() - started
    if progress.failed:
        fail(f"{progress.failed} judgments failed")
    judged = store.judgments(columns=("item_id", "distribution"))
    return {"seconds": seconds, "distributions": dict(zip(judged["item_id"], judged["distribution"]))}


def runs(policy: str, together: int, args) -> list[dict]:
    """`together` children started at once with OMP_WAIT_POLICY `policy`; what each said."""
    environment = {**os.environ, "OMP_WAIT_POLICY": policy}
    children = [subprocess.Popen([sys.executable, __file__, "--child", str(args.groups), str(args.per_group)],
                                 cwd=REPO, env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                for _ in range(together)]
    found = []
    for child in children:
        out, err = child.communicate(timeout=3600)
        if child.returncode != 0:
            fail(f"OMP_WAIT_POLICY={policy!r}: {err[-800:]}")
        found.append(json.loads(out.strip().splitlines()[-1]))
    return found


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        print(json.dumps(score(int(sys.argv[2]), int(sys.argv[3]))))
        raise SystemExit(0)
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--groups", type=int, default=2)
    parser.add_argument("--per-group", type=int, default=6)
    args = parser.parse_args()
    header(f"The embedded judge's threads waiting: {args.groups} dialogues x {args.per_group} responses, "
           "alone and two at once")
    seen, times = set(), {}
    for name, policy in POLICIES.items():
        for together in (1, 2):
            found = runs(policy, together, args)
            seen |= {json.dumps(one["distributions"], sort_keys=True) for one in found}
            times[name, together] = max(one["seconds"] for one in found)
            seconds = ", ".join(f"{one['seconds']:.1f} s" for one in found)
            print(f"{name}, {'alone' if together == 1 else 'two at once'}: {seconds}", flush=True)
    spin, sleep = POLICIES
    print(f"FIGURE q: sleep / spin = {times[sleep, 1] / times[spin, 1]:.2f}x alone, "
          f"{times[sleep, 2] / times[spin, 2]:.2f}x two at once (the slower of the two); "
          f"the distributions {'the same in every run' if len(seen) == 1 else f'DIFFER ({len(seen)} sets)'}")
