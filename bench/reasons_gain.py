"""People's reasons into the judge, measured held out on Topical-Chat USR's Natural (geval.labeling.reasons).

The 30 reasons of bench/reasons/tc_usr_natural_30.csv were written by hand, one for each of the 30 items
of the first 8 dialogues where the embedded judge's score was furthest from the people's mean; each
gives the people's majority score and why (the text, the conversation's last turns and the three
people's scores were read; the judge's score was not copied into the reason). They are imported as
labels of an annotator "reasons-by-hand", and `from_reasons` makes the candidates, leaves the groups
they were made from out, and measures them with the prompt search.

    python bench/reasons_gain.py --judge stub                      # the stub server: judge and drafter
    nice -n 15 python bench/reasons_gain.py --judge embedded --store S --groups ctx-000,...   # scored groups only

Prints the candidates, the groups left out, the search's rounds, the gain (winner minus start on the test
groups, Pearson over items, with its 95% interval over groups) and whether a candidate is adopted.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

from _common import REPO, SHARED_DATA, fail, machine

import geval

REASONS = REPO / "bench" / "reasons" / "tc_usr_natural_30.csv"
RUBRIC = ("- Score 1 when the response ignores the partner's last turn or is garbled, ungrammatical English.\n"
          "- Score 2 when it is fluent but jumps to an unrelated fact or contradicts itself.\n"
          "- Score 3 when it answers or builds on the last turn as a person would, even if it is short.")


def measure(store: geval.Store, judge, drafter, groups: list[str] | None, budget: int, k: int, seed: int) -> None:
    dataset = geval.load_dataset("tc_usr_data", store=store)
    store.save_labels(geval.labeling.read_labels(REASONS), dataset.name)
    result = geval.labeling.reasons.from_reasons(store, dataset.name, judge, "Natural", budget, k=k, drafter=drafter,
                                                 groups=groups, seed=seed)
    print(f"machine: {machine()}")
    print(f"candidates: {', '.join(f'{n} ({t.label})' for n, t in result.candidates.items())}")
    if result.drafted:
        print("rubric drafted:\n  " + "\n  ".join(result.drafted))
    print(f"made from groups (left out of the search): {', '.join(result.source_groups)}")
    search = result.search
    print(f"tune groups {len(search.tune_groups)}, test groups {len(search.test_groups)}; {search.calls} judge calls")
    print(search.table.to_string(index=False))
    test = search.test or {}
    print(f"on the test groups: start {test.get('start', float('nan')):.3f}, winner ({search.winner}) "
          f"{test.get('winner', float('nan')):.3f}")
    note = result.reading.get("note") or ""
    print(f"gain {result.gain:+.3f} [{result.low:+.3f}, {result.high:+.3f}]" + (f" ({note})" if note else ""))
    print(result.verdict)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--judge", choices=["stub", "embedded"], default="stub")
    parser.add_argument("--store", help="the store (default: a temporary one)")
    parser.add_argument("--groups", help="comma-separated dialogues to use (default: all)")
    parser.add_argument("--budget", type=int, default=3000)
    parser.add_argument("--k", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if not (SHARED_DATA / "tc_usr_data.json").exists() and not os.environ.get("GEVAL_SHARED_DATA"):
        fail(f"{SHARED_DATA / 'tc_usr_data.json'} is not there")
    groups = [g.strip() for g in args.groups.split(",")] if args.groups else None
    with tempfile.TemporaryDirectory() as tmp:
        store = geval.Store(args.store or Path(tmp) / "store.sqlite")
        if args.judge == "embedded":
            measure(store, geval.make_judge("embedded"), None, groups, args.budget, args.k, args.seed)
            return
        from openai_stub import OpenAIStub

        with OpenAIStub() as judging, OpenAIStub() as drafting:
            judging.configure("logprobs", distribution={1: 0.2, 2: 0.5, 3: 0.3}, hashed=True)
            drafting.configure("text", text=RUBRIC)
            judge = geval.make_judge("openai", model="stub-model", base_url=judging.url, api_key="sk-test")
            drafter = geval.make_judge("openai", model="stub-drafter", base_url=drafting.url, api_key="sk-test")
            dataset = geval.load_dataset("tc_usr_data", store=store)
            geval.score(store, dataset.items, geval.Template.load("topicalchat-naturalness"), judge, dataset.name)
            measure(store, judge, drafter, groups, args.budget, args.k, args.seed)


if __name__ == "__main__":
    main()
