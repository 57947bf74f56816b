"""The one agreement pipeline. Every agreement table of the app, the CLI, the leaderboard and
the reports is made by `correlations`: score columns (a judge's aspects in any score variant,
a baseline metric, a held-out combination) against the human aspects they are compared with,
under a protocol (`geval.analysis.protocols`: which items, which levels, which metrics).

    protocol, aspect, human, level, metric, value, low, high, n, groups, unscored, note

(`n`: the items, groups or systems a value rests on, by level; `groups`: the groups its interval
resamples; `geval.analysis.correlation.reading` is how a row reads, e.g. "n/a (2 groups, 10 needed)".)

`agree` reads one scored (template version, judge) combination from the store and applies
GENERIC (every level) or a named protocol; `judge_scores` is the step it shares with the
leaderboard. Seed 000's mean of aspects is `mean_of_aspects`, defined once: each aspect mapped
onto 0-1 by its scale, then averaged.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from geval.analysis.correlation import (
    LEVELS,
    Resamples,
    at_levels,
    correlate,
    groups_note,
    interval,
    item_bootstrap,
)
from geval.analysis.categorical import accuracy_row, as_labels
from geval.analysis.grouped import codes_of_items, held_systems, renumbered, systems_of_items
from geval.analysis.held_out import held_out, searched_versions
from geval.analysis.protocols import Protocol, ProtocolError, generic, get_protocol
from geval.analysis.variants import variant_scores, with_samples
from geval.data.columns import ItemColumns
from geval.data.columns import columns as item_columns
from geval.data.items import Item
from geval.errors import StoreError
from geval.wording import counted
from geval.judging.layouts import parts
from geval.judging.templates import Template
from geval.store import Store

COLUMNS = ["protocol", "aspect", "human", "level", "metric", "value", "low", "high", "n", "groups", "unscored",
           "note"]
#: The row of G-EVAL's "average" column: the mean of the aspects' correlations.
AVERAGE = "average"
#: Seed 000's score of an item over several aspects, against the human Overall.
MEAN_OF_ASPECTS = "mean of aspects"
#: Score columns named for what they are, not for the human aspect they are compared with.
OWN_NAMES = (MEAN_OF_ASPECTS, "learned combination")


def mean_of_aspects(scores: pd.DataFrame, scales: Mapping[str, tuple[float, float]]) -> pd.Series:
    """The mean of aspects, one definition everywhere: each aspect column of `scales` ({column:
    (min, max)}) mapped onto 0-1 by its scale, then the mean per row (NaN when one is missing),
    so that aspects asked on different scales (1-3 and 0-1) weigh the same."""
    parts = [(scores[column].astype(float) - low) / (high - low) for column, (low, high) in scales.items()]
    return pd.concat(parts, axis=1).mean(axis=1, skipna=False).rename(MEAN_OF_ASPECTS)


def human_aspect_for(template: Template, aspect_key: str, human_aspects: list[str]) -> str | None:
    """The human aspect a judge aspect is compared with: the one the template's `human = ...` names,
    else one of the judge aspect's own name (any case: your labels of it, named so on a file of
    your own)."""
    aspect = template.aspect(aspect_key)
    return next((h for wanted in (aspect.human, aspect.name) if wanted
                 for h in human_aspects if h.lower() == wanted.lower()), None)


def no_human_because(template: Template, aspect_key: str, human_aspects: list[str], dataset: str,
                     unread_labels: Collection[str] = ()) -> str:
    """Why a judge aspect is compared with no human aspect, and what to do: the dataset has no human
    score or label at all yet (label it); or your labels of it are there but not read (`unread_labels`: the aspects
    labeled where the dataset is compared with its own scores: read them); or none of the name the header's
    `human = ...` asks for (label that, or name one it has); or the header names none and no human aspect has the
    aspect's; or a judge's scores were imported as an aspect the dataset has not (import them again naming one)."""
    aspect = template.aspect(aspect_key)
    wanted = aspect.human or aspect.name
    if wanted.lower() in {a.lower() for a in unread_labels}:
        return (f"'{dataset}' is compared with its own scores, which have no {wanted} ({', '.join(human_aspects)}); "
                f"your labels of {wanted} are not read: compare the judge with them (the Agreement page's "
                f"\"Compared with\": your labels, or you as one more annotator; CLI: "
                f"`python -m geval labels side {dataset} both`)")
    label = f"label {aspect.name} on the Label page (or import labels with `python -m geval labels import`)"
    if not human_aspects:
        return f"'{dataset}' has no human score or label yet: {label}, and the judge's {aspect.name} is compared with them"
    if template.kind == "imported":
        return (f"this judge's scores were imported as {aspect.name}, and '{dataset}' has no score or label of that "
                f"name (it has {', '.join(human_aspects)}): import them again naming one of those (the Data page's "
                f"\"Scores made elsewhere\"; CLI: `python -m geval judge import FILE --dataset {dataset} "
                f"--aspect NAME`), or {label}")
    if aspect.human:
        return (f"{template.name} compares {aspect.name} with '{aspect.human}' (its human = \"{aspect.human}\"), "
                f"and '{dataset}' has no score or label of that name (it has {', '.join(human_aspects)}): {label}, "
                "or set human = one of those in the template header")
    return (f"no human aspect of '{dataset}' ({', '.join(human_aspects)}) is named {aspect.name}: set human = "
            f"\"...\" on the aspect in the template header (e.g. human = \"{human_aspects[0]}\"), or {label}")


def unread_labels(store: Store, dataset: str) -> list[str]:
    """The aspects you labeled that the dataset's human side does not read (it is compared with its own scores)."""
    if store.human_side(dataset) != "people":
        return []
    return list(dict.fromkeys(store.labels(dataset)["aspect"]))


# --- the one computation ----------------------------------------------------------------------------


def correlations(scores: pd.DataFrame | pd.Series, items: list[Item], protocol: Protocol,
                 humans: Mapping[str, str] | None = None, n_boot: int = 1000, seed: int = 0,
                 metrics: tuple[str, ...] | None = None, average: bool = False) -> pd.DataFrame:
    """Each score column against the human aspect it is compared with, at each of the protocol's
    levels, in each of its metrics, with 95% intervals over groups (item and group level: the
    jackknife with Student's t; system level: `n_boot` bootstrap draws, `seed`).

    `scores` is indexed by item id: a DataFrame with a column per score, or a Series (one
    score per item, e.g. a baseline metric) compared with every human aspect of the protocol.
    `humans` names, per column, the human aspect it is compared with; otherwise the protocol's
    mapping or a human aspect of the column's name (any case). Only items of the protocol's
    level that appear in `scores` take part; those with no score count as `unscored`.
    `metrics`: a subset of the protocol's. `average`: add, per level and metric, the mean of
    the correlations of every column but Overall, its interval from the same resamples.
    Raises ProtocolError when no column maps to a human aspect of these items.
    """
    metrics = tuple(m for m in protocol.metrics if metrics is None or m in metrics)
    frame, info, pairs, (codes, n_all), (systems, n_systems) = _prepare(protocol, scores, items, humans)
    rows = []
    for column, human in pairs:
        judge, people = frame[column].to_numpy(float), info[f"human:{human}"].to_numpy(float)
        keep = ~(np.isnan(judge) | np.isnan(people))
        held = renumbered(codes[keep], n_all)  # the groups of these rows, coded once for every level
        n_groups, coded = held[1], held_systems(systems[keep], n_systems)  # and their systems
        for found in at_levels(protocol.levels, judge[keep], people[keep], n_boot, seed, metrics, held,
                               coded).values():
            rows += [{"protocol": protocol.name, "aspect": _aspect(protocol, column, human), "human": human,
                      **found[metric].__dict__, "groups": n_groups,
                      "unscored": int(np.isnan(judge).sum())} for metric in metrics]
    if average and "item" in protocol.levels:
        overall = (protocol.overall or "").lower()
        averaged = [(column, human) for column, human in pairs if human.lower() != overall]
        if len(averaged) > 1:
            rows += [_average(frame, info, (codes, n_all), averaged, protocol, metric) for metric in metrics]
    table = pd.DataFrame(rows)
    table["note"] = table["note"].fillna("")
    return table[COLUMNS]


def _average(frame: pd.DataFrame, info: pd.DataFrame, codes: tuple[np.ndarray, int], pairs: list[tuple[str, str]],
             protocol: Protocol, metric: str) -> dict:
    """G-EVAL's "average": the mean of the item-level correlations of `pairs`, its interval from
    the same leave-one-group-out sets for all of them (the jackknife of the mean, not the mean of
    their intervals); `codes`: the rows' groups (`_prepare`)."""
    resamples = Resamples.leave_one_out(None, shared=info[[f"human:{human}" for _, human in pairs]].to_numpy(float),
                                        codes=codes)
    values, boots = [], []
    for column, human in pairs:
        judge, people = frame[column].to_numpy(float), info[f"human:{human}"].to_numpy(float)
        keep = np.flatnonzero(~(np.isnan(judge) | np.isnan(people)))
        values.append(correlate(metric, judge[keep], people[keep]))
        boots.append(item_bootstrap(judge[keep], people[keep], resamples, (metric,), rows=keep)[metric])
    value = float(np.mean(values))
    low, high = interval(value, np.mean(boots, axis=0), resamples)
    names = [_aspect(protocol, c, h) for c, h in pairs]
    note = "; ".join(filter(None, [f"mean over {', '.join(names)}",
                                   "" if math.isfinite(value) else "undefined: an aspect's correlation is",
                                   groups_note(codes[1]) if math.isfinite(value) else ""]))
    return {"protocol": protocol.name, "aspect": AVERAGE, "human": ", ".join(h for _, h in pairs), "level": "item",
            "metric": metric, "value": value, "low": low, "high": high, "n": len(info), "groups": resamples.n_groups,
            "unscored": int(frame[[c for c, _ in pairs]].isna().any(axis=1).sum()), "note": note}


def _aspect(protocol: Protocol, column: str, human: str) -> str:
    """How a row names its score: the column for GENERIC and for OWN_NAMES, else the protocol's name."""
    return column if protocol.for_every_item or column.startswith(OWN_NAMES) else protocol.aspect_for(human)


def _human_aspects(items: list[Item]) -> list[str]:
    return item_columns(items).human_aspects


def _map(protocol: Protocol, column: str, human_aspects: list[str], humans: Mapping[str, str] | None) -> str | None:
    if humans and column in humans:
        wanted = humans[column]
        return next((h for h in human_aspects if h.lower() == wanted.lower()), None)
    return protocol.human_for(column, human_aspects)


def _prepare(protocol: Protocol, scores, items: list[Item], humans: Mapping[str, str] | None):
    """The score table on the protocol's items, their human means, the (column, human aspect) pairs,
    the items' groups coded (`codes_of_items`) and their systems coded (`systems_of_items`)."""
    level_items = items if protocol.for_every_item else [item for item in items if item.level == protocol.item_level]
    if not level_items:
        raise ProtocolError(f"{protocol.title}: none of the {len(items)} items is at {protocol.item_level} level")
    human_aspects = _human_aspects(level_items)
    if isinstance(scores, pd.Series):  # one score per item: compared with every aspect of the protocol (GENERIC: all)
        wanted = [h for h in dict.fromkeys(protocol.aspects.values() or human_aspects) if h in human_aspects]
        frame = pd.DataFrame({protocol.aspect_for(h): scores.array for h in wanted}, index=scores.index) \
            if wanted else pd.DataFrame()  # its values under its index as it is (a million ids not aligned again)
        given = {protocol.aspect_for(h): h for h in wanted}
    else:
        frame, given = scores, dict(humans or {})
    found = item_columns(level_items)
    where = found.positions(frame.index)
    ids = frame.index[where >= 0]  # an index as it is (a million ids not made into a list and an index again)
    if not len(ids):
        raise ProtocolError(f"{protocol.title}: no scored item is one of the {len(level_items)} "
                            f"{protocol.item_level + '-level' if protocol.item_level else 'dataset'} items")
    frame = (frame if len(ids) == len(frame) else frame.loc[ids]).apply(pd.to_numeric, errors="coerce")
    pairs = [(c, h) for c in frame.columns if (h := _map(protocol, c, human_aspects, given)) is not None]
    if not pairs:
        raise ProtocolError(
            f"{protocol.title}: no score column ({', '.join(map(str, frame.columns))}) maps to a human aspect "
            f"({', '.join(human_aspects)}); name the columns as {', '.join(protocol.aspects) or 'the human aspects'}, "
            "or say which human aspect each is compared with (a template's human = \"...\")"
        )
    chosen = where[where >= 0]
    info = pd.DataFrame({f"human:{h}": found.mean(h)[chosen] for h in dict.fromkeys(h for _, h in pairs)}, index=ids)
    return frame, info, pairs, codes_of_items(found, chosen), systems_of_items(found, chosen)


# --- a scored combination ---------------------------------------------------------------------------


@dataclass
class JudgeScores:
    """One scored (template version, judge signature) on a dataset's current items: one row per
    item, one column per judge aspect, in a score variant; the human aspect each is compared
    with (the template's `human = ...`, else the aspect's name; any case) and its scale."""

    template: Template
    signature: str
    signature_json: str
    scores: pd.DataFrame
    humans: dict[str, str] = field(default_factory=dict)
    scales: dict[str, tuple[int, int]] = field(default_factory=dict)
    parts: pd.DataFrame = field(default_factory=pd.DataFrame)  # a checklist's answers, a batch's orders, by part key


def resolve(store: Store, dataset: str, combo: tuple[str | None, str | None] | None) -> tuple[str, str]:
    """`combo` when both its parts are given, else the most recently scored that matches it (`latest`)."""
    if combo and all(combo):
        return combo[0], combo[1]
    return latest(store, dataset, *(combo or (None, None)))


def latest(store: Store, dataset: str, template_version: str | None = None,
           signature: str | None = None) -> tuple[str, str]:
    """The (template version, signature) scored most recently on `dataset`, within any given."""
    combos = store.combos(dataset)
    if template_version:
        combos = combos[combos["template_version"] == template_version]
    if signature:
        combos = combos[combos["signature"] == signature]
    if combos.empty:
        if dataset not in store.dataset_names():  # a name mistyped: not "nothing scored"
            raise store.not_stored(dataset)
        raise StoreError(f"nothing scored on dataset '{dataset}' yet (with these settings); run `geval score` first")
    row = combos.iloc[0]
    return row["template_version"], row["signature"]


#: What `judge_scores` and the plots' disagreements (`geval.analysis.disagreement.compared`) read of each
#: judgment: the same columns, so that the store serves the second from the first read; not its text (a million
#: judgments' reasons and distributions: 90 MB), read where it is shown or made into a table once.
SCORED_COLUMNS = ("item_id", "aspect", "score", "status")
#: What `disagreements(..., columns="brief")` reads of each judgment (not its prompt nor its answer).
SCORE_COLUMNS = (*SCORED_COLUMNS, "reason", "distribution")


def of_items(frame: pd.DataFrame, items: ItemColumns) -> pd.DataFrame:
    """The rows of a judgments table whose item is one of `items` (e.g. the dataset's current
    items), renumbered from 0."""
    return frame[items.positions(frame["item_id"]) >= 0].reset_index(drop=True)


def judge_scores(store: Store, dataset: str, combo: tuple[str | None, str | None] | None = None,
                 variant: str = "wmean", k: int | None = None, items: list[Item] | None = None) -> JudgeScores:
    """A combination's judgments (default: the most recently scored) as a JudgeScores, on the
    dataset's current items (`items`, default: those stored). Raises StoreError when nothing
    is scored with it."""
    version, signature = resolve(store, dataset, combo)
    items = store.items(dataset) if items is None else items
    if variant == "samples":  # read from the calls, for these items
        frame = of_items(store.judgments(dataset, version, signature, columns=SCORE_COLUMNS + ("call_key",)),
                         item_columns(items))
        if frame.empty:
            raise StoreError(f"no judgments for dataset '{dataset}' with these settings")
        frame["signature"] = signature  # the combination's own, for what a variant says of it
        wide = _wide(with_samples(store, frame).pipe(lambda f: f.assign(score=variant_scores(f, variant, k))))
    else:  # every judgment's score made once until the store changes, then the rows of these items
        every = store.remembered(("judge scores", dataset, version, signature, variant),
                                 lambda: _wide_of(store, dataset, version, signature, variant))
        judged = every[item_columns(items).positions(every.index) >= 0]
        if judged.empty and not every.empty:  # e.g. a queue's items labeled so far, none of which it scored
            raise StoreError(f"the judge scored none of these {counted(len(items), 'item')} (it scored "
                             f"{counted(len(every), 'other item')} of dataset '{dataset}')")
        every = judged
        if every.empty:
            raise StoreError(f"no judgments for dataset '{dataset}' with these settings")
        held = int(np.bitwise_or.reduce(every.pop(ASPECTS_HELD).to_numpy()))  # the aspects judged on them
        wide = every[[a for code, a in enumerate(every.columns) if held >> code & 1]]
    template = store.template(version)
    present = [a for a in template.aspects if a.key in wide]
    humans = {a.key: a.human or a.name for a in present}  # matched with the dataset's aspects in any case
    scales = {a.key: (a.min, a.max) for a in present}
    first = store.judgments(dataset, version, signature, columns=("signature_json",), limit=1)
    kept = [key for a in present for key in parts(template).get(a.key, []) if key in wide]
    return JudgeScores(template, signature, first["signature_json"].iloc[0] or "{}", wide[[a.key for a in present]],
                       humans, scales, wide[kept])


#: `_wide`'s column of the aspects each item has a judgment of, one bit each (in the columns' order).
ASPECTS_HELD = "\x00aspects judged"


def _wide_of(store: Store, dataset: str, version: str, signature: str, variant: str) -> pd.DataFrame:
    """`_wide` of a combination's judgments in `variant` (not "samples") with the items they are of, its index that of
    every variant of the same judgments (kept as the store's reads are: a million items' ids, 24 MB, held once for
    the mean and the most probable score)."""
    wide = _wide(_scored(store, dataset, version, signature, variant), ASPECTS_HELD)
    shared = store.remembered(("judged items", dataset, version, signature), lambda: pd.DataFrame(index=wide.index))
    if shared.index.dtype == wide.index.dtype and shared.index.equals(wide.index):
        wide.index = shared.index
    return wide


def _scored(store: Store, dataset: str, version: str, signature: str, variant: str) -> pd.DataFrame:
    """Every judgment of a combination on `dataset` with its score read in `variant` (not "samples"); the
    most probable scores kept beside the distributions, read for them alone (`Store.judgments_beside`)."""
    frame = store.judgments(dataset, version, signature, columns=SCORED_COLUMNS)
    if variant == "argmax":
        frame = store.judgments_beside(frame, dataset, version, signature, "most_probable")
    return frame.assign(score=variant_scores(frame, variant))


def _wide(frame: pd.DataFrame, held: str | None = None) -> pd.DataFrame:
    """A judgments table's scores with a row per item (in the order of their first judgment) and a column
    per aspect (in sorted order): each item's first score of each aspect that is a number, as
    `pivot_table(..., aggfunc="first")` gives it, NaN where there is none. `held`: add a column of that
    name with the aspects each item has a judgment of, a bit each."""
    item_of, ids = pd.factorize(frame["item_id"])
    aspect_of, aspects = pd.factorize(frame["aspect"], sort=True)
    scores = frame["score"].to_numpy(dtype=float)
    given = np.flatnonzero(~np.isnan(scores))[::-1]  # the first of an item's scores written last: it stays
    values = np.full((len(ids), len(aspects)), np.nan)
    values[item_of[given], aspect_of[given]] = scores[given]
    ids, aspects = (found if found.dtype != object else pd.Index(found.tolist()) for found in (ids, aspects))
    wide = pd.DataFrame(values, index=ids.rename("item_id"), columns=aspects.rename("aspect"))
    if held is not None:  # a bit each
        kind = _bits_kind(len(aspects))
        bits = np.zeros(len(ids), dtype=kind or object)
        np.bitwise_or.at(bits, item_of, np.left_shift(1, aspect_of.astype(kind)) if kind
                         else np.array([1 << int(code) for code in aspect_of], dtype=object))
        wide[held] = bits
    return wide


def _bits_kind(count: int) -> type | None:
    """The smallest integers that hold a bit for each of `count` aspects (a million items' int64 kept 7 MB more than
    int8); None beyond an int64's 62: Python's integers."""
    return next((kind for kind in (np.int8, np.int16, np.int32, np.int64) if count <= np.iinfo(kind).bits - 2), None)


def agree(store: Store, dataset: str, combo: tuple[str | None, str | None] | None = None, variant: str = "wmean",
          k: int | None = None, protocol: str | None = None, levels: tuple[str, ...] = LEVELS,
          n_boot: int = 1000, seed: int = 0, overall: str | None = "overall") -> pd.DataFrame:
    """The agreement table of one scored (template version, signature) combination on `dataset`
    (default: the most recently scored), its scores read in `variant` (`geval.analysis.variants`;
    `k`: the first k samples). GENERIC at `levels` unless a `protocol` is named. When the template
    has several aspects and the dataset a human aspect named `overall` (any case), seed 000's mean
    of aspects is compared with it too. Columns: COLUMNS and variant. Read without the groups a
    prompt search chose its template version on (`geval.analysis.held_out`; the notes say so). A
    categorical aspect is read by accuracy against the people's majority, never correlated
    (`geval.analysis.categorical`). Raises StoreError when nothing is scored, or no judge aspect matches a human aspect."""
    version, signature = resolve(store, dataset, combo)
    items, said = held_out(store.items(dataset), [version], searched_versions(store, dataset))
    try:
        scored = judge_scores(store, dataset, (version, signature), variant, k, items)
    except StoreError:
        if not said:
            raise
        raise StoreError(f"every judgment of {version} on '{dataset}' is on groups a prompt search chose it on: "
                         "its agreement there would flatter it; the report's section on prompt searches reads the "
                         "winner on its test groups") from None
    human_aspects = _human_aspects(items)
    if not human_aspects:
        raise StoreError(f"'{dataset}' has no human score to compare the judge with yet: label items on the Label "
                         "page (or import labels with `python -m geval labels import`)")
    humans = {key: found for key in scored.humans if (found := human_aspect_for(scored.template, key, human_aspects))}
    if not humans:
        raise StoreError(f"no judge aspect of {scored.template.label} matches a human aspect: "
                         + no_human_because(scored.template, next(iter(scored.humans)), human_aspects, dataset,
                                            unread_labels(store, dataset)))
    scores = scored.scores[list(humans)]
    overall_name = next((h for h in human_aspects if overall and h.lower() == overall.lower()), None)
    if overall_name and len(scored.template.aspects) > 1 and len(scored.scales) == len(scored.template.aspects):
        scores = scores.assign(**{MEAN_OF_ASPECTS: mean_of_aspects(scored.scores, scored.scales)})
        humans[MEAN_OF_ASPECTS] = overall_name
    chosen = get_protocol(protocol) if protocol else generic(tuple(levels))
    categorical = store.categories(dataset)
    named = [c for c in scores.columns if humans.get(c) in categorical]
    rows = [accuracy_row(as_labels(scores[c], scored.scales.get(c), len(categorical[humans[c]])), items, humans[c], c)
            | {"protocol": chosen.name} for c in named]
    numeric = scores.drop(columns=named)
    tables = [pd.DataFrame(rows, columns=COLUMNS)] if rows else []
    if len(numeric.columns):
        tables.append(correlations(numeric, items, chosen, {c: h for c, h in humans.items() if c in numeric},
                                   n_boot=n_boot, seed=seed))
    table = pd.concat(tables, ignore_index=True).assign(variant=variant)
    if said:
        table["note"] = [f"{said}; {note}" if note else said for note in table["note"]]
    return table
