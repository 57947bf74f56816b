"""Figure (g): each way of asking the embedded judge, its time per aspect judgment and the prompt
tokens it evaluates / renders, against seed 001's naive n=20 loop, beside its agreement.

Side by side in one process, on the same Topical-Chat USR responses (R responses of dialogue 2,
each layout's context first warmed with dialogue 1, not timed, as in a whole-dataset run):

- naive: 20 completions of prompts/topicalchat-naturalness.txt at temperature 1 per item
  (`embedded_naive.naive_judgment`), one aspect judgment per item;
- each layout through `geval.score` on an in-memory store, from a fresh context: the shared
  layout (one prompt per aspect), the checklist (yes/no questions), few-shot (scored examples
  from other dialogues) and batch-wise (a dialogue's responses in one prompt, two orders).
  Time per aspect judgment = seconds / (items x 4 aspects).

With --store, the agreement of each layout's full run in that store (every response of
tc_usr_data scored by `python -m geval score tc_usr_data -t TEMPLATE`): the average item-level
Pearson of the four aspects and the mean of aspects against Overall, from `geval.leaderboard`.

    nice -n 10 python bench/layouts.py [--per-group 6] [--store PATH]
"""

from __future__ import annotations

import argparse
import time

from _common import embedded_judge, fail, fresh_context, header, topicalchat
from embedded_naive import naive_judgment, naive_model

import geval

AVERAGE, OVERALL = "average", "mean of aspects → Overall"  # columns of the leaderboard
ONE_PROMPT_PER_ASPECT = "one prompt per aspect"  # the four one-aspect templates read together: the reference
LAYOUTS = ("topicalchat-shared", "topicalchat-checklist", "topicalchat-fewshot", "topicalchat-batch")


def layout_figures(judge, name: str, warm: list, timed: list, pool: list) -> dict:
    """Seconds per aspect judgment and tokens evaluated / rendered of template `name` on `timed`."""
    template = geval.Template.load(name)
    store = geval.Store(":memory:")
    fresh_context(judge)
    geval.score(store, warm, template, judge, "bench", examples_from=pool)
    before = judge.counters()
    fresh = geval.plan(store, timed, template, judge, examples_from=pool).calls  # a batch's items share their calls
    started = time.perf_counter()
    progress = geval.score(store, timed, template, judge, "bench", examples_from=pool)
    seconds = time.perf_counter() - started
    store.close()
    if progress.failed or progress.unscored or progress.calls != fresh:
        fail(f"{name}: {progress.failed} failed, {progress.unscored} unscored, {progress.calls} judge calls "
             f"(expected {fresh} fresh calls, every judgment answered)")
    judgments = len(timed) * len(template.aspects)
    after = judge.counters()
    return {"seconds": seconds / judgments, "calls": progress.calls / len(timed),
            "evaluated": (after["evaluated"] - before["evaluated"]) / judgments,
            "rendered": (after["rendered"] - before["rendered"]) / judgments}


def agreement(store_path: str) -> dict[str, tuple[str, str]]:
    """Per template name: (average Pearson of the four aspects, mean of aspects -> Overall) of its full run."""
    board = geval.leaderboard(geval.Store(store_path), "tc_usr_data", baselines=(), ceiling=False, against=None,
                              primary_only=True)
    wide = board.wide()
    found = {}
    for _, row in wide.iterrows():
        for name in (*LAYOUTS, ONE_PROMPT_PER_ASPECT):
            if (f" {name}@" in row["row"] or f" {name} (" in row["row"]) and "[" not in row["row"]:  # not a calibrated row
                found.setdefault(name, (row.get(AVERAGE, ""), row.get(OVERALL, "")))
    return found


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--per-group", type=int, default=6)
    parser.add_argument("--samples", type=int, default=20)
    parser.add_argument("--store", help="a store with full runs of the layouts on tc_usr_data, for their agreement")
    args = parser.parse_args()
    header(f"layouts of the embedded judge vs the naive {args.samples}-sample loop: {args.per_group} responses of "
           "one Topical-Chat dialogue, warm context")
    judge = embedded_judge()
    pool = topicalchat(60, 6)
    items = topicalchat(2, args.per_group)
    warm = [item for item in items if item.group == items[0].group]
    timed = [item for item in items if item.group == items[-1].group]

    naive_llm = naive_model(judge)
    naive_template = geval.Template.load("topicalchat-naturalness")
    naive_llm.create_chat_completion(messages=[{"role": "user", "content": naive_template.render(warm[0])}],
                                     max_tokens=1)
    started = time.perf_counter()
    for item in timed:
        naive_judgment(naive_llm, naive_template.render(item), list(naive_template.aspects), args.samples)
    naive = (time.perf_counter() - started) / len(timed)
    naive_llm.close()

    figures = {name: layout_figures(judge, name, warm, timed, pool) for name in LAYOUTS}
    agreed = agreement(args.store) if args.store else {}
    print(f"naive {args.samples}-sample loop: {naive:.2f} s per aspect judgment")
    if ONE_PROMPT_PER_ASPECT in agreed:
        print(f"{ONE_PROMPT_PER_ASPECT} (topicalchat-*, the reference): average Pearson "
              f"{agreed[ONE_PROMPT_PER_ASPECT][0]}, mean of aspects → Overall {agreed[ONE_PROMPT_PER_ASPECT][1]}")
    for name, f in figures.items():
        agreement_text = (f"; average Pearson {agreed[name][0]}, mean of aspects → Overall {agreed[name][1]}"
                          if name in agreed else "")
        print(f"{name:23} {f['seconds']:.3f} s per aspect judgment, {f['calls']:.1f} calls per item, "
              f"evaluated / rendered {f['evaluated']:.0f} / {f['rendered']:.0f} tokens per aspect judgment = "
              f"{f['evaluated'] / f['rendered']:.3f}; naive / layout = {naive / f['seconds']:.1f}x{agreement_text}")
    print("FIGURE g: naive / layout per aspect judgment: "
          + ", ".join(f"{name.split('-')[1]} {naive / f['seconds']:.1f}x" for name, f in figures.items())
          + f" (goal >= 10x); on {len(timed)} items")
