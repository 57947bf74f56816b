"""Agreement on a categorical aspect (MT-Bench's model_a / model_b / tie, a label among several):
never a correlation, which would read the categories' indexes as numbers. The judge's accuracy
against the people's majority label (items whose majority is tied are left out and counted),
with a 95% interval over groups (Wilson's, on the items' number weighed by the design effect the
delete-one-group jackknife finds: `accuracy_interval`); people's agreement among themselves is
Krippendorff's alpha, nominal, in the people row and the alternative annotator test's accuracy
alignment."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pandas as pd

from geval.analysis.correlation import MIN_GROUPS, few_groups
from geval.analysis.grouped import group_codes, share_parts, wilson_interval
from geval.data.items import Item
from geval.data.pairs import PREFERENCES

METRIC = "accuracy"


def majority(scores: tuple[float, ...]) -> float:
    """The label most annotators gave, NaN when two or more tie for it (or there is none)."""
    counts = Counter(scores).most_common(2)
    if not counts or (len(counts) > 1 and counts[0][1] == counts[1][1]):
        return math.nan
    return float(counts[0][0])


def as_labels(values: pd.Series, scale: tuple[float, float] | None, count: int) -> pd.Series:
    """A judge's scores read as label indexes 0..count−1: its `scale` mapped linearly onto them and each score taken
    to the nearest index, halves up (a 0-1 judge's weighted mean of 0.56 is "pass" of fail/pass; a 1-5 judge's 3 and
    above); scores already on 0..count−1 (labels imported as words, a most probable score) keep their whole values.
    NaN stays NaN."""
    low, high = scale if scale is not None and scale[1] > scale[0] else (0.0, count - 1.0)
    x = (values.to_numpy(dtype=float) - low) / (high - low) * (count - 1)
    return pd.Series(np.clip(np.floor(x + 0.5), 0, count - 1), index=values.index, name=values.name)


def label_disagreement(judge: np.ndarray, people: np.ndarray, categories: tuple[str, ...]) -> np.ndarray:
    """How far a judge's labels are from the people's majority, item by item (label indexes; NaN where either has
    none): 0 the same, 1 another; a pair's side against a tie (PREFERENCES), half of a side against the other."""
    judge, people = np.asarray(judge, dtype=float), np.asarray(people, dtype=float)
    found = (judge != people).astype(float)
    if tuple(categories) == PREFERENCES:
        tie = PREFERENCES.index("tie")
        found[(judge != people) & ((judge == tie) | (people == tie))] = 0.5
    found[np.isnan(judge) | np.isnan(people)] = math.nan
    return found


def accuracy_row(judge: pd.Series, items: list[Item], human: str, aspect: str) -> dict:
    """The agreement table's row (`geval.analysis.agreement.COLUMNS`) of a judge's categorical
    labels (`judge`, by item id, as category indexes) against the majority of `human`."""
    by_id = {item.id: item for item in items if item.human.get(human)}
    ids = [i for i in judge.index if i in by_id and not math.isnan(judge[i])]
    majorities = np.array([majority(by_id[i].human[human]) for i in ids])
    tied = int(np.isnan(majorities).sum())
    keep = ~np.isnan(majorities)
    hits = (judge[ids].to_numpy(float)[keep] == majorities[keep]).astype(float)
    groups = np.array([by_id[i].group or i for i in ids])[keep]
    value = float(hits.mean()) if len(hits) else math.nan
    names = set(groups.tolist())
    notes = [f"{tied} items left out: their annotators' majority is tied"] if tied else []
    low, high = accuracy_interval(hits, groups)
    if len(names) < MIN_GROUPS and math.isfinite(value):
        notes.append(few_groups(len(names)))
    return {"aspect": aspect, "human": human, "level": "item", "metric": METRIC, "value": value, "low": low,
            "high": high, "n": int(len(hits)), "groups": len(names), "unscored": int(judge.isna().sum()),
            "note": "; ".join(notes)}


def accuracy_interval(hits: np.ndarray, groups: np.ndarray) -> tuple[float, float]:
    """The 95% interval of an accuracy, the mean of `hits` (1 right, 0 wrong, one per item), over the items' `groups`:
    Wilson's on the items' effective number, from the delete-one-group jackknife's variance
    (`geval.analysis.grouped.wilson_interval`); NaN below MIN_GROUPS groups."""
    hits = np.asarray(hits, dtype=float)
    codes, n_groups = group_codes(groups)
    if n_groups < MIN_GROUPS:
        return math.nan, math.nan
    _, loo, _ = share_parts(hits, np.ones_like(hits), codes, n_groups)  # the accuracy without each group
    low, high = wilson_interval(float(hits.mean()), loo, len(hits))
    return float(low), float(high)
