"""Join stored judgments with the items' human scores, and measure how well they agree."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from geval.errors import StoreError
from geval.stats import LEVELS, MEAN_OF_ASPECTS, agreement, mean_of_aspects, to_frame
from geval.store import Store
from geval.templates import Template


def scored_items(store: Store, dataset: str, template_version: str | None = None,
                 signature: str | None = None) -> pd.DataFrame:
    """One row per judgment, with the item's text, group, system and every human mean
    (columns 'human:<aspect>'). Defaults to the most recently scored template and judge."""
    if template_version is None or signature is None:
        template_version, signature = latest(store, dataset, template_version, signature)
    frame = store.judgments(dataset, template_version, signature)
    items = {item.id: item for item in store.items(dataset)}
    if frame.empty:
        return frame
    frame = frame[frame["item_id"].isin(items)].copy()
    frame["group"] = [items[i].group for i in frame["item_id"]]
    frame["system"] = [items[i].system for i in frame["item_id"]]
    frame["level"] = [items[i].level for i in frame["item_id"]]
    for aspect in dict.fromkeys(a for item in items.values() for a in item.human):
        frame[f"human:{aspect}"] = [items[i].human_mean(aspect) for i in frame["item_id"]]
    return frame


def latest(store: Store, dataset: str, template_version: str | None = None,
           signature: str | None = None) -> tuple[str, str]:
    """The (template version, signature) scored most recently on `dataset`, within any given."""
    combos = store.combos(dataset)
    if template_version:
        combos = combos[combos["template_version"] == template_version]
    if signature:
        combos = combos[combos["signature"] == signature]
    if combos.empty:
        raise StoreError(f"nothing scored on dataset '{dataset}' yet (with these settings); run `geval score` first")
    row = combos.iloc[0]
    return row["template_version"], row["signature"]


def human_aspect_for(template: Template, aspect_key: str, human_aspects: list[str]) -> str | None:
    """The human aspect a judge aspect is compared with: the template's `human = ...`,
    else a human aspect of the same name (any case)."""
    aspect = template.aspect(aspect_key)
    wanted = aspect.human or aspect.name
    return next((h for h in human_aspects if h.lower() == wanted.lower()), None)


def agreement_table(store: Store, dataset: str, template_version: str | None = None,
                    signature: str | None = None, levels: tuple[str, ...] = LEVELS,
                    n_boot: int = 1000, overall: str | None = "overall") -> pd.DataFrame:
    """Pearson, Spearman and Kendall with CIs, per judge aspect and level.

    Adds seed 000's analysis: the mean of the judge's aspect scores (each mapped onto 0-1 by
    its scale: `geval.stats.mean_of_aspects`) against the human aspect named `overall` (any
    case), when the template has several aspects.
    Columns: aspect, human, metric, level, value, low, high, n, note, unscored.
    """
    frame = scored_items(store, dataset, template_version, signature)
    if frame.empty:
        raise StoreError(f"no judgments for dataset '{dataset}' with these settings")
    version = frame["template_version"].iloc[0]
    template = next(t for t in store.template_versions() if t.version == version)
    human_aspects = [c.removeprefix("human:") for c in frame.columns if c.startswith("human:")]
    wide = frame.pivot_table(index="item_id", columns="aspect", values="score", aggfunc="first", dropna=False)
    info = frame.drop_duplicates("item_id").set_index("item_id")
    tables = []
    pairs = [(a.key, human_aspect_for(template, a.key, human_aspects)) for a in template.aspects]
    for aspect, human in pairs:
        if human is None or aspect not in wide:
            continue
        tables.append(_one(wide[aspect], info, human, aspect, levels, n_boot))
    overall_name = next((h for h in human_aspects if overall and h.lower() == overall.lower()), None)
    if overall_name and len(template.aspects) > 1 and all(a.key in wide for a in template.aspects):
        mean = mean_of_aspects(wide, {a.key: (a.min, a.max) for a in template.aspects})
        tables.append(_one(mean, info, overall_name, MEAN_OF_ASPECTS, levels, n_boot))
    if not tables:
        raise StoreError(
            f"no judge aspect of {template.label} matches a human aspect of '{dataset}' "
            f"({', '.join(human_aspects)}); set human = \"...\" on each aspect in the template header"
        )
    return pd.concat(tables, ignore_index=True)


def _one(scores: pd.Series, info: pd.DataFrame, human: str, aspect: str, levels, n_boot) -> pd.DataFrame:
    scores = scores.reindex(info.index)
    table = to_frame(agreement(
        scores.to_numpy(dtype=float), info[f"human:{human}"].to_numpy(dtype=float),
        info["group"].to_numpy(), info["system"].to_numpy(), levels=levels, n_boot=n_boot,
    ))
    table.insert(0, "human", human)
    table.insert(0, "aspect", aspect)
    table["unscored"] = int(scores.isna().sum())
    return table


def distributions(frame: pd.DataFrame) -> pd.Series:
    """The stored score distribution of each judgment as dicts {score: p}."""
    return frame["distribution"].map(lambda text: {int(k): v for k, v in json.loads(text or "{}").items()})


def normalized(values: pd.Series | np.ndarray, low: float, high: float) -> np.ndarray:
    """Scores mapped onto 0-1 from the scale low..high (to compare judge and human)."""
    values = np.asarray(values, dtype=float)
    return (values - low) / (high - low) if high > low else np.zeros_like(values)
