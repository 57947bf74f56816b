"""Simulated learning curves: how many labels buy how much agreement, the dataset's known human
scores playing the user (issue 26), written to reports/learning_curves.md.

For each dataset (a name stored in a store scored with one prompt per aspect, and any other
templates) and each human aspect a one-aspect template is compared with: the items the judge
scored are "labeled" in a random order (several seeds) and in the most informative order (the
first 10 at random, then batches of 10 where the judge rows and a ridge fitted on the labels so
far disagree most: `geval.labeling.informativeness`), and after each number of labels the
judge alone (the one-aspect template) and the combination of every judge score and the fast
baselines fitted on the labels are read as the Label page reads them (`geval.labeling.
learning_curve`: held out by group, paired 95% intervals over groups). Reported: the curves of
the first seed, the fewest labels from which on the combination beats the judge alone (paired
interval above 0) for every seed, and where an average Pearson over the aspects is asked for
(--average-goal), the labels at which the combination's average reaches it.

    nice -n 10 python bench/learning_curves.py --dataset tc_usr_data=STORE [--dataset NAME=STORE ...]
        [--seeds 5] [--average-goal tc_usr_data=0.50] [--out reports/learning_curves.md]

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

import pandas as pd
from _common import REPO, fail, machine

import geval

ORDERS = ("random", "informative")
BATCH = 10  # labels chosen at once by the informative order


def one_aspect_judges(store: geval.Store, dataset: str) -> dict[str, tuple[str, str]]:
    """Human aspect -> (template version, signature) of the newest one-aspect template compared with
    it (a prompt search's variants left out): the judge read alone."""
    combos = store.combos(dataset)
    found: dict[str, tuple[str, str]] = {}
    for version, signature, ok, searched in zip(combos["template_version"], combos["signature"], combos["ok"],
                                                combos["searched"]):
        template = store.template(version)
        if ok and not searched and len(template.aspects) == 1:
            aspect = template.aspects[0]
            human = next((h for h in dict.fromkeys(a for i in store.items(dataset) for a in i.human)
                          if h.lower() == (aspect.human or aspect.name).lower()), None)
            if human:
                found.setdefault(human, (version, signature))
    return found


def informative_order(found, truth: pd.Series, ids: list[str], seed: int) -> list[str]:
    """The first MIN_FIT of the seeded random order, then BATCH at a time where the judge rows and a
    ridge fitted on the labels so far disagree most (the Label page's "most informative")."""
    labeling = geval.labeling
    sub = labeling.Features(found.table.loc[ids], found.rows, found.judge, found.groups[ids], found.scale)
    labeled = labeling.order(ids, "random", seed)[: labeling.MIN_FIT]
    while len(labeled) < len(ids):
        spread = labeling.informativeness(sub, truth[labeled], seed)
        taken = set(labeled)
        ranked = labeling.order(ids, "informative", seed, spread=spread) if spread is not None else \
            labeling.order(ids, "random", seed)
        labeled += [i for i in ranked if i not in taken][:BATCH]
    return labeled


def simulate(store: geval.Store, dataset: str, aspect: str, combo: tuple[str, str], seeds: int) -> dict:
    """The learning curves of one aspect, every order and seed: {"random": [curves], "informative": [...]},
    with the features read once."""
    found = geval.labeling.features(store, dataset, aspect, combo)
    truth = pd.Series({item.id: item.human_mean(aspect) for item in store.items(dataset)})
    ids = [i for i in found.table.index if pd.notna(found.table.at[i, found.judge]) and pd.notna(truth.get(i))]
    curves = {how: [] for how in ORDERS}
    for seed in range(seeds):
        for how in ORDERS:
            ordered = geval.labeling.order(ids, "random", seed) if how == "random" else \
                informative_order(found, truth, ids, seed)
            curves[how].append(geval.labeling.learning_curve(found, truth, ordered, aspect))
    return {"found": found, "items": len(ids), "groups": found.groups[ids].nunique(), "curves": curves}


def beats(curves: list) -> str:
    """The fewest labels at which the combination beats the judge, per seed, and their median."""
    found = [c.beats_at for c in curves]
    shown = ", ".join(str(n) if n is not None else "never" for n in found)
    reached = [n for n in found if n is not None]
    median = f"median {statistics.median(reached):g}" if len(reached) == len(found) else \
        f"{len(reached)} of {len(found)} seeds"
    return f"{median} ({shown})"


def number(value: float, low: float = math.nan, high: float = math.nan) -> str:
    if not math.isfinite(value):
        return "–"
    return f"{value:.3f}" + (f" [{low:.3f}, {high:.3f}]" if math.isfinite(low) and math.isfinite(high) else "")


def curve_rows(random_curve, informative_curve) -> list[str]:
    """Markdown rows: per number of labels, judge alone, the combination and their difference, in the
    random order (seed 0) and in the informative one (seed 0)."""
    a, b = random_curve.points.set_index("labels"), informative_curve.points.set_index("labels")
    rows = ["| labels | judge alone (random) | combination (random) | combination − judge (random) "
            "| judge alone (informative) | combination (informative) | combination − judge (informative) |",
            "|---|---|---|---|---|---|---|"]
    for size in a.index:
        cells = [str(size)]
        for points in (a, b):
            if size not in points.index:
                cells += ["", "", ""]
                continue
            p = points.loc[size]
            cells += [number(p["judge"], p["judge_low"], p["judge_high"]),
                      number(p["combined"], p["combined_low"], p["combined_high"]),
                      number(p["difference"], p["low"], p["high"])]
        rows.append("| " + " | ".join(cells) + " |")
    return rows


def average_reached(by_aspect: dict[str, dict], how: str, goal: float) -> tuple[str, list[str]]:
    """Per seed, the fewest labels at which the combination's Pearson averaged over the aspects reaches
    `goal` (the judge's average beside it), and the averages of seed 0 as Markdown rows."""
    seeds = len(next(iter(by_aspect.values()))["curves"][how])
    reached, rows = [], []
    for seed in range(seeds):
        points = [result["curves"][how][seed].points.set_index("labels") for result in by_aspect.values()]
        sizes = [s for s in points[0].index if all(s in p.index for p in points)]
        averages = {s: (statistics.fmean(p.at[s, "combined"] for p in points),
                        statistics.fmean(p.at[s, "judge"] for p in points)) for s in sizes}
        reached.append(next((s for s, (combined, _) in averages.items() if combined >= goal), None))
        if seed == 0:
            rows = [f"| {s} | {judge:.3f} | {combined:.3f} |" for s, (combined, judge) in averages.items()]
    shown = ", ".join(str(n) if n is not None else "never" for n in reached)
    done = [n for n in reached if n is not None]
    summary = (f"median {statistics.median(done):g} labels" if len(done) == len(reached) else
               f"reached in {len(done)} of {len(reached)} seeds") + f" (per seed: {shown})"
    return summary, rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", action="append", required=True, metavar="NAME=STORE",
                        help="a dataset stored (and scored) in that store; repeatable")
    parser.add_argument("--seeds", type=int, default=5, help="random orders (and informative starts) per aspect")
    parser.add_argument("--average-goal", action="append", default=[], metavar="NAME=PEARSON",
                        help="report the labels at which the combination's average Pearson reaches it")
    parser.add_argument("--out", default=str(REPO / "reports" / "learning_curves.md"))
    args = parser.parse_args()
    goals = {name: float(value) for name, _, value in (g.partition("=") for g in args.average_goal)}
    command = "python bench/learning_curves.py " + shlex.join(sys.argv[1:])
    started = time.time()
    lines = [f"*Made by `{command}` on {datetime.datetime.now().astimezone().isoformat(timespec='seconds')} with "
             f"geval {geval.__version__} ({machine()}).*", "",
             "# Learning curves: how many labels buy how much agreement", "",
             "The known human scores play the user of the Label page: the items the judge scored are labeled one "
             "by one, in a seeded random order and in the most informative order (the first 10 at random, then 10 "
             "at a time where the judge rows and a ridge fitted on the labels so far disagree most). After each "
             "number of labels, two figures are read on the labeled items, as the Label and Agreement pages read "
             "them: the Pearson correlation of the judge alone (the one-prompt-per-aspect template of the aspect) "
             "with the labels, and that of a ridge combination of every judge score (every template scored on the "
             "dataset, every aspect) and the fast baselines (ROUGE-L, BLEU, chrF, length), each item's value fitted "
             "on the other groups' labels only (5 folds by group, the penalty chosen by an inner cross-validation: "
             "`geval.analysis.calibration.cross_validated`; the judge's own score is not shrunk). 95% intervals come "
             "from the delete-one-group jackknife with Student's t (groups: dialogues, documents); "
             "the difference's interval is paired. \"Beats the judge from\" is the fewest labels from which on (at that "
             "number and every larger one) the difference's interval lies above 0; below 10 groups no interval is "
             "given.", ""]
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
        known = list(dict.fromkeys(a for item in store.items(name) for a in item.human))
        by_aspect = {}
        for aspect, combo in sorted(judges.items(), key=lambda pair: known.index(pair[0])):
            by_aspect[aspect] = simulate(store, name, aspect, combo, args.seeds)
            print(f"  {aspect}: {time.time() - started:.0f} s", file=sys.stderr, flush=True)
        first = next(iter(by_aspect.values()))
        lines += [f"## {name}", "",
                  f"{first['items']} items judged in {first['groups']} groups; judge rows: {'; '.join(rows)}; "
                  f"features of the combination: {len(first['curves']['random'][0].columns)} columns "
                  f"({', '.join(first['curves']['random'][0].columns)}).", "",
                  "| aspect | judge alone | beats the judge from (random order, per seed) | "
                  "beats the judge from (informative order, per seed) |", "|---|---|---|---|"]
        for aspect, result in by_aspect.items():
            lines.append(f"| {aspect} | {result['found'].judge} | {beats(result['curves']['random'])} | "
                         f"{beats(result['curves']['informative'])} |")
        lines.append("")
        if name in goals:
            lines += [f"### Labels for an average Pearson of {goals[name]:.2f}", ""]
            for how in ORDERS:
                summary, rows_ = average_reached(by_aspect, how, goals[name])
                lines += [f"{how.capitalize()} order: the combination's Pearson averaged over "
                          f"{', '.join(by_aspect)} reaches {goals[name]:.2f} at {summary}.", "",
                          "| labels | judge alone, average | combination, average |", "|---|---|---|", *rows_, ""]
        for aspect, result in by_aspect.items():
            lines += [f"### {name}: {aspect}", ""]
            lines += curve_rows(result["curves"]["random"][0], result["curves"]["informative"][0])
            notes = sorted({note for how in ORDERS for c in result["curves"][how] for note in c.notes})
            lines += [""] + [f"- {note[:1].upper()}{note[1:]}." for note in notes] + [""]
        store.close()
    lines.append(f"Took {time.time() - started:.0f} s.")
    Path(args.out).write_text("\n".join(lines) + "\n", "utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
