"""reports/summeval_systems.md (issues 39, 42): SummEval's 16 systems ranked from few labels (K documents,
every system's summary of each, from the experts' own scores), with the labels alone and combined with each
of the six LLMs of the alternative annotator test's release, against the experts' mean over all 100
documents. What each judge is worth (as `geval systems` shows it, and read on the K labels alone), and
what the estimates do (Kendall's tau with the truth, pairs told apart, ranks) as means over many draws
with their spread; then one draw's tables (seed 0), said to be one draw.

    python bench/systems_report.py [--labels 20] [--draws 200] [--store /tmp/summeval.sqlite] [--out reports/summeval_systems.md]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import geval  # noqa: E402

SHARED = Path(os.environ.get("GEVAL_SHARED_DATA") or Path(__file__).resolve().parent.parent.parent / "shared" / "data")
ASPECTS = ("coherence", "consistency", "fluency", "relevance")
#: The labels alone, read as a constant judge (which the combined estimate reads as no judge at all).
ALONE = "people only"


def population(aspect: str, llms: dict) -> tuple[pd.DataFrame, list[str], np.ndarray]:
    """SummEval as `geval.decisions.systems.means` reads it (one row per summary: system, document,
    the experts' mean, each LLM's score), the LLMs' names, and each LLM's Pearson with the experts
    within a system (averaged over the systems)."""
    items = geval.load_dataset("summeval").items
    judges = {name: {i.id: values[f"{i.source_id}__{aspect}"] for i in items} for name, values in llms.items()}
    scores, predictors, systems = geval.labeling.coverage_arrays(items, aspect, judges)
    size = scores.shape[1]
    frame = pd.DataFrame({"system": np.repeat(systems, size), "group": np.tile([f"d{n}" for n in range(size)],
                                                                               len(systems)),
                          "human": scores.ravel()}, index=[f"{s}-d{n}" for s in systems for n in range(size)])
    names = list(llms)
    for j, name in enumerate(names):
        frame[name] = predictors[:, :, j].ravel()
    frame[ALONE] = 3.0
    within = np.array([np.mean([np.corrcoef(predictors[s, :, j], scores[s])[0, 1] for s in range(len(scores))])
                       for j in range(len(names))])
    return frame, names, within


def over_draws(frame: pd.DataFrame, names: list[str], labels: int, draws: int) -> dict:
    """Per estimate (people only, with each LLM) over `draws` draws of `labels` documents: Kendall's tau
    with the experts' mean over every document, pairs told apart for all pairs together, pairs told
    apart the wrong way round, systems that may rank anywhere; and each LLM's labels saved read on the
    drawn labels alone."""
    documents = sorted(set(frame["group"]), key=lambda g: int(g[1:]))
    systems = list(dict.fromkeys(frame["system"]))
    truth = frame.groupby("system")["human"].mean()
    found: dict[str, dict[str, list[float]]] = {}

    def note(name: str, key: str, value: float) -> None:
        found.setdefault(name, {}).setdefault(key, []).append(value)

    for seed in range(draws):
        chosen = [documents[i] for i in np.random.default_rng(seed).permutation(len(documents))[:labels]]
        order = [f"{s}-{d}" for d in chosen for s in systems]
        every = geval.labeling.population_means(frame, order, names, (1, 5))
        for row in every.worth.itertuples():
            note(row.judge, "saved on the labels", row.saved)
        for name in [*names, ALONE]:  # a constant "judge": the labels alone, compared and ranked the same way
            result = every if name == names[0] else \
                geval.labeling.population_means(frame, order, [name], (1, 5))
            table = result.table.set_index("system")
            note(name, "tau", stats.kendalltau(table["combined"], truth.reindex(table.index)).statistic)
            pairs = result.differences
            difference = truth.reindex(pairs["a"]).to_numpy() - truth.reindex(pairs["b"]).to_numpy()
            apart = (pairs["simultaneous_low"] > 0) | (pairs["simultaneous_high"] < 0)
            wrong = ((pairs["simultaneous_low"] > 0) & (difference <= 0)) | \
                ((pairs["simultaneous_high"] < 0) & (difference >= 0))
            note(name, "apart", float(apart.sum()))
            note(name, "wrong", float(wrong.sum()))
            ranks = result.ranking
            note(name, "anywhere", float(((ranks["best_rank"] == 1) & (ranks["worst_rank"] == len(ranks))).sum()))
    return found


def spread(values: list[float], percent: bool = False, digits: int = 2) -> str:
    """"mean ± sd" of `values`."""
    values = np.asarray(values, float)
    if percent:
        return f"{values.mean():+.0%} ± {values.std(ddof=1):.0%}"
    return f"{values.mean():.{digits}f} ± {values.std(ddof=1):.{digits}f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--labels", type=int, default=20)
    parser.add_argument("--draws", type=int, default=200)
    parser.add_argument("--store", default="/tmp/summeval_systems.sqlite")
    parser.add_argument("--out", default="reports/summeval_systems.md")
    args = parser.parse_args()
    path = SHARED / "alttest" / "summeval" / "llm_annotations.json"
    if not path.is_file():
        print(f"cannot measure: {path} is missing")
        return 1
    llms = json.loads(path.read_text())
    store = geval.Store(args.store)
    if "summeval" not in store.dataset_names():
        geval.load_dataset("summeval", store=store)
        geval.alttest.import_judge(store, "summeval", path)
    k = args.labels
    lines = [f"# SummEval's 16 systems ranked from {k} labeled documents per system", "",
             f"*Made by `python bench/systems_report.py --labels {k} --draws {args.draws}` with geval "
             f"{geval.__version__}.* Each draw labels {k} of the 100 documents at random, every system's summary of "
             "each scored by the three experts (their mean); the rest are read by the judge alone. The experts' mean "
             "over all 100 documents is what the estimates aim at. Intervals: 95% for these labels (Student's t with a "
             "label added at each end of the scale); ranks: for all 120 pairs together "
             "(docs/statistics.md).", ""]
    summary = ["## What it says", "", f"Means over {args.draws} draws of {k} documents, ± their standard deviation "
               "over the draws; 'worth' as `geval systems` shows it (read on every summary the experts scored, for "
               f"{k} labels per system) with its 95% interval.", ""]
    details = [f"## One draw (seed 0)", "", f"The tables below are one draw: {k} documents drawn with seed 0, what "
               f"`python -m geval systems summeval --labels {k}` prints; another draw gives other numbers (the means "
               "over draws are above).", ""]
    combos = store.combos("summeval")
    for aspect in ASPECTS:
        started = time.time()
        frame, names, within = population(aspect, llms)
        drawn = over_draws(frame, names, k, args.draws)
        documents = [f"d{n}" for n in range(k)]  # the worth read on every summary depends on k, not on which
        labeled = [i for i in frame.index if i.split("-")[-1] in documents]
        worth = geval.labeling.population_means(frame, labeled, names, (1, 5), worth_on=list(frame.index))
        worth = worth.worth.set_index("judge").reindex(names)
        best = worth["saved"].idxmax()
        alone = drawn[ALONE]
        rows = [{"estimate": "people only", "Pearson within systems (mean)": "", "labels saved (worth)": "",
                 "saved, read on the labels alone": "", "Kendall's tau with the truth": spread(alone["tau"]),
                 "pairs told apart (of 120)": spread(alone["apart"], digits=1),
                 "told the wrong way round": spread(alone["wrong"], digits=2),
                 "systems that may rank 1-16": spread(alone["anywhere"], digits=1)}]
        for name, r in zip(names, within):
            w, d = worth.loc[name], drawn[name]
            rows.append({"estimate": f"with {name}", "Pearson within systems (mean)": f"{r:.2f}",
                         "labels saved (worth)": f"{w['saved']:+.0%} [{w['saved_low']:+.0%}, {w['saved_high']:+.0%}]",
                         "saved, read on the labels alone": spread(d["saved on the labels"], percent=True),
                         "Kendall's tau with the truth": spread(d["tau"]), "pairs told apart (of 120)":
                         spread(d["apart"], digits=1), "told the wrong way round": spread(d["wrong"], digits=2),
                         "systems that may rank 1-16": spread(d["anywhere"], digits=1)})
        table = pd.DataFrame(rows)
        rho = stats.spearmanr(worth["saved"].to_numpy(float), within).statistic
        summary += [f"### {aspect}", "", table.to_markdown(index=False), "",
                    f"- The judges' worth follows their agreement with the experts within a system (Spearman "
                    f"{rho:.2f} with the mean of the systems' Pearson); {best} is worth most: {worth.loc[best, 'saved']:+.0%} of "
                    f"the labels, the labels alone that give its combined estimate's variance.",
                    f"- With {best}, {spread(drawn[best]['apart'], digits=1)} of 120 pairs of systems are told apart "
                    f"for all pairs together, {spread(drawn[best]['wrong'], digits=2)} of them the wrong way round; "
                    f"{spread(drawn[best]['anywhere'], digits=1)} systems may rank anywhere from 1 to 16. Kendall's tau "
                    f"of its ranking with the truth {spread(drawn[best]['tau'])}. The labels alone tell "
                    f"{spread(alone['apart'], digits=1)} pairs apart, Kendall's tau {spread(alone['tau'])}.", ""]
        version, signature = combos.set_index(combos["label"].str.split(" \\(").str[0]).loc[best, ["template_version",
                                                                                                   "signature"]]
        one = geval.labeling.system_means(store, "summeval", aspect, (version, signature), per_system=k,
                                          design="documents", seed=0)
        details += [f"### {aspect} (one draw, seed 0), combined with {best}", "",
                    geval.reporting.systems_table(one).to_markdown(index=False), "",
                    "Labels each judge is worth here (" + geval.reporting.worth_words(one) + "; 95% interval "
                    "over documents):", "", geval.reporting.worth_table(one).to_markdown(index=False), "",
                    f"Ranks that hold for all pairs together (one draw, seed 0, with {best}):", "",
                    geval.reporting.ranking_table(one).to_markdown(index=False), ""]
        details += [f"- {line}" for line in one.sentences()] + [""]
        print(f"{aspect}: {time.time() - started:.0f} s", flush=True)
    Path(args.out).write_text("\n".join(lines + summary + details))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
