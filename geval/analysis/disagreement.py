"""Judge against people item by item, for finding the items where the judge is most wrong
(the Inspect page): both on a common 0-1 scale, and their absolute difference."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd

from geval.analysis.agreement import SCORE_COLUMNS, SCORED_COLUMNS, human_aspect_for, resolve
from geval.analysis.categorical import as_labels, label_disagreement
from geval.analysis.label_errors import majority_of
from geval.data.columns import columns as item_columns
from geval.data.dataset import seen_scales
from geval.data.items import Item
from geval.errors import StoreError, TemplateError
from geval.store import Store


def distributions(frame: pd.DataFrame) -> pd.Series:
    """The stored score distribution of each judgment as dicts {score: p}."""
    return frame["distribution"].map(lambda text: {int(k): v for k, v in json.loads(text or "{}").items()})


def normalized(values: pd.Series | np.ndarray, low: float, high: float) -> np.ndarray:
    """Scores mapped onto 0-1 from the scale low..high (to compare judge and human)."""
    values = np.asarray(values, dtype=float)
    return (values - low) / (high - low) if high > low else np.zeros_like(values)


def human_ranges(items: list[Item], aspects: list[str] | None = None) -> dict[str, tuple[float, float]]:
    """Each human aspect's observed (min, max) over every annotator's score in `items` (only
    `aspects`, when given)."""
    return {aspect: seen for aspect, seen in seen_scales(items).items() if aspects is None or aspect in aspects}


def people_scales(store: Store, dataset: str, items: list[Item],
                  aspects: list[str] | None = None) -> dict[str, tuple[float, float]]:
    """Each human aspect's scale (only `aspects`, when given): the one declared for it (`Store.scales`: the file's
    mapping, `--scale`, the layout's paper) reaching as far as the scores people gave, else the lowest and highest
    of those (`human_ranges`). A 1-5 scale on which nobody gave 1 stays 1-5."""
    declared = {aspect.lower(): scale for aspect, scale in store.scales(dataset).items()}
    found = {}
    for aspect, (low, high) in human_ranges(items, aspects).items():
        scale = declared.get(aspect.lower())
        found[aspect] = (min(low, scale[0]), max(high, scale[1])) if scale else (low, high)
    return found


def disagreements(store: Store, dataset: str, combo: tuple[str | None, str | None] | None = None,
                  columns: str = "all") -> pd.DataFrame:
    """One row per judgment of a scored (template version, signature) combination (default:
    the most recently scored) on the dataset's current items, with the judge and human scores
    on a common 0-1 scale.

    The judge score is normalized by its template aspect's scale, the human mean by the human
    aspect's scale (`people_scales`: as declared, else as people scored the whole dataset); `disagreement` is
    |judge_01 - human_01| (NaN when unscored or when no human aspect matches). Columns:
    item_id, aspect, aspect_name, human, score, human_score, judge_01, human_01, disagreement,
    scale_min, scale_max, human_min, human_max, status, reason, distribution, prompt, raw,
    system, group, level, response, template_version, signature, coverage, parsed
    (`answer_details`). `columns`: "all"; "brief" leaves out prompt, raw, coverage and parsed
    (what the plots do not need; much faster on a large dataset); "scores" reason and distribution
    too: what the plots, the report's tables and `geval.compare` read, from the read `geval.agree`
    makes (a million judgments' text, 90 MB, neither read nor kept).
    Raises StoreError when nothing is scored on `dataset`, ValueError for other `columns`. Kept until
    the store's next write (`Store.remembered`): a report's sections ask for the same one many times.
    """
    if columns not in _READ:
        raise ValueError(f"columns '{columns}' is unknown; use one of {', '.join(_READ)}")
    version, signature = resolve(store, dataset, combo)
    return store.remembered(("disagreements", dataset, version, signature, columns),
                            lambda: _disagreements(store, dataset, version, signature, columns))


#: The judgments' columns `disagreements` reads for each of its `columns` (None: every one, with its call's).
_READ = {"all": None, "brief": SCORE_COLUMNS, "scores": SCORED_COLUMNS}
#: The columns of the judgments' read a table of disagreements holds as they are (those read).
_AS_READ = ("item_id", "aspect", "score", "status", "reason", "distribution", "prompt", "raw")


def _disagreements(store: Store, dataset: str, version: str, signature: str, columns: str) -> pd.DataFrame:
    """`disagreements` of one combination, read and computed."""
    items = store.items(dataset)
    found = item_columns(items)
    every = store.judgments(dataset, version, signature, columns=_READ[columns])
    where = found.positions(every["item_id"])
    current = where >= 0
    # `of_items`: the judgments of current items; all of them (as a rule): the read itself, its columns shared
    frame = every if current.all() else every[current].reset_index(drop=True)
    if frame.empty:
        raise StoreError(f"no judgments for dataset '{dataset}' with these settings; score some items first")
    template = store.template(version)
    judged = where[current]  # each judgment's item, by its place in `items`
    out = frame[[column for column in _AS_READ if column in frame]]  # the read's columns, not a copy (copied on write)
    for column, name in (("system", "systems"), ("group", "group_ids"), ("level", "levels")):
        out[column] = found.table_column_at(name, lambda name=name: getattr(found, name), judged)
    out["template_version"], out["signature"] = (_same(value, len(out)) for value in (version, signature))
    human_aspects = found.human_aspects
    codes, keys = pd.factorize(out["aspect"])  # each judgment's aspect as a code (not a million strings made)
    names = np.array([*keys.tolist(), math.nan], dtype=object)  # by code; a missing aspect's (code -1) last
    humans = np.full(len(names), None, dtype=object)
    filled = {c: np.full(len(out), np.nan) for c in ("human_score", "judge_01", "human_01", "scale_min", "scale_max",
                                                      "human_min", "human_max")}
    scores = out["score"].to_numpy(dtype=float)
    categories = store.categories(dataset)
    labeled = np.full(len(out), np.nan)  # a categorical aspect's disagreement (`label_disagreement`)
    for code, key in enumerate(keys.tolist()):
        rows = np.flatnonzero(codes == code)
        try:
            names[code] = template.part_name(key)
            aspect = template.aspect(key)
        except TemplateError:  # a part (a checklist question, an order), or an aspect the stored template no
            continue           # longer has: named, but not normalized nor compared with people
        filled["scale_min"][rows], filled["scale_max"][rows] = aspect.min, aspect.max
        filled["judge_01"][rows] = normalized(scores[rows], aspect.min, aspect.max)
        human = human_aspect_for(template, key, human_aspects)
        ranges = people_scales(store, dataset, items, [human]) if human else {}
        if human not in ranges:
            continue
        low, high = ranges[human]
        humans[code] = human
        if human in categories:  # labels: the judge's nearest category against the people's majority, never means
            count = len(categories[human])
            low, high = 0.0, count - 1.0
            labels = as_labels(pd.Series(scores[rows]), (aspect.min, aspect.max), count).to_numpy(float)
            values = majority_of(found.ratings_of(human, judged[rows])[1], count)
            filled["judge_01"][rows] = normalized(labels, low, high)
            labeled[rows] = label_disagreement(labels, values, categories[human])
        else:
            values = found.mean(human)[judged[rows]]
        filled["human_score"][rows] = values
        filled["human_min"][rows], filled["human_max"][rows] = low, high
        filled["human_01"][rows] = normalized(values, low, high)
    out["aspect_name"], out["human"] = names[codes], pd.Series(humans[codes], index=out.index, dtype=object)
    for column, values in filled.items():
        out[column] = values
    out["disagreement"] = np.where(np.isnan(labeled), np.abs(filled["judge_01"] - filled["human_01"]), labeled)
    out["response"] = found.table_column_at("responses", lambda: [item.response for item in items], judged)
    if columns == "all":
        answers = [answer_details(scores, aspect, raw) for scores, aspect, raw in
                   zip(frame["call_scores"], frame["aspect"], frame["raw"])]
        out["coverage"] = [coverage for coverage, _ in answers]
        out["parsed"] = [parsed for _, parsed in answers]
    return out


def _same(value: str, rows: int) -> pd.Categorical:
    """A column of `rows` times `value`, held once (a million copies of a judge's signature: 130 MB)."""
    return pd.Categorical.from_codes(np.zeros(rows, dtype=np.int8), [value])


def most_disagreeing(rows: pd.DataFrame, top: int) -> pd.DataFrame:
    """The `top` rows of `rows` (a frame of `disagreements`) of largest disagreement, rows without one left out;
    equals in the order of their item ids, not the order the store returned the rows in."""
    found = rows.dropna(subset=["disagreement"]).nlargest(top, "disagreement", keep="all")  # the ties at the end too
    return found.sort_values(["disagreement", "item_id"], ascending=[False, True], kind="stable").head(top)


def answer_details(call_scores: str | None, aspect: str, raw: str | None) -> tuple[float, str]:
    """From a judgment's call: the probability the judge put on the scale's scores at all
    (logits or top_logprobs; NaN when it was sampled or failed), and for sampled answers
    "k of n answers parsed" ("" otherwise)."""
    scores = json.loads(call_scores) if isinstance(call_scores, str) else {}
    # a part of an aspect (a checklist question) is its call's only answer, under the key it was asked by
    score = scores.get(aspect) or (next(iter(scores.values())) if len(scores) == 1 else {})
    coverage = score.get("coverage")
    samples = score.get("samples") or []
    answers = json.loads(raw) if isinstance(raw, str) and raw else []
    parsed = f"{len(samples)} of {len(answers)} answers parsed" if samples or len(answers) > 1 else ""
    return (float(coverage) if coverage is not None else math.nan), parsed
