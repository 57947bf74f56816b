"""How often the systems' intervals hold the people's mean (issue 39): the simulation of
`geval.decisions.systems_coverage` on SummEval (16 systems x 100 documents; the six LLMs of the
alternative annotator test's release as judges: GPT-4o) and Topical-Chat USR
(6 systems x 60 dialogues; the first annotator and the response's length as judges), at 5 to 40
labels per system and, for the whole dataset's mean, 20 to 200; at random and in the order "where
a label buys most" (SummEval: the six LLMs' spread as the judge's uncertainty). Prints one line per
cell: the lowest coverage over the systems, the people-only and combined widths, the textbook
PPI++ interval's coverage. `--draws` per cell (default 400; the suite runs a few hundred of two cells).

    python bench/systems_coverage.py [--draws 400] [--quick]
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


def summeval(aspect: str) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """SummEval's people's means and the six LLMs' scores of `aspect`."""
    items = geval.load_dataset("summeval").items
    llms = json.loads((SHARED / "alttest" / "summeval" / "llm_annotations.json").read_text())
    judges = {name: {i.id: values.get(f"{i.source_id}__{aspect}") for i in items} for name, values in llms.items()}
    scores, predictors, _ = geval.labeling.coverage_arrays(items, aspect, {k: {i: v for i, v in d.items() if v is not None}
                                                   for k, d in judges.items()})
    return scores, predictors, list(llms)


def usr(aspect: str) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Topical-Chat USR's people's means of `aspect`, the first annotator and the length as judges."""
    items = geval.load_dataset("tc_usr_data").items
    first = {i.id: i.human[aspect][0] for i in items if i.human.get(aspect)}
    length = {i.id: float(len(i.response.split())) for i in items}
    scores, predictors, _ = geval.labeling.coverage_arrays(items, aspect, {"annotator #1": first, "length": length})
    return scores, predictors, ["annotator #1", "length"]


def cells(quick: bool):
    """(dataset, aspect, judge name, scores, predictors, weights, scale, sizes, whole)."""
    for aspect in ("coherence", "consistency", "fluency", "relevance"):
        scores, predictors, names = summeval(aspect)
        best = names.index("gpt-4o")
        spread = predictors.std(2)
        weights = np.stack([geval.labeling.sampling_weights(pd.Series(row)).to_numpy() for row in spread])
        yield "SummEval", aspect, "gpt-4o", scores, predictors[:, :, [best]], None, (1, 5)
        if not quick:
            yield "SummEval", aspect, "gpt-4o, where a label buys most", scores, predictors[:, :, [best]], weights, (1, 5)
    for aspect, scale in (("Overall", (1, 5)), ("Natural", (1, 3))):
        scores, predictors, names = usr(aspect)
        yield "Topical-Chat USR", aspect, "annotator #1", scores, predictors[:, :, [0]], None, scale
        if not quick:
            yield "Topical-Chat USR", aspect, "length", scores, predictors[:, :, [1]], None, scale


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=400)
    parser.add_argument("--quick", action="store_true", help="one judge per aspect, fewer cells")
    parser.add_argument("--only", help="only the cells whose dataset, aspect or judge contains this")
    args = parser.parse_args()
    if not (SHARED / "summeval.json").is_file():
        print(f"cannot measure: {SHARED / 'summeval.json'} is missing")
        return 1
    print("dataset | aspect | judge | labels | coverage (people only, lowest system) | coverage (combined) | "
          "width people only | width combined | textbook PPI++ coverage")
    for dataset, aspect, judge, scores, predictors, weights, scale in cells(args.quick):
        if args.only and not any(args.only.lower() in part.lower() for part in (dataset, aspect, judge)):
            continue
        designs = [(f"{k} per system", scores, predictors, weights, k) for k in PER_SYSTEM]
        if weights is None and judge != "length":
            designs += [(f"{n} of the whole dataset", scores.reshape(1, -1), predictors.reshape(1, -1, predictors.shape[2]),
                         None, n) for n in WHOLE]
        for label, s, x, w, k in designs:
            started = time.time()
            draws = args.draws
            found = geval.labeling.simulate_coverage(s, x, k, draws, seed=39, weights=w, scale=scale)
            print(f"{dataset} | {aspect} | {judge} | {label} | {found.people.min():.3f} | {found.combined.min():.3f} | "
                  f"{found.people_width.mean():.2f} | {found.combined_width.mean():.2f} | {found.textbook.min():.3f} "
                  f"| {draws} draws, {time.time() - started:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
