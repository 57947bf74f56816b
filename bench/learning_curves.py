"""Simulated learning curves: how many labels buy how much agreement, the dataset's known human
scores playing the user (issue 26), written to reports/learning_curves.md (its figures drawn in
reports/learning_curves.html beside it).

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
from scipy import stats

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
    found = geval.labeling.Features(found.table.loc[ids], found.rows, found.judge, found.groups[ids], found.scale,
                                    found.held)
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
    shown = f" [{low:.3f}, {high:.3f}]" if math.isfinite(low) and math.isfinite(high) else ""
    return geval.reporting.number(value) + shown  # the value never "-0.000"; a bound keeps its sign


def over_seeds(table: pd.DataFrame) -> pd.DataFrame:
    """Labels x seeds -> labels x (mean, low, high): the seeds' mean and its 95% t-interval (seeds as
    the unit: each sets other groups aside and labels in another order; none from one seed)."""
    seeds = table.notna().sum(axis=1)
    mean, sd = table.mean(axis=1), table.std(axis=1, ddof=1)
    half = [stats.t.ppf(0.975, k - 1) * s / math.sqrt(k) if k > 1 else math.nan for k, s in zip(seeds, sd)]
    return pd.DataFrame({"mean": mean, "low": mean - half, "high": mean + half})


def readable_names(store: geval.Store, dataset: str) -> tuple[dict[str, str], list[str]]:
    """Each scored combination's label (as `Store.combos` names it, the judge columns' prefix) ->
    its name in the tables: template, its version comment, judge, and a footnote number; and the
    footnotes, each with the label and the full signature."""
    combos = store.combos(dataset)
    comments = store.template_comments()
    names, footnotes, seen = {}, [], set()
    for label, version, model, signature in zip(combos["label"], combos["template_version"], combos["model"],
                                                combos["signature"]):
        name = store.template(version).name + (f" ({comments[version]})" if version in comments else "")
        name = f"{name} · {model.split(': ', 1)[-1]}"
        name = f"{name} @{version[:6]}" if name in seen else name  # two versions with no comment to tell them apart
        seen.add(name)
        footnotes.append(f"[{len(footnotes) + 1}] {label}: {signature}")
        names[label] = f"{name} [{len(footnotes)}]"
    return names, footnotes


def renamed(column: str, names: dict[str, str]) -> str:
    """A judge column ("<combination label>: <aspect>") by its readable name; a baseline as it is."""
    label, _, aspect = column.rpartition(": ")
    return f"{names[label]}: {aspect}" if label in names else column


def curve_table(result: dict, names: dict[str, str]) -> pd.DataFrame:
    """Seed 0: per number of labels and order, the judge alone, the combination and their difference on
    the groups set aside, then the difference on the labeled items."""
    aside = {how: result["aside"][how][0].points.set_index("labels") for how in ORDERS}
    labeled = {how: result["labeled"][how][0].points.set_index("labels") for how in ORDERS}
    rows = []
    for size in aside["random"].index:
        row = {"labels": size}
        for how in ORDERS:
            p, q = aside[how].loc[size], labeled[how].loc[size]
            row.update({f"judge ({how})": number(p["judge"], p["judge_low"], p["judge_high"]),
                        f"combination ({how})": number(p["combined"], p["combined_low"], p["combined_high"]),
                        f"combination − judge ({how})": number(p["difference"], p["low"], p["high"]),
                        f"combination − judge on the labeled items ({how})": number(q["difference"], q["low"],
                                                                                    q["high"])})
        rows.append(row)
    return pd.DataFrame(rows)


def seed_curves(result: dict, column: str, how: str) -> pd.DataFrame:
    """Labels x seeds of one column of the curves read on the groups set aside."""
    return pd.concat([c.points.set_index("labels")[column] for c in result["aside"][how]], axis=1,
                     keys=range(len(result["aside"][how])))


def averages(by_aspect: dict[str, dict], how: str) -> dict[str, pd.DataFrame]:
    """Per column (judge, combined): labels x seeds of the Pearson on the groups set aside, averaged over
    the aspects."""
    return {column: sum(seed_curves(r, column, how) for r in by_aspect.values()) / len(by_aspect)
            for column in ("judge", "combined")}


def goal_blocks(name: str, by_aspect: dict[str, dict], goal: float) -> list:
    """Where the combination's Pearson on the groups set aside, averaged over the aspects, reaches `goal`:
    per seed, and for the seeds' mean read with its 95% interval over seeds; the table and its figure."""
    import plotly.graph_objects as go

    reporting = geval.reporting
    found = {how: averages(by_aspect, how) for how in ORDERS}
    judge = over_seeds(found["random"]["judge"])
    lines, table = [], {"labels": judge.index, "judge alone": [number(*v) for v in judge.to_numpy()]}
    figure = go.Figure()
    for index, how in enumerate(ORDERS):
        combined = over_seeds(found[how]["combined"])
        reached = [from_on(found[how]["combined"][seed].dropna(), lambda v: v >= goal)
                   for seed in found[how]["combined"].columns]
        firm, mean = from_on(combined["low"].dropna(), lambda v: v >= goal), \
            from_on(combined["mean"].dropna(), lambda v: v >= goal)
        lines.append(f"{how.capitalize()} order: the seeds' mean {_from(mean)}; its 95% interval over seeds (the "
                     f"figure to quote) {_from(firm)}; per seed: {per_seed(reached)}.")
        table[f"combination ({how})"] = [number(*v) for v in combined.to_numpy()]
        figure.add_trace(go.Scatter(x=[*combined.index, *combined.index[::-1]],
                                    y=[*combined["high"], *combined["low"][::-1]], mode="lines", fill="toself",
                                    opacity=0.3, line={"width": 0}, fillcolor=reporting.COLOURS[2 * index + 1],
                                    hoverinfo="skip", showlegend=False))
        figure.add_trace(go.Scatter(x=combined.index, y=combined["mean"], mode="lines+markers",
                                    name=f"combination ({how} order)", line={"color": reporting.COLOURS[2 * index]}))
    figure.add_trace(go.Scatter(x=judge.index, y=judge["mean"], mode="lines", name="judge alone",
                                line={"color": reporting.COLOURS[4], "dash": "dash"}))
    figure.add_hline(y=goal, line_dash="dot", annotation_text=f"goal {goal:.2f}")
    figure.update_layout(title=f"{name}: average Pearson over the aspects, on the groups set aside",
                         xaxis={"title": "labels"}, yaxis={"title": "Pearson (mean of the aspects)"}, height=380)
    aspects = ", ".join(by_aspect)
    return [reporting.Heading(f"Labels for an average Pearson of {goal:.2f} over {aspects}", 3),
            reporting.Text("The combination's Pearson on the groups set aside, averaged over the aspects: the mean "
                           "over the seeds with its 95% t-interval over seeds (each seed sets other groups aside and "
                           "labels in another order), where one seed's figure turns on which groups it set aside. "
                           "A threshold is quoted where the interval's lower end stays at or above it."),
            reporting.Bullets(tuple(lines)),
            reporting.Text(f"The figure: the seeds' mean of the average Pearson against the number of labels, with "
                           f"its 95% band over seeds, for each order and for the judge alone, and the goal "
                           f"{goal:.2f} dotted."),
            reporting.Figure(figure, f"{name}: average Pearson over {aspects} against the number of labels"),
            reporting.Table(pd.DataFrame(table))]


def _from(labels: int | None) -> str:
    """"stays at or above it from 40 labels on", or that it does not."""
    return f"stays at or above it from {labels} labels on" if labels is not None else "does not stay at or above it"


def dataset_blocks(name: str, store: geval.Store, by_aspect: dict[str, dict], seeds: int,
                   goal: float | None) -> list:
    """One dataset's section: what was read, a row per aspect, the goal, each aspect's curves."""
    reporting = geval.reporting
    names, footnotes = readable_names(store, name)
    first = next(iter(by_aspect.values()))
    columns = [renamed(c, names) for c in first["aside"]["random"][0].columns]
    summary = []
    for aspect, result in by_aspect.items():
        last = {column: over_seeds(seed_curves(result, column, "random")).iloc[-1] for column in ("judge", "combined")}
        summary.append({
            "aspect": aspect, "judge alone": renamed(result["found"].judge, names),
            "beats the judge from (random / informative order), on the groups set aside":
                " / ".join(per_seed([c.beats_at for c in result["aside"][how]]) for how in ORDERS),
            "the same, on the labeled items": " / ".join(per_seed([c.beats_at for c in result["labeled"][how]])
                                                         for how in ORDERS),
            "with every label, on the groups set aside: judge / combination (mean over seeds [95% interval])":
                f"{number(*last['judge'])} / {number(*last['combined'])}"})
    blocks = [reporting.Heading(name),
              reporting.Text(f"{first['items']} items judged in {first['groups']} groups; {first['pool']} of them in "
                             f"the groups to label (seed {seeds - 1}). Judge rows are named by template, version "
                             "comment and judge; the numbers point to the full signatures below. The combination's "
                             f"{len(columns)} columns: {', '.join(columns)}."),
              reporting.Table(pd.DataFrame(summary)),
              reporting.Text("Beats the judge from: per seed, the fewest labels from which on the paired 95% interval "
                             "of the difference lies above 0 (each reading is an interval already), and their median.")]
    if goal is not None:
        blocks += goal_blocks(name, by_aspect, goal)
    for aspect, result in by_aspect.items():
        blocks += [reporting.Heading(f"{name}: {aspect}", 3)]
        for how in ORDERS:
            curve = result["aside"][how][0]
            blocks += [reporting.Text(f"Seed 0, {how} order, read on the groups set aside: the judge alone (flat: it "
                                      "learns nothing from the labels) and the combination fitted on the labels so "
                                      "far, each with its 95% band, "
                                      + (f"the combination beating the judge from {curve.beats_at} labels on."
                                         if curve.beats_at else "the combination never beating the judge with an "
                                                                "interval above 0.")),
                       reporting.Figure(reporting.learning_curve_figure(curve),
                                        f"{name}, {aspect}: seed 0, {how} order, on the groups set aside")]
        notes = sorted({note for kind in ("aside", "labeled") for how in ORDERS for c in result[kind][how]
                        for note in c.notes})
        blocks += [reporting.Text("Seed 0, every number of labels:"), reporting.Table(curve_table(result, names))]
        blocks += [reporting.Bullets(tuple(f"{note[:1].upper()}{note[1:]}." for note in notes))] if notes else []
    return blocks + [reporting.Text("Signatures:"), reporting.Bullets(tuple(footnotes))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", action="append", required=True, metavar="NAME[=STORE]",
                        help="a dataset stored (and scored) in that store (default $GEVAL_STORE, as the CLI's); "
                             "repeatable")
    parser.add_argument("--seeds", type=int, default=5, help="random orders (and informative starts) per aspect")
    parser.add_argument("--average-goal", action="append", default=[], metavar="NAME=PEARSON",
                        help="report the labels from which on the combination's average Pearson stays at or above it")
    parser.add_argument("--baselines", default=",".join(geval.labeling.FAST),
                        help=f"the baselines in the combination, comma-separated (default {','.join(geval.labeling.FAST)}, "
                             "as the Label page; 'embedding', 'bertscore' and 'pmi' run a model on every item once)")
    parser.add_argument("--out", default=str(REPO / "reports" / "learning_curves.md"),
                        help="the Markdown page; its figures are drawn in the HTML page beside it (same name, .html)")
    args = parser.parse_args()
    goals = {name: float(value) for name, _, value in (g.partition("=") for g in args.average_goal)}
    command = "python bench/learning_curves.py " + shlex.join(sys.argv[1:])
    started = time.time()
    reporting = geval.reporting
    document = reporting.Document("Learning curves: how many labels buy how much agreement")
    document.add(
        reporting.Text(f"Made by `{command}` on {datetime.datetime.now().astimezone().isoformat(timespec='seconds')} "
                       f"with geval {geval.__version__} ({machine()}).", meta=True),
        reporting.Heading(document.title, 1),
        reporting.Text("The known human scores play the user of the Label page. Per seed, 30% of the groups (at least "
                       "10 where there are 20 or more) are set aside and never labeled; the other groups' items are "
                       "labeled one by one, in a seeded random order and in the most informative order (the first 10 "
                       "at random, then 10 at a time where the judge rows and the combination fitted on the labels so "
                       f"far disagree most); {args.seeds} seeds. The judge alone is the one-prompt-per-aspect "
                       "template of the aspect; the combination is a ridge of every judge score (every template "
                       f"scored on the dataset, every aspect) and the baselines ({args.baselines}; the fast ones are "
                       "what the Label page uses), the judge's own score not shrunk (`geval.analysis.calibration`), "
                       "fitted on the labels so far. Every judge is read without the groups a prompt search chose "
                       "its template on."),
        reporting.Bullets((
            "On the groups set aside: the combination fitted on all the labels beside the judge, on the same items "
            "for both orders: what the labels buy on data no label came from.",
            "On the labeled items, as the Label and Agreement pages read them (each item's combination value fitted "
            "on the other groups' labels only, 5 folds): what a user sees. With few labels each fold's fit rests on "
            "a handful of them, so the combination reads low there; and the informative order's labeled items are "
            "the hard ones, where the judge alone reads lower too.")),
        reporting.Text("95% intervals come from the delete-one-group jackknife with Student's t (none below 10 "
                       "groups), the difference's paired; across seeds, a t-interval over the seeds. Beats the judge "
                       "from: the fewest labels from which on (at that number and every larger one) the difference's "
                       "interval lies above 0."))
    for spec in args.dataset:
        name, _, path = spec.partition("=")
        path = path or str(geval.Store.default_path())
        if not Path(path).is_file():
            fail(f"{path}: no such store (for {name})")
        store = geval.Store(path)
        if name not in store.dataset_names():
            fail(f"{path} holds no dataset {name!r} (it holds {', '.join(store.dataset_names()) or 'none'})")
        judges = one_aspect_judges(store, name)
        if not judges:
            fail(f"{name}: no one-aspect template is scored in {path}")
        print(f"{name}: {len(judges)} aspects", file=sys.stderr, flush=True)
        by_aspect = {}
        for aspect, combo in judges.items():
            by_aspect[aspect] = simulate(store, name, aspect, combo, args.seeds,
                                         [b.strip() for b in args.baselines.split(",") if b.strip()])
            print(f"  {aspect}: {time.time() - started:.0f} s", file=sys.stderr, flush=True)
        document.add(*dataset_blocks(name, store, by_aspect, args.seeds, goals.get(name)))
        store.close()
    document.add(reporting.Text(f"Took {time.time() - started:.0f} s."))
    out = Path(args.out)
    report = reporting.Report(out.stem, document)
    page = report.write_html(out.with_suffix(".html"))
    out.write_text(report.markdown(plots=page.name), "utf-8")
    print(f"wrote {out} and {page}")


if __name__ == "__main__":
    main()
