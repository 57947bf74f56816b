"""How often the systems' intervals hold the people's mean, and how often the ranks err (issues 39,
42): the simulations of `geval.decisions.systems_coverage` on SummEval (16 systems x 100 documents;
GPT-4o of the alternative annotator test's release as the judge) and Topical-Chat USR (6 systems x
60 dialogues; the first annotator and the response's length as judges).

Table 1, one row per cell: at 5 to 40 labels per system (and, for the whole dataset's mean, 20 to
200), at random and in the order "where a label buys most" (SummEval: the six LLMs' spread as the
judge's uncertainty): the interval the app gives there (the padded t at random, betting by weight),
its coverage averaged over the systems and for the worst single system, people alone and combined,
and its widths; beside it, on the same draws, the betting interval and the t interval with the prior
variance (worst system, width). Table 2: the ranks on SummEval, k documents a time (every system's
item of each): the family-wise error of the intervals for all pairs together on the real systems and
on a null of 16 equal systems, the pairs told apart, the worst pair's own 95% coverage; beside them the
paired t with the prior variance of a difference at alpha over the pairs (the issue's reference).

    python bench/systems_coverage.py [--draws 1000] [--pairs-draws 400] [--only coherence] [--quick]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import geval  # noqa: E402

SHARED = Path(__file__).resolve().parent.parent.parent / "shared" / "data"
PER_SYSTEM = (5, 10, 20, 40)
WHOLE = (20, 50, 100, 200)
ASPECTS = ("coherence", "consistency", "fluency", "relevance")


def shared() -> Path:
    """The shared data folder ($GEVAL_SHARED_DATA, else beside the repository)."""
    import os

    return Path(os.environ.get("GEVAL_SHARED_DATA") or SHARED)


def summeval(aspect: str, judge: str | None = "gpt-4o") -> tuple[np.ndarray, np.ndarray, list[str]]:
    """SummEval's people's means and the six LLMs' scores of `aspect` (only `judge`'s, when named)."""
    items = geval.load_dataset("summeval").items
    llms = json.loads((shared() / "alttest" / "summeval" / "llm_annotations.json").read_text())
    judges = {name: {i.id: values[f"{i.source_id}__{aspect}"] for i in items if f"{i.source_id}__{aspect}" in values}
              for name, values in llms.items()}
    scores, predictors, _ = geval.labeling.coverage_arrays(items, aspect, judges)
    names = list(llms)
    if judge is None:
        return scores, predictors, names
    return scores, predictors[:, :, [names.index(judge)]], [judge]


def usr(aspect: str) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Topical-Chat USR's people's means of `aspect`, the first annotator and the length as judges."""
    items = geval.load_dataset("tc_usr_data").items
    first = {i.id: i.human[aspect][0] for i in items if i.human.get(aspect)}
    length = {i.id: float(len(i.response.split())) for i in items}
    scores, predictors, _ = geval.labeling.coverage_arrays(items, aspect, {"annotator #1": first, "length": length})
    return scores, predictors, ["annotator #1", "length"]


def cells(quick: bool):
    """(dataset, aspect, judge, design, scores, predictors, weights, scale, labels, whole)."""
    for aspect in ASPECTS:
        scores, every, _ = summeval(aspect, None)
        best = summeval(aspect)[1]
        spread = every.std(2)
        weights = np.stack([geval.labeling.sampling_weights(pd.Series(row)).to_numpy() for row in spread])
        for k in PER_SYSTEM:
            yield "SummEval", aspect, "GPT-4o", "at random", scores, best, None, (1, 5), k, False
        for k in () if quick else PER_SYSTEM:
            yield "SummEval", aspect, "GPT-4o", "where a label buys most", scores, best, weights, (1, 5), k, False
        for n in () if quick else WHOLE:
            yield "SummEval", aspect, "GPT-4o", "at random", scores, best, None, (1, 5), n, True
    for aspect, scale in (("Overall", (1, 5)), ("Natural", (1, 3))):
        scores, predictors, names = usr(aspect)
        for j, name in enumerate(names[:1] if quick else names):
            for k in PER_SYSTEM:
                yield "Topical-Chat USR", aspect, name, "at random", scores, predictors[:, :, [j]], None, scale, k, False


def coverage_table(args) -> None:
    print("| dataset, aspect, judge | design | labels | interval given | coverage, people only: mean / worst system | "
          "coverage, combined: mean / worst system | width, people only | width, combined | betting: worst system, "
          "width (combined) | t with the prior: worst system people only / combined, width (combined) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for dataset, aspect, judge, design, scores, predictors, weights, scale, k, whole in cells(args.quick):
        if args.only and not any(args.only.lower() in part.lower() for part in (dataset, aspect, judge, design)):
            continue
        if whole:
            scores, predictors = scores.reshape(1, -1), predictors.reshape(1, -1, predictors.shape[2])
        started = time.time()
        if args.padding is not None and weights is not None:
            continue
        found = geval.labeling.simulate_coverage(scores, predictors, k, args.draws, seed=42, weights=weights,
                                                 scale=scale, **({} if args.padding is None else
                                                                 {"padding": args.padding, "betting": False}))
        bet, prior = found.others.get("betting, combined"), found.others["t with the prior, combined"]
        alone = found.others["t with the prior, people only"]
        labels = f"{k} of the whole dataset" if whole else f"{k} per system"
        # the t with the prior reads the draws as if at random: nothing to compare where they are drawn by weight
        beside = "–" if weights is not None else \
            f"{alone.coverage.min():.3f} / {prior.coverage.min():.3f}, {prior.width.mean():.2f}"
        print(f"| {dataset} {aspect}, {judge} | {design} | {labels} | {found.method} | "
              f"{found.people.coverage.mean():.3f} / {found.people.coverage.min():.3f} | "
              f"{found.combined.coverage.mean():.3f} / {found.combined.coverage.min():.3f} | "
              f"{found.people.width.mean():.2f} | {found.combined.width.mean():.2f} | "
              + (f"{bet.coverage.min():.3f}, {bet.width.mean():.2f}" if bet else "–") + f" | {beside} | "
              f"<!-- {args.draws} draws, {time.time() - started:.0f} s -->", flush=True)


def pairs_table(args) -> None:
    print("\n| aspect | documents | family-wise error: real / null | told the wrong way round: real / null | pairs told "
          "apart (of 120) | worst pair's own 95% coverage | t with the prior of a difference, Bonferroni: error real / "
          "null, pairs apart |")
    print("|---|---|---|---|---|---|---|")
    for aspect in ASPECTS:
        if args.only and args.only.lower() not in aspect:
            continue
        scores, predictors, _ = summeval(aspect)
        for k in (10, 20, 40):
            real = geval.labeling.simulate_ranks(scores, predictors, k, args.pairs_draws, seed=k)
            null = geval.labeling.simulate_ranks(scores, predictors, k, args.pairs_draws, seed=k + 1, null=True)
            print(f"| {aspect} | {k} | {real.fwer:.3f} / {null.fwer:.3f} | {real.wrong:.3f} / {null.wrong:.3f} | "
                  f"{real.apart:.1f} | {real.pair.min():.3f} | {real.reference['fwer']:.3f} / "
                  f"{null.reference['fwer']:.3f}, {real.reference['apart']:.1f} |", flush=True)
    print("\n| the ranks' prior (share of a difference's range) | aspect | documents | family-wise error: real / null | "
          "pairs told apart |")
    print("|---|---|---|---|---|")
    for spread in (1e-6, 0.25, 0.5):
        for aspect in ASPECTS:
            if args.only and args.only.lower() not in aspect:
                continue
            scores, predictors, _ = summeval(aspect)
            for k in (20, 40):
                real = geval.labeling.simulate_ranks(scores, predictors, k, args.pairs_draws, seed=k, rank_spread=spread)
                null = geval.labeling.simulate_ranks(scores, predictors, k, args.pairs_draws, seed=k + 1, null=True, rank_spread=spread)
                print(f"| {'none' if spread < 0.01 else spread} | {aspect} | {k} | {real.fwer:.3f} / {null.fwer:.3f} | "
                      f"{real.apart:.1f} |", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--pairs-draws", type=int, default=400)
    parser.add_argument("--quick", action="store_true", help="at random only, one judge per aspect")
    parser.add_argument("--only", help="only the cells whose dataset, aspect, judge or design contains this")
    parser.add_argument("--table", choices=("coverage", "pairs", "both"), default="both")
    parser.add_argument("--padding", type=float, help="the padded t with this many labels at each end instead of the "
                                                      "app's (at random only, betting left out: its columns repeat "
                                                      "the padded t's)")
    args = parser.parse_args()
    if not (shared() / "summeval.json").is_file():
        print(f"cannot measure: {shared() / 'summeval.json'} is missing")
        return 1
    if args.table in ("coverage", "both"):
        coverage_table(args)
    if args.table in ("pairs", "both"):
        pairs_table(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
