"""The alternative annotator test's plan checked against real pass rates (issue 36, point 4).

Real data (the default): for each dataset of ../shared/data/alttest, each aspect and each LLM
(SummEval per aspect: the shared summeval.json with its experts' own labels, every LLM imported
from the paper's file), the plan of `geval.alttest.plan` (its chance to pass at N items) beside the
real pass rate at N: the share of `--draws` studies of N real items (whole groups, where the plan
draws groups) drawn without replacement that the test itself (`geval.alttest.alt_test`) passes. N
is the plan's number of items (its largest size when it reaches no 80%), at most 80% of the
data's items; a judge without a plan is checked at that largest size. "From a pilot": the plan
made from `--pilot` items (whole groups) drawn at random, as a user plans before labeling the
rest, its chance at the same N (mean over `--pilots` pilots, their range, and how many of them
say they are a rough guide).

Split-half (`--split-half`): the plan made from one half of the documents (groups: whole, drawn at
random) and checked on the other: its chance at N beside the pass rate of `--draws` studies of N
items of the other half (at most 80% of it), for each of `--splits` splits; the mean and the spread
over the splits of each, and of their absolute difference: the error of a plan on data it was not
made from (`geval.decisions.alttest_power.SPLIT_HALF_ERROR` is its mean over the rows).

Synthetic (`--synthetic`): populations of known shape (grouped, skewed, sparse designs, a judge
with an offset), the plan made from a pilot of `--pilot` items, its chance at N beside the pass
rate of `--draws` fresh studies of N items drawn from the population; N is the plan's number of items
and a size on the way (the first where its chance reaches .3, else half its N).

    nice -n 10 python bench/alttest_plan.py [--only summeval,10k_prompts] [--judges gpt-4o,...]
    nice -n 10 python bench/alttest_plan.py --split-half [--splits 10] [--only summeval]
    nice -n 10 python bench/alttest_plan.py --synthetic --pilot 600
        [--draws 200] [--runs 400] [--pilot 150] [--pilots 5]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
from _common import SHARED_DATA, fail, header

import geval

#: Each dataset's alignment and epsilon (the paper's, ../shared/data/alttest/README.md).
DATASETS = {"summeval": ("neg-rmse", 0.2), "10k_prompts": ("neg-rmse", 0.15), "cebab_stars": ("neg-rmse", 0.1),
            "lesion": ("neg-rmse", 0.15), "wax": ("accuracy", 0.1)}
#: Synthetic populations: annotators, how many label each item, items per group and the groups'
#: offset sd, the scale's centre (1-5; 3.9 is skewed to 4 and 5), the people's and the judge's
#: noise sd, the judge's offset.
SHAPES = {
    "3 annotators on every item, independent items, 1-5 even": (3, (3, 3), 1, 0.0, 3.0, 0.8, 0.65, 0.0),
    "3 annotators on every item, groups of 10 (offset sd .7), skewed": (3, (3, 3), 10, 0.7, 3.9, 0.8, 0.6, -0.3),
    "8 annotators, 2-3 per item, groups of 10 (offset sd .7), skewed, judge .5 low": (8, (2, 3), 10, 0.7, 3.9, 0.8,
                                                                                      0.4, -0.5),
    "3 annotators on every item, groups of 10 (offset sd .7), skewed, judge .8 low": (3, (3, 3), 10, 0.7, 3.9, 0.8,
                                                                                      0.5, -0.8),
}
LARGEST = 1000  # the plan's largest size


def load(store: geval.Store, name: str) -> str:
    """The dataset stored and every LLM of its folder imported: its name in the store."""
    folder = SHARED_DATA / "alttest" / name
    if not folder.is_dir():
        fail(f"{folder} is not there")
    dataset = geval.load_dataset("summeval" if name == "summeval" else folder, store=store)
    geval.alttest.import_judge(store, dataset.name, folder / "llm_annotations.json")
    return dataset.name


def pilot(people, judge, groups, items: int, rng: np.random.Generator):
    """`items` items of the data (whole groups of it) drawn at random: people, judge."""
    units: dict[str, list[str]] = {}
    for item in judge:
        units.setdefault(groups.get(item) or item, []).append(item)
    keys = list(units)
    count = max(2, round(items * len(keys) / len(judge)))
    chosen = {item for k in rng.permutation(len(keys))[:count] for item in units[keys[k]]}
    return ({name: {i: v for i, v in labels.items() if i in chosen} for name, labels in people.items()},
            {i: judge[i] for i in chosen})


def from_pilots(people, judge, groups, size: int, epsilon: float, alignment: str, args) -> str:
    """The chances at `size` of plans made from `--pilots` pilots: "mean (lowest-highest)"."""
    rng, chances, rough = np.random.default_rng(7), [], 0
    for _ in range(args.pilots):
        few_people, few_judge = pilot(people, judge, groups, args.pilot, rng)
        planned = geval.alttest.plan_study(few_people, few_judge, epsilon, alignment, groups, runs=args.runs,
                                           seed=int(rng.integers(1 << 30)))
        if planned is not None and not planned.reason:
            chances.append(planned.chance_at(size))
            rough += "a rough guide" in planned.sentence()
    return (f"{np.mean(chances):.2f} ({min(chances):.2f}-{max(chances):.2f}; {rough} of {len(chances)} rough)"
            if chances else "no plan")


def checked(planned, people, judge, groups, epsilon: float, alignment: str, args) -> tuple[int, str, str, float]:
    """N, the plan's chance at N (or why there is none), the pilots' and the real pass rate at N."""
    kept = sum(1 for item in judge if sum(item in labels for labels in people.values()) >= 2)
    if planned.reason:
        size = min(LARGEST, int(0.8 * kept))
        shown, pilots = "no plan", "–"
    else:
        sizes = [n for n in planned.sizes if n <= 0.8 * kept]
        size = min(planned.items_for() or sizes[-1], sizes[-1])
        shown = f"{planned.chance_at(size):.2f}"
        pilots = from_pilots(people, judge, groups, size, epsilon, alignment, args) if args.pilots else "–"
    real = geval.alttest.drawn_pass_rate(people, judge, size, args.draws, epsilon, alignment, groups, seed=1)
    return size, shown, pilots, real


def real_rows(store: geval.Store, name: str, alignment: str, epsilon: float, args) -> list[str]:
    found = []
    for aspect in sorted({a for item in store.items(name) for a in item.human}):
        for combo in store.combos(name).itertuples():
            if args.judges and combo.model.removeprefix("imported: ") not in args.judges.split(","):
                continue
            started, pair = time.time(), (combo.template_version, combo.signature)
            planned = geval.alttest.plan(store, name, aspect, pair, epsilon, alignment, runs=args.runs)
            people, judge, groups = geval.alttest.plan_data(store, name, aspect, pair)
            size, shown, pilots, real = checked(planned, people, judge, groups, epsilon, alignment, args)
            drawn = f"{size} ({round(size * planned.groups / planned.items)} groups)" if planned.groups else str(size)
            found.append(f"| {name} | {aspect} | {combo.model.removeprefix('imported: ')} | {drawn} | {shown} | "
                         f"{pilots} | {real:.2f} |")
            print(found[-1], f"  {time.time() - started:.0f} s", flush=True)
    return found


def halves(people, judge, groups, rng: np.random.Generator):
    """The data split by its groups (documents) into two halves at random: (people, judge) of each."""
    keys = sorted({groups.get(item) or item for item in judge})
    first = set(rng.permutation(keys)[: len(keys) // 2])

    def part(inside: bool):
        ids = [item for item in judge if ((groups.get(item) or item) in first) == inside]  # in the data's order
        kept = set(ids)
        return {name: {i: v for i, v in labels.items() if i in kept} for name, labels in people.items()}, \
            {i: judge[i] for i in ids}

    return part(True), part(False)


def split_rows(store: geval.Store, name: str, alignment: str, epsilon: float, args) -> tuple[list[str], list[float]]:
    """Per aspect and judge: the plan from one half of the groups checked on the other, over `--splits` splits."""
    found, errors = [], []
    for aspect in sorted({a for item in store.items(name) for a in item.human}):
        for combo in store.combos(name).itertuples():
            model = combo.model.removeprefix("imported: ")
            if args.judges and model not in args.judges.split(","):
                continue
            started, pair = time.time(), (combo.template_version, combo.signature)
            people, judge, groups = geval.alttest.plan_data(store, name, aspect, pair)
            rng, rows = np.random.default_rng(17), []
            for split in range(args.splits):
                (made_people, made_judge), (other_people, other_judge) = halves(people, judge, groups, rng)
                planned = geval.alttest.plan_study(made_people, made_judge, epsilon, alignment, groups, runs=args.runs,
                                                   seed=split)
                kept = sum(1 for item in other_judge if sum(item in labels for labels in other_people.values()) >= 2)
                cap = int(0.8 * kept)
                if planned is None or planned.reason:
                    size, chance = min(LARGEST, cap), 0.0  # no plan: no number of items is promised a pass
                else:
                    size = min(planned.items_for() or planned.sizes[-1], cap)
                    chance = planned.chance_at(size)
                real = geval.alttest.drawn_pass_rate(other_people, other_judge, size, args.draws, epsilon, alignment,
                                                     groups, seed=split)
                rows.append((size, chance, real, bool(planned is None or planned.reason)))
            sizes, chances, reals, refused = (np.array(column) for column in zip(*rows))
            missed = np.abs(chances - reals)
            errors += missed[~refused].tolist()  # the plans made: what a plan's line says of itself
            found.append(f"| {name} | {aspect} | {model} | {np.mean(sizes):.0f} ({sizes.min()}-{sizes.max()}) | "
                         f"{np.mean(chances):.2f} ± {np.std(chances):.2f} | {np.mean(reals):.2f} ± {np.std(reals):.2f} | "
                         f"{np.mean(missed):.2f} (max {missed.max():.2f}) | {int(refused.sum())} of {len(rows)} |")
            print(found[-1], f"  {time.time() - started:.0f} s", flush=True)
    return found, errors


def population(shape: tuple, items: int, rng: np.random.Generator):
    """`items` items of a synthetic population: people {annotator: {item: label}}, judge, groups."""
    annotators, (fewest, most), per_group, offset_sd, centre, noise, judge_noise, shift = shape
    groups = {f"i{k}": f"g{k // per_group}" for k in range(items)}
    offsets = rng.normal(0, offset_sd, items // per_group + 1)
    truth = centre + offsets[np.arange(items) // per_group] + rng.normal(0, 1, items)
    people: dict[str, dict[str, float]] = {f"a{k}": {} for k in range(annotators)}
    for k, item in enumerate(groups):
        for who in rng.permutation(annotators)[:rng.integers(fewest, most + 1)]:
            people[f"a{who}"][item] = float(np.clip(np.round(truth[k] + rng.normal(0, noise)), 1, 5))
    judge = {item: float(np.clip(np.round(truth[k] + shift + rng.normal(0, judge_noise)), 1, 5))
             for k, item in enumerate(groups)}
    return people, judge, groups


def synthetic_rows(args) -> list[str]:
    found = []
    for name, shape in SHAPES.items():
        rng = np.random.default_rng(5)
        people, judge, groups = population(shape, args.pilot, rng)
        planned = geval.alttest.plan_study(people, judge, 0.15, "neg-rmse", groups, runs=args.runs)
        largest = planned.items_for() or planned.sizes[-1]
        middle = next((n for n, c in zip(planned.sizes, planned.chances) if c >= 0.3), largest)  # a size on the way
        if middle == largest:
            middle = max([n for n in planned.sizes if n <= largest / 2], default=largest)
        for size in dict.fromkeys([middle, largest]):
            passed = 0
            for _ in range(args.draws):
                study_people, study_judge, study_groups = population(shape, size, rng)
                passed += geval.alttest.alt_test(study_people, study_judge, "neg-rmse", 0.15,
                                                 groups=study_groups).passed is True
            found.append(f"| {name} | {args.pilot} | {size} | {planned.chance_at(size):.2f} | "
                         f"{passed / args.draws:.2f} |")
            print(found[-1], flush=True)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--draws", type=int, default=200, help="real studies drawn at each N")
    parser.add_argument("--runs", type=int, default=400, help="the plan's studies per size")
    parser.add_argument("--pilot", type=int, default=150, help="items of a pilot a plan is made from")
    parser.add_argument("--pilots", type=int, default=5, help="pilots per row (0: none)")
    parser.add_argument("--only", default=",".join(DATASETS), help="datasets, comma-separated")
    parser.add_argument("--judges", default="", help="only these LLMs, comma-separated (default: all)")
    parser.add_argument("--synthetic", action="store_true", help="synthetic populations instead of the datasets")
    parser.add_argument("--split-half", action="store_true",
                        help="the plan made from half of each dataset's groups, checked on the other half")
    parser.add_argument("--splits", type=int, default=10, help="random splits per row with --split-half")
    args = parser.parse_args()
    header(f"the alternative annotator test's plan against real pass rates ({args.draws} real studies per row, "
           f"{args.runs} drawn studies per size in the plan, pilots of {args.pilot} items)")
    if args.synthetic:
        table = ["| population | pilot items | N items | plan's chance at N | real pass rate at N |",
                 "|---|---|---|---|---|", *synthetic_rows(args)]
    elif args.split_half:
        table = ["| dataset | aspect | judge | N items (range) | plan's chance at N (half A) | real pass rate at N "
                 "(half B) | plan − real, absolute | no plan |", "|---|---|---|---|---|---|---|---|"]
        errors: list[float] = []
        with tempfile.TemporaryDirectory() as folder:
            store = geval.Store(Path(folder) / "plan.sqlite")
            for name in args.only.split(","):
                rows, missed = split_rows(store, load(store, name), *DATASETS[name], args)
                table += rows
                errors += missed
        table.append(f"\nMean absolute difference over every plan made (every row and split): {np.mean(errors):.3f} "
                     f"(sd {np.std(errors):.3f}, {len(errors)} plans; 90% of them within "
                     f"{np.quantile(errors, 0.9):.2f})")
    else:
        table = ["| dataset | aspect | judge | N items | plan's chance at N | from a pilot | real pass rate at N |",
                 "|---|---|---|---|---|---|---|"]
        with tempfile.TemporaryDirectory() as folder:
            store = geval.Store(Path(folder) / "plan.sqlite")
            for name in args.only.split(","):
                table += real_rows(store, load(store, name), *DATASETS[name], args)
    print("\n".join(table))


if __name__ == "__main__":
    main()
