"""Simulated learning curves: how many labels buy how much agreement, the dataset's known human
scores playing the user (issue 26), written to reports/learning_curves.md.

For each dataset (a name stored in a store scored with one prompt per aspect, and any other
templates) and each human aspect a one-aspect template is compared with, per seed: a share of
the groups (30%, at least 10 when there are 20 or more) is set aside, seeded, and never labeled;
the other groups' items are "labeled" in a random order and in the most informative order (the
first 10 at random, then batches of 10 where the judge rows and the combination fitted on the
labels so far disagree most: `geval.labeling.informativeness`). After each number of labels, the
judge alone (the one-aspect template) and the combination of every judge score and the fast
baselines fitted on the labels (`geval.labeling.learning_curve`) are read two ways:

- on the groups set aside (`read_on`): the combination fitted on all the labels so far, beside the
  judge on the same items, with the paired 95% interval of their difference (the jackknife over
  groups): what the labels buy on data no label came from, the same items for both orders;
- on the labeled items, as the Label and Agreement pages read them (each item's value fitted on
  the other groups' labels), which a user can see (the informative order's labeled items are the
  hard ones, where the judge alone reads lower).

"Beats the judge from": the fewest labels from which on (at that number and every larger one) the
difference's interval lies above 0. With --average-goal, the fewest labels from which on the
combination's Pearson on the groups set aside, averaged over the aspects, stays at or above it.

    nice -n 10 python bench/learning_curves.py --dataset tc_usr_data=STORE [--dataset NAME=STORE ...]
        [--seeds 5] [--average-goal tc_usr_data=0.50] [--baselines rouge-l,bleu,chrf,length]
        [--out reports/learning_curves.md]

The stores are only read (baseline scores are cached in them: pass copies of stores other
processes write to).
"""

from __future__ import annotations

import argparse
import datetime
import math
import shlex
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from _common import REPO, fail, machine

import geval

ORDERS = ("random", "informative")
BATCH = 10  # labels chosen at once by the informative order


def one_aspect_judges(store: geval.Store, dataset: str) -> dict[str, tuple[str, str]]:
    """Human aspect -> (template version, signature) of the newest one-aspect template compared with
    it (a prompt search's variants left out): the judge read alone."""
    combos = store.combos(dataset)
    known = list(dict.fromkeys(a for item in store.items(dataset) for a in item.human))
    found: dict[str, tuple[str, str]] = {}
    for version, signature, ok, searched in zip(combos["template_version"], combos["signature"], combos["ok"],
                                                combos["searched"]):
        template = store.template(version)
        if ok and not searched and len(template.aspects) == 1:
            wanted = (template.aspects[0].human or template.aspects[0].name).lower()
            human = next((h for h in known if h.lower() == wanted), None)
            if human:
                found.setdefault(human, (version, signature))
    return dict(sorted(found.items(), key=lambda pair: known.index(pair[0])))


def informative_order(found, truth: pd.Series, ids: list[str], seed: int) -> list[str]:
    """The first MIN_FIT of the seeded random order, then BATCH at a time where the judge rows and the
    combination fitted on the labels so far disagree most (the Label page's "most informative")."""
    labeling = geval.labeling
    labeled = labeling.order(ids, "random", seed)[: labeling.MIN_FIT]
    while len(labeled) < len(ids):
        spread = labeling.informativeness(found, truth[labeled], seed)
        ranked = labeling.order(ids, "informative", seed, spread=spread.reindex(ids)) if spread is not None else \
            labeling.order(ids, "random", seed)
        taken = set(labeled)
        labeled += [i for i in ranked if i not in taken][:BATCH]
    return labeled


def set_aside(groups: pd.Series, seed: int, share: float = 0.3, at_least: int = 10) -> tuple[list[str], list[str]]:
    """The items to label and the items of the groups set aside (never labeled), split by group:
    `share` of the groups, at least `at_least` when that leaves as many or more to label."""
    names = sorted(groups.unique())
    wanted = max(round(share * len(names)), at_least if len(names) >= 2 * at_least else 0)
    aside = set(np.random.default_rng(seed).permutation(names)[:wanted])
    return [i for i in groups.index if groups[i] not in aside], [i for i in groups.index if groups[i] in aside]


def simulate(store: geval.Store, dataset: str, aspect: str, combo: tuple[str, str], seeds: int,
             baselines: list[str]) -> dict:
    """One aspect, every order and seed: the learning curves read on the groups set aside ("aside")
    and on the labeled items ("labeled"), with the features read once."""
    found = geval.labeling.features(store, dataset, aspect, combo, baselines)
    truth = pd.Series({item.id: item.human_mean(aspect) for item in store.items(dataset)})
    ids = [i for i in found.table.index if pd.notna(found.table.at[i, found.judge]) and pd.notna(truth.get(i))]
    found = geval.labeling.Features(found.table.loc[ids], found.rows, found.judge, found.groups[ids], found.scale)
    result = {"found": found, "items": len(ids), "groups": found.groups.nunique(),
              "aside": {how: [] for how in ORDERS}, "labeled": {how: [] for how in ORDERS}}
    for seed in range(seeds):
        pool, aside = set_aside(found.groups, seed)
        result["pool"] = len(pool)
        for how in ORDERS:
            ordered = geval.labeling.order(pool, "random", seed) if how == "random" else \
                informative_order(found, truth, pool, seed)
            result["aside"][how].append(geval.labeling.learning_curve(found, truth, ordered, aspect, read_on=aside))
            result["labeled"][how].append(geval.labeling.learning_curve(found, truth, ordered, aspect))
    return result


def from_on(values: pd.Series, holds) -> int | None:
    """The first index from which on `holds(value)` is true for every value (None: not at the last)."""
    good = [bool(holds(v)) for v in values]
    if not good or not good[-1]:
        return None
    start = len(good) - next((k for k, ok in enumerate(reversed(good)) if not ok), len(good))
    return int(values.index[start])


def per_seed(found: list, shown_as=str) -> str:
    """"median 75 (75, 50, never, ...)": a figure per seed and their median (or how many reached it)."""
    shown = ", ".join(shown_as(n) if n is not None else "never" for n in found)
    reached = [n for n in found if n is not None]
    median = f"median {statistics.median(reached):g}" if len(reached) == len(found) else \
        f"{len(reached)} of {len(found)} seeds"
    return f"{median} ({shown})"


def number(value: float, low: float = math.nan, high: float = math.nan) -> str:
    if not math.isfinite(value):
        return "–"
    return f"{value:.3f}" + (f" [{low:.3f}, {high:.3f}]" if math.isfinite(low) and math.isfinite(high) else "")


def curve_rows(result: dict) -> list[str]:
    """Markdown rows (seed 0): per number of labels and order, the judge alone, the combination and
    their difference on the groups set aside, then the difference on the labeled items."""
    head = ["labels"]
    for how in ORDERS:
        head += [f"judge ({how})", f"combination ({how})", f"combination − judge ({how})",
                 f"combination − judge on the labeled items ({how})"]
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    aside = {how: result["aside"][how][0].points.set_index("labels") for how in ORDERS}
    labeled = {how: result["labeled"][how][0].points.set_index("labels") for how in ORDERS}
    for size in aside["random"].index:
        cells = [str(size)]
        for how in ORDERS:
            p, q = aside[how].loc[size], labeled[how].loc[size]
            cells += [number(p["judge"], p["judge_low"], p["judge_high"]),
                      number(p["combined"], p["combined_low"], p["combined_high"]),
                      number(p["difference"], p["low"], p["high"]), number(q["difference"], q["low"], q["high"])]
        rows.append("| " + " | ".join(cells) + " |")
    return rows


def average_rows(by_aspect: dict[str, dict], goal: float) -> list[str]:
    """Where the combination's Pearson on the groups set aside, averaged over the aspects, stays at or
    above `goal`, per order and seed; and the seeds' mean of the averages as a table."""
    lines, tables = [], {}
    for how in ORDERS:
        seeds = len(next(iter(by_aspect.values()))["aside"][how])
        averages = [pd.concat([r["aside"][how][seed].points.set_index("labels")[["judge", "combined"]]
                               for r in by_aspect.values()], axis=1).T.groupby(level=0).mean().T
                    for seed in range(seeds)]
        reached = [from_on(average["combined"].dropna(), lambda v: v >= goal) for average in averages]
        tables[how] = pd.concat(averages).groupby(level=0).mean()
        lines.append(f"- {how.capitalize()} order: {per_seed(reached)} labels.")
    lines += ["", "| labels | judge alone | combination (random) | combination (informative) |", "|---|---|---|---|"]
    for size in tables["random"].index:
        lines.append(f"| {size} | {tables['random'].at[size, 'judge']:.3f} | "
                     f"{tables['random'].at[size, 'combined']:.3f} | "
                     + (f"{tables['informative'].at[size, 'combined']:.3f} |" if size in tables["informative"].index
                        else "– |"))
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", action="append", required=True, metavar="NAME=STORE",
                        help="a dataset stored (and scored) in that store; repeatable")
    parser.add_argument("--seeds", type=int, default=5, help="random orders (and informative starts) per aspect")
    parser.add_argument("--average-goal", action="append", default=[], metavar="NAME=PEARSON",
                        help="report the labels from which on the combination's average Pearson stays at or above it")
    parser.add_argument("--baselines", default=",".join(geval.labeling.FAST),
                        help=f"the baselines in the combination, comma-separated (default {','.join(geval.labeling.FAST)}, "
                             "as the Label page; 'embedding', 'bertscore' and 'pmi' run a model on every item once)")
    parser.add_argument("--out", default=str(REPO / "reports" / "learning_curves.md"))
    args = parser.parse_args()
    goals = {name: float(value) for name, _, value in (g.partition("=") for g in args.average_goal)}
    command = "python bench/learning_curves.py " + shlex.join(sys.argv[1:])
    started = time.time()
    lines = [f"*Made by `{command}` on {datetime.datetime.now().astimezone().isoformat(timespec='seconds')} with "
             f"geval {geval.__version__} ({machine()}).*", "",
             "# Learning curves: how many labels buy how much agreement", "",
             "The known human scores play the user of the Label page. Per seed, 30% of the groups (at least 10 "
             "where there are 20 or more) are set aside and never labeled; the other groups' items are labeled one by "
             "one, in a seeded random order and in the most informative order (the first 10 at random, then 10 at a "
             f"time where the judge rows and the combination fitted on the labels so far disagree most); {args.seeds} "
             "seeds. The judge alone is the one-prompt-per-aspect template of the aspect; the combination is a ridge "
             "of every judge score (every template scored on the dataset, every aspect) and the baselines "
             f"({args.baselines}; the fast ones are what the Label page uses), the judge's own score not shrunk "
             "(`geval.analysis.calibration`), fitted on the labels so far.", "",
             "- **On the groups set aside**: the combination fitted on all the labels beside the judge, on the same "
             "items for both orders: what the labels buy on data no label came from.",
             "- **On the labeled items**, as the Label and Agreement pages read them (each item's combination value "
             "fitted on the other groups' labels only, 5 folds): what a user sees. With few labels each fold's fit "
             "rests on a handful of them, so the combination reads low there; and the informative order's labeled "
             "items are the hard ones, where the judge alone reads lower too.", "",
             "95% intervals come from the delete-one-group jackknife with Student's t (none below 10 groups), the "
             "difference's paired. *Beats the judge from*: the fewest labels from which on (at that number and every "
             "larger one) the difference's interval lies above 0.", ""]
    for spec in args.dataset:
        name, _, path = spec.partition("=")
        if not Path(path).is_file():
            fail(f"{path}: no such store (for {name})")
        store = geval.Store(path)
        if name not in store.dataset_names():
            fail(f"{path} holds no dataset {name!r} (it holds {', '.join(store.dataset_names()) or 'none'})")
        judges = one_aspect_judges(store, name)
        if not judges:
            fail(f"{name}: no one-aspect template is scored in {path}")
        combos = store.combos(name)
        rows = [label for label, searched, ok in zip(combos["label"], combos["searched"], combos["ok"])
                if ok and not searched]
        print(f"{name}: {len(judges)} aspects, {len(rows)} judge rows", file=sys.stderr, flush=True)
        by_aspect = {}
        for aspect, combo in judges.items():
            by_aspect[aspect] = simulate(store, name, aspect, combo, args.seeds,
                                         [b.strip() for b in args.baselines.split(",") if b.strip()])
            print(f"  {aspect}: {time.time() - started:.0f} s", file=sys.stderr, flush=True)
        first = next(iter(by_aspect.values()))
        columns = first["aside"]["random"][0].columns
        lines += [f"## {name}", "",
                  f"{first['items']} items judged in {first['groups']} groups; {first['pool']} of them in the groups "
                  f"to label (seed {args.seeds - 1}). Judge rows: {'; '.join(rows)}. The combination's "
                  f"{len(columns)} columns: {', '.join(columns)}.", "",
                  "| aspect | judge alone | beats the judge from (random / informative order), on the groups set "
                  "aside | the same, on the labeled items | with every label, on the groups set aside: judge / "
                  "combination (seed 0) |", "|---|---|---|---|---|"]
        for aspect, result in by_aspect.items():
            last = result["aside"]["random"][0].points.iloc[-1]
            lines.append(
                f"| {aspect} | {result['found'].judge} | "
                + " / ".join(per_seed([c.beats_at for c in result["aside"][how]]) for how in ORDERS) + " | "
                + " / ".join(per_seed([c.beats_at for c in result["labeled"][how]]) for how in ORDERS) + " | "
                f"{number(last['judge'])} / {number(last['combined'])} ({int(last['labels'])} labels) |")
        lines.append("")
        if name in goals:
            lines += [f"### Labels for an average Pearson of {goals[name]:.2f} over {', '.join(by_aspect)}", "",
                      "The fewest labels from which on the combination's Pearson on the groups set aside, averaged "
                      "over the aspects, stays at or above it (per seed), and the seeds' mean of the averages:", "",
                      *average_rows(by_aspect, goals[name]), ""]
        for aspect, result in by_aspect.items():
            lines += [f"### {name}: {aspect}", "", "Seed 0.", "", *curve_rows(result)]
            notes = sorted({note for kind in ("aside", "labeled") for how in ORDERS for c in result[kind][how]
                            for note in c.notes})
            lines += [""] + [f"- {note[:1].upper()}{note[1:]}." for note in notes] + [""]
        store.close()
    lines.append(f"Took {time.time() - started:.0f} s.")
    Path(args.out).write_text("\n".join(lines) + "\n", "utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
