"""reports/summeval_systems.md (issue 39): SummEval's 16 systems ranked from few labels (K documents,
every system's summary of each, from the experts' own scores), with the labels alone and combined
with each of the six LLMs of the alternative annotator test's release, beside the experts' mean over
all 100 documents; Kendall's tau of each ranking with that truth, and the labels each judge is worth.

    python bench/systems_report.py [--labels 10] [--store /tmp/summeval.sqlite] [--out reports/summeval_systems.md]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import geval  # noqa: E402

SHARED = Path(__file__).resolve().parent.parent.parent / "shared" / "data"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--labels", type=int, default=10)
    parser.add_argument("--store", default="/tmp/summeval_systems.sqlite")
    parser.add_argument("--out", default="reports/summeval_systems.md")
    args = parser.parse_args()
    llms = SHARED / "alttest" / "summeval" / "llm_annotations.json"
    if not llms.is_file():
        print(f"cannot measure: {llms} is missing")
        return 1
    store = geval.Store(args.store)
    if "summeval" not in store.dataset_names():
        geval.load_dataset("summeval", store=store)
        geval.alttest.import_judge(store, "summeval", llms)
    combos = store.combos("summeval")
    items = store.items("summeval")
    lines = [f"# SummEval's 16 systems ranked from {args.labels} labeled documents per system",
             "", f"*Made by `python bench/systems_report.py --labels {args.labels}` with geval {geval.__version__}.* "
             f"{args.labels} documents drawn at random (seed 0), every system's summary of each scored by the three "
             "experts (their mean); the rest of the 100 documents read by the judge alone. Intervals: 95%, betting, "
             "valid at any number of labels (docs/statistics.md). 'people, every item' is the experts' mean over all "
             "100 documents: what the estimates aim at.", ""]
    for aspect in ("coherence", "consistency", "fluency", "relevance"):
        lines += [f"## {aspect}", ""]
        results = {}
        for label, version, signature in zip(combos["label"], combos["template_version"], combos["signature"]):
            results[label.split(" (")[0]] = geval.labeling.system_means(
                store, "summeval", aspect, (version, signature), per_system=args.labels, design="documents",
                items=items)
        first = next(iter(results.values()))
        truth = first.table.set_index("system")["truth"]
        table = pd.DataFrame({"system": first.table["system"], "people, every item": truth.to_numpy().round(2),
                              "people only": geval.reporting.systems_table(first)["people only"]})
        taus = {"people only": stats.kendalltau(first.table["people"], truth.to_numpy()).statistic}
        for judge, result in results.items():
            table[f"with {judge}"] = geval.reporting.systems_table(result)["combined"]
            taus[f"with {judge}"] = stats.kendalltau(result.table["combined"], truth.to_numpy()).statistic
        order = truth.sort_values(ascending=False).index
        table = table.set_index("system").loc[order].reset_index()
        lines += [table.to_markdown(index=False), "",
                  "Kendall's tau of each ranking with the experts' mean over every document: "
                  + ", ".join(f"{k} {v:.2f}" for k, v in taus.items()) + ".", "",
                  "Labels each judge is worth here (the labels alone that give the combined interval's width, 95% "
                  "over documents):", "", geval.reporting.worth_table(first).to_markdown(index=False), "",
                  f"Ranks that hold for all pairs together (with {first.judge.split(' (')[0]}):", "",
                  geval.reporting.ranking_table(first).to_markdown(index=False), ""]
        lines += [f"- {line}" for line in first.sentences()] + [""]
    Path(args.out).write_text("\n".join(lines))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
