"""The embedded judge's model loaded with its speed measured (A: none remembered on this machine) and with the
speed read as remembered (B), side by side in one run, A and B alternating; after each load one judgment of the
same prompt, whose distribution must not move with the kind of load.

    python bench/judge_load.py [--rounds 3]

The speeds are kept in a file of the run's own (GEVAL_SPEED_FILE), never this machine's. It prints each load's
seconds, the ratio of the medians and the largest difference between the judgments' probabilities, and exits 1
when a B load measured again or a judgment moved.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from _common import fail, header, topicalchat

FOLDER = Path(tempfile.mkdtemp(prefix="geval-judge-load-"))
os.environ["GEVAL_SPEED_FILE"] = str(FOLDER / "speed.json")  # set before geval reads it

import geval  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="pairs of loads (A then B)")
    args = parser.parse_args()
    header("the embedded judge's load: its speed measured (A) or read as remembered (B)")
    judge, template = geval.make_judge("embedded"), geval.Template.load("topicalchat-naturalness")
    prompt = template.render(topicalchat(1, 1)[0])
    judge.load()  # the file's pages read in once, before any timing
    judge.unload()
    seconds: dict[str, list[float]] = {"A": [], "B": []}
    judged = []
    for kind in "AB" * args.rounds:
        if kind == "A":
            (FOLDER / "speed.json").unlink(missing_ok=True)
        started = time.perf_counter()
        judge.load()
        seconds[kind].append(time.perf_counter() - started)
        if (judge.worker.info["speed"] is None) != (kind == "B"):
            fail(f"a load of kind {kind} {'did not measure' if kind == 'A' else 'measured'} the speed")
        judged.append(judge.judge(prompt, list(template.aspects)).scores["naturalness"].distribution)
        judge.unload()
    moved = max(abs(one[score] - judged[0][score]) for one in judged for score in judged[0])
    print("A (measured):", " ".join(f"{s:.2f} s" for s in seconds["A"]))
    print("B (read):    ", " ".join(f"{s:.2f} s" for s in seconds["B"]))
    ratio = statistics.median(seconds["A"]) / statistics.median(seconds["B"])
    print(f"FIGURES: median A {statistics.median(seconds['A']):.2f} s, B {statistics.median(seconds['B']):.2f} s "
          f"(A/B {ratio:.2f}x); the judgment after each load moved by at most {moved:.2e}")
    if moved > 1e-9:
        fail(f"a judgment moved by {moved:.2e} with the kind of load")


if __name__ == "__main__":
    main()
