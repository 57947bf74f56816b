"""The Label page's plan of labels on grouped data: how often it plans fewer labels than the interval over
groups needs, with the design effect grown to the plan (`geval.labeling.grown_effect`, as the page plans) and
with the effect measured on the labels so far alone, and how large its plans are.

Each dataset: 100 groups of 6 items (dialogues and their responses), a judge and people whose scores share a
part within a group (how much: each scenario's intraclass correlations), Pearson about .5; labels in a random
order. The labels needed: where the mean half-width over 40 draws of the 95% interval over groups, at the true
Pearson, reaches ±0.10. At 30, 60 and 120 labels, `--draws` datasets each; the figures are means over
`--seeds` seeds with their range.

    nice -n 10 python bench/label_plan.py [--draws 100] [--seeds 3]
"""

from __future__ import annotations

import argparse
import math
import re

import numpy as np
import pandas as pd
from _common import header

import geval

GROUPS, PER = 100, 6
SIZES = (30, 60, 120)
#: scenario -> (the judge's and people's share within a group, people on 1-5 piled at the top)
SCENARIOS = {"independent": ((0.0, 0.0), False), "grouped": ((0.4, 0.4), False),
             "grouped and skewed": ((0.4, 0.4), True), "people cluster more (people .6, judge .2)": ((0.2, 0.6), False),
             "people cluster less (people .2, judge .6)": ((0.6, 0.2), False)}


def draw(rng: np.random.Generator, shares: tuple[float, float], skewed: bool) -> tuple[np.ndarray, ...]:
    """A judge and people on GROUPS groups of PER items: each score's `shares` of variance within its group (the
    groups' parts correlated .7, the items' .35 to .5); `skewed`: people on 1-5 piled at the top, the judge on 1-3."""
    within = rng.multivariate_normal([0, 0], [[1, 0.7], [0.7, 1]], size=GROUPS)
    rho = 0.35 if any(shares) else 0.5
    own = rng.multivariate_normal([0, 0], [[1, rho], [rho, 1]], size=GROUPS * PER)
    weights = np.sqrt(np.array(shares))
    judge, human = (weights * np.repeat(within, PER, axis=0) + np.sqrt(1 - weights ** 2) * own).T
    if skewed:
        human, judge = np.digitize(human, [-1.6, -1.0, -0.4, 0.3]) + 1.0, 2 + np.tanh(judge)
    return judge, human, np.repeat(np.arange(GROUPS), PER)


def needed(rng: np.random.Generator, shares, skewed: bool) -> tuple[float, int]:
    """The true Pearson (mean over 100 datasets) and the labels at which the interval over groups reaches ±0.10."""
    truth = float(np.mean([np.corrcoef(*draw(rng, shares, skewed)[:2])[0, 1] for _ in range(100)]))
    for size in range(100, GROUPS * PER + 1, 20):
        widths = []
        for _ in range(40):
            judge, human, groups = draw(rng, shares, skewed)
            pick = rng.permutation(GROUPS * PER)[:size]
            effect = geval.labeling.design_effect(*(pd.Series(v[pick]) for v in (judge, human, groups))) or 1.0
            spread = 1.96 * math.sqrt(effect / (size - 3))
            widths.append((math.tanh(math.atanh(truth) + spread) - math.tanh(math.atanh(truth) - spread)) / 2)
        if np.mean(widths) <= 0.10:
            return truth, size
    return truth, GROUPS * PER + 1


def plans(rng: np.random.Generator, shares, skewed: bool, draws: int) -> tuple[list[int], list[int]]:
    """Over `draws` datasets at each of SIZES: the labels the page plans in all, and the labels planned with the
    effect measured on the labels alone."""
    ids = np.array([f"i{k:03d}" for k in range(GROUPS * PER)])
    grown, alone = [], []
    for labeled in SIZES:
        for _ in range(draws):
            judge, human, groups = draw(rng, shares, skewed)
            found = geval.labeling.Features(pd.DataFrame({"judge": judge}, index=ids), ["judge"], "judge",
                             pd.Series(groups.astype(str), index=ids), (1, 3))
            pick = rng.permutation(GROUPS * PER)[:labeled]
            line = geval.labeling.progress_line(found, pd.Series(human[pick], index=ids[pick]), "Natural")
            more = re.search(r"about (\d+) more", line)
            grown.append(labeled + int(more.group(1)) if more else int(re.search(r"needs about (\d+)", line).group(1)))
            r = float(np.corrcoef(judge[pick], human[pick])[0, 1])
            effect = geval.labeling.design_effect(*(pd.Series(v[pick]) for v in (judge, human, groups))) or 1.0
            planned = geval.labeling.planned_r(r, labeled, effect=effect)
            alone.append(geval.labeling.labels_needed(planned, effect=effect))
    return grown, alone


def spread(values: list[float], form: str) -> str:
    """The mean of `values` and their range over seeds, each in `form`."""
    return f"{format(np.mean(values), form)} ({format(min(values), form)}-{format(max(values), form)})"


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--draws", type=int, default=100, help="datasets at each number of labels, per seed")
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args()
    header(f"the Label page's plan on {GROUPS} groups of {PER}, labels in a random order, at {SIZES} labels, "
           f"{args.draws} datasets each, {args.seeds} seeds")
    for name, (shares, skewed) in SCENARIOS.items():
        short, short_alone, median, need = [], [], [], []
        for seed in range(args.seeds):
            rng = np.random.default_rng(seed)
            _, labels = needed(rng, shares, skewed)
            grown, alone = plans(rng, shares, skewed, args.draws)
            short.append(100 * float(np.mean(np.array(grown) < labels)))
            short_alone.append(100 * float(np.mean(np.array(alone) < labels)))
            median.append(float(np.median(grown)))
            need.append(labels)
        print(f"{name}: needs {spread(need, '.0f')} labels; plans short {spread(short, '.1f')}% grown to the plan, "
              f"{spread(short_alone, '.1f')}% with the measured effect alone; median plan {spread(median, '.0f')}",
              flush=True)
