"""Labeling: the aspects a user labels and their scales, which item to label next, how many
labels a figure needs, and how much agreement the labels buy (the learning curve).

Which item next (`ORDERS`): a seeded random order; one stratified by the judge's score (the
items dealt round robin from its quintiles, so the first labels span the judge's range); or the
most informative: where the judge rows compared with the aspect, and once there are
`MIN_FIT` labels a combination fitted on them, disagree most (the spread of their percentile
ranks), refitted as labels come in.

The learning curve (`learning_curve`): after each number of labels (10 to all, in the order they
were given), the Pearson correlation with the labels of the judge alone and of a combination of
every judge score and baseline fitted on the labels, each item's value from a ridge fitted on
the other groups' labels only (`geval.analysis.calibration.cross_validated`, folds by group; the
judge's own score is not shrunk, so that with few labels the combination stays near a linear
reading of the judge), and their paired difference; 95% intervals from the delete-one-group
jackknife (`comparison.paired_columns`), none below MIN_GROUPS groups.
"""

from __future__ import annotations

import importlib
import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial

import numpy as np
import pandas as pd

from geval.analysis.agreement import human_aspect_for, judge_scores, no_human_because, resolve, unread_labels
from geval.analysis.baselines import FAST, compute_baselines
from geval.analysis.calibration import CalibrationError, cross_validated, fit_predict
from geval.analysis.categorical import METRIC as ACCURACY
from geval.analysis.categorical import accuracy_interval, as_labels, majority
from geval.analysis.comparison import paired_accuracy, paired_columns
from geval.analysis.correlation import (MIN_GROUPS, Resamples, between_share, correlate, item_bootstrap,
                                       jackknife_se)
from geval.analysis.grouped import group_codes, share_parts
from geval.analysis.disagreement import people_scales
from geval.analysis.scales import declaring, people_scale
from geval.analysis.held_out import held_out, searched_versions
from geval.data.columns import ItemColumns
from geval.data.columns import columns as item_columns
from geval.data.dataset import Dataset, seen_scales
from geval.data.items import Item
from geval.data.pairs import pair_text
from geval.decisions.alttest import GROUP_NOUNS
from geval.decisions.systems import (MIN_LABELS, TOGETHER, SystemMeans, SystemsError, default_labels,
                                     difference_sentence, means, more_labels, sampling_weights, weighted_order)
from geval.decisions.pass_rates import PassRates, PassRatesError, pass_aspects, rates_of, two_words
from geval.decisions.systems import means as population_means
from geval.decisions.systems_coverage import Coverage
from geval.decisions.systems_coverage import arrays as coverage_arrays
from geval.decisions.systems_coverage import simulate as simulate_coverage
from geval.decisions.systems_coverage import simulate_pairs as simulate_ranks
from geval.data.declared import Scale, aspect_words, positive
from geval.data.labels import (COMPARED_WITH, DEFAULT_ANNOTATOR, HUMAN_SIDES, MAJORITY_OF, SCORERS, read_labels,
                               write_labels)
from geval.errors import LabelError, StoreError, shown
from geval.judging.templates import Template
from geval.store import Store
from geval.wording import counted

__all__ = ["COMPARED_WITH", "DEFAULT_ANNOTATOR", "FAST", "HUMAN_SIDES", "MAJORITY_OF", "MIN_FIT", "ORDERS", "SCORERS",
           "TARGET",
           "LabelAspect", "Features", "LearningCurve", "template_aspects", "dataset_aspects", "parse_aspects", "counts",
           "features", "order", "fitted", "informativeness", "grown_effect", "labels_needed", "planned_r",
           "progress_line",
           "learning_curve", "curve",
           "read_labels", "write_labels", "no_human_because", "uncompared", "beyond_scale", "most_scores", "blind_text",
           "MIN_LABELS",
           "TOGETHER", "SystemMeans", "SystemsError", "system_means",
           "difference_sentence", "more_labels", "uncertainty", "sampling_weights", "DESIGNS", "default_labels",
           "labels_to_draw", "drawn_from",
           "estimable_aspects", "categorical_line", "labels_saved", "HUMAN_SOURCES", "pass_rates", "pass_aspects",
           "PassRates", "PassRatesError", "as_labels",
           "Coverage", "coverage_arrays", "simulate_coverage", "simulate_ranks", "population_means"]

ORDERS = {"random": "seeded random", "stratified": "stratified by the judge's score",
          "informative": "most informative (where judge rows and the fitted combination disagree most)",
          "uncertain": "where a label buys most (drawn at random, more often where the judge is unsure)"}
#: The half-width of the 95% interval the progress line counts labels for.
TARGET = 0.10
#: Labels before a combination is fitted (to order items, or for a point of the learning curve).
MIN_FIT = 10
#: Strata of the judge's score for the stratified order.
STRATA = 5
FOLDS = 5


@dataclass(frozen=True)
class LabelAspect:
    """An aspect the user labels, on the whole-number scale min..max (one digit each, 0-9)."""

    name: str
    min: int
    max: int

    def __post_init__(self):
        if not self.name.strip() or "\n" in self.name:
            raise LabelError(f"aspect name {shown(repr(self.name))} should be one line of text")
        if not 0 <= self.min < self.max <= 9:
            raise LabelError(f"aspect '{shown(self.name)}' scale {self.min}-{self.max}: use whole numbers with "
                             "0 <= min < max <= 9, so that one key rates")

    @property
    def scale(self) -> list[int]:
        """Every score of the scale, lowest first."""
        return list(range(self.min, self.max + 1))

    def __str__(self) -> str:
        return f"{self.name} {self.min}-{self.max}"


def template_aspects(template: Template, human_aspects: Sequence[str] = ()) -> list[LabelAspect]:
    """The aspects a template's judge scores, on the template's scales, each named as the human aspect
    of `human_aspects` it is compared with (`human_aspect_for`: the one its `human = ...` names, else
    one of its own name), else by its own name: a file of your own labels "Coherence", not the name of
    the dataset the template was written for ("Maintains Context")."""
    found = []
    for aspect in template.aspects:
        name = human_aspect_for(template, aspect.key, list(human_aspects)) or aspect.name
        if all(a.name.lower() != name.lower() for a in found):
            found.append(LabelAspect(name, aspect.min, aspect.max))
    return found


def uncompared(store: Store, dataset: str, template: Template) -> list[str]:
    """Why each aspect of `template` the stored dataset has no people's scores (nor labels read) of would be compared
    with nobody, in one line each (`no_human_because`): to say before a run spends calls on it."""
    people, unread = item_columns(store.items(dataset)).human_aspects, unread_labels(store, dataset)
    return [no_human_because(template, aspect.key, people, dataset, unread)
            for aspect in template.aspects if human_aspect_for(template, aspect.key, people) is None]


def beyond_scale(items: Sequence[Item], declared: Mapping[str, Scale], template: Template, dataset: str,
                 categorical: Sequence[str] = ()) -> list[str]:
    """Where people's scores of an aspect `template` is compared with run beyond the judge's scale and no scale is
    `declared` for them, one line each: their range is then taken for the people's scale (-1 to 9 of a file's
    typos read as a 10-point scale), to say before a run spends calls on it."""
    seen, lines = seen_scales(list(items)), []
    declared_names = {name.lower() for name in (*declared, *categorical)}
    for aspect in template.aspects:
        human = human_aspect_for(template, aspect.key, list(seen))
        if human is None or human.lower() in declared_names:
            continue
        theirs = people_scale((aspect.min, aspect.max), None, seen[human])  # the scale agree reads them on
        if theirs is None:
            continue
        asked = f"{aspect.min:g}-{aspect.max:g}"
        lines.append(f"the people's {human} scores run from {theirs[0]:g} to {theirs[1]:g}, beyond the judge's "
                     f"{asked}, and no scale is declared for them: the judge's scores will be read on a scale from "
                     f"{math.floor(theirs[0])} to {math.ceil(theirs[1])}; if people were asked on {asked}, correct "
                     f"their scores outside it; if on another scale, {declaring(human, dataset)}")
    return lines


def dataset_aspects(dataset: Dataset) -> list[LabelAspect]:
    """The dataset's human aspects on the scale people were asked on (`Dataset.scales`, declared), else on the
    range they gave, widened to whole numbers; a categorical aspect on its categories' indexes (pass/fail: 0-1).
    An aspect whose scale one key cannot rate (beyond 0-9) is left out."""
    seen, found = seen_scales(dataset.items), []
    for name in dataset.aspects:
        categories = dataset.categories.get(name)
        scale = (0, len(categories) - 1) if categories else dataset.scales.get(name) or seen.get(name)
        if scale is not None and 0 <= scale[0] and scale[1] <= 9 and math.floor(scale[0]) < math.ceil(scale[1]):
            found.append(LabelAspect(name, math.floor(scale[0]), math.ceil(scale[1])))
    return found


def parse_aspects(text: str, categories: Mapping[str, Sequence[str]] | None = None) -> list[LabelAspect]:
    """Aspects named by the user, e.g. "Naturalness 1-3, Overall 1-5" (comma- or line-separated); one of the
    dataset's `categories` (`Store.categories`) on its categories' indexes, a digit per category from 0.
    Raises LabelError naming the part it cannot read."""
    found = []
    for part in (p.strip() for p in text.replace("\n", ",").split(",")):
        if not part:
            continue
        name, _, scale = part.rpartition(" ")
        low, dash, high = scale.partition("-")
        if not name.strip() or not dash or not (low.strip().isdigit() and high.strip().isdigit()):
            raise LabelError(f"'{shown(part)}': name each aspect with its scale, e.g. Naturalness 1-3")
        if any(a.name.lower() == name.strip().lower() for a in found):
            raise LabelError(f"'{shown(name.strip())}' is named twice; name each aspect once")
        words = aspect_words(categories or {}, name.strip())
        if words and (int(low), int(high)) != (0, len(words) - 1):
            digits = ", ".join(f"{k} {word}" for k, word in enumerate(words))
            raise LabelError(f"'{shown(part)}': {shown(name.strip())} is labeled with {len(words)} categories: name it "
                             f"{shown(name.strip())} 0-{len(words) - 1}, a digit for each ({digits})")
        found.append(LabelAspect(name.strip(), int(low), int(high)))
    if not found:
        raise LabelError("no aspect named: name each with its scale, e.g. Naturalness 1-3, Overall 1-5")
    return found


def counts(store: Store, dataset: str) -> pd.DataFrame:
    """Per labeled aspect: how many items have a label, by whom, and the median seconds a label
    took. Columns: aspect, items, annotators, seconds. Empty when nothing is labeled."""
    labels = store.labels(dataset)
    if labels.empty:
        return pd.DataFrame(columns=["aspect", "items", "annotators", "seconds"])
    labels["key"] = labels["aspect"].str.lower()
    rows = [{"aspect": part["aspect"].iloc[-1], "items": part["item_id"].nunique(),
             "annotators": ", ".join(sorted(part["annotator"].unique())), "seconds": part["seconds"].median()}
            for _, part in labels.groupby("key", sort=False)]
    return pd.DataFrame(rows)


def labeled_items(store: Store, dataset: str) -> pd.DataFrame:
    """One row per labeled item, in the order first labeled: its id, the file's own id ("file id",
    only when some item has one) and per labeled aspect its labels ("3"; "3 (ann), 4 (you)" when
    the dataset's labels come from more than one annotator; "" where the item has none)."""
    labels = store.labels(dataset)
    own = {item.id: item.source_id for item in store.items(dataset)}
    several = labels["annotator"].nunique() > 1
    rows: dict[str, dict] = {}
    for label in labels.itertuples():
        row = rows.setdefault(label.item_id, {"id": label.item_id, "file id": own.get(label.item_id, "")})
        said = f"{label.score:g}" + (f" ({label.annotator})" if several else "")
        row[label.aspect] = f"{row[label.aspect]}, {said}" if label.aspect in row else said
    table = pd.DataFrame(list(rows.values()), columns=["id", "file id", *dict.fromkeys(labels["aspect"])])
    table = table.fillna("")
    return table if table["file id"].astype(bool).any() else table.drop(columns="file id")


# --- what the judges and baselines say of each item -----------------------------------------------


@dataclass
class Features:
    """Every judge score (one column per scored combination and aspect) and baseline of a
    dataset's items, indexed by item id; `rows` are the judge columns compared with the labeled
    aspect, `judge` the one read alone (None when no judge is compared with it), `groups` each
    item's group; `held`: per judge column read without the groups a prompt search chose its
    template on (NaN there), what its note says (`geval.analysis.held_out`); `compared` the human
    aspect each judge column is compared with; `sources` the combination (its label) and the
    judge's aspect each judge column reads."""

    table: pd.DataFrame
    rows: list[str]
    judge: str | None
    groups: pd.Series
    scale: tuple[int, int] | None = None  # the judge column's scale
    held: dict[str, str] = field(default_factory=dict)
    compared: dict[str, str] = field(default_factory=dict)
    sources: dict[str, tuple[str, str]] = field(default_factory=dict)
    _grouping: tuple[int, float, float] | None = field(default=None, init=False, repr=False, compare=False)

    def judge_scores(self) -> pd.Series:
        """The judge column (NaN throughout when there is none)."""
        return self.table[self.judge] if self.judge else pd.Series(np.nan, index=self.table.index)

    def judge_grouping(self) -> tuple[int, float, float]:
        """The items the judge scored, the other items an item's group holds there on average (Σs(s − 1)/N over
        its groups' sizes s), and the judge's between-group share of variance there (`between_share`; 0 below
        MIN_GROUPS groups): what `grown_effect` grows a design effect by. Made once (a second at a million
        items), since a page keeps the Features while labels come in."""
        if self._grouping is None:
            scores = self.judge_scores()
            scored = scores.notna()
            sizes = self.groups[scored].value_counts().to_numpy()
            total = int(sizes.sum())
            within = float((sizes * (sizes - 1)).sum()) / total if total else 0.0
            share = between_share(scores[scored], self.groups[scored]) if len(sizes) >= MIN_GROUPS else 0.0
            self._grouping = (total, within, share)
        return self._grouping


def features(store: Store, dataset: str, aspect: str, combo: tuple[str, str] | None = None,
             baselines: Sequence[str] = FAST, items: list[Item] | None = None) -> Features:
    """The judges' scores and the `baselines` (cached in the store) of the stored dataset's items,
    for labeling `aspect`: every combination scored on it (a prompt search's variants and
    combinations with nothing scored left out), each read without the groups a prompt search
    chose its template version on (NaN there: `Features.held`); the judge read alone is `combo`
    when its template compares an aspect with `aspect`, else the most recently scored combination
    that does."""
    items = store.items(dataset) if items is None else items
    found_columns = item_columns(items)
    ids = found_columns.index
    combos = store.combos(dataset)
    combos = combos[(combos["ok"] > 0) & ~combos["searched"].astype(bool)]
    wanted = resolve(store, dataset, combo) if combo else None
    tuned = searched_versions(store, dataset)
    columns: dict[str, pd.Series] = {}
    rows, scales, judge, held, compared, sources = [], {}, None, {}, {}, {}
    for version, signature, label in zip(combos["template_version"], combos["signature"], combos["label"]):
        on, said = held_out(items, [version], tuned)
        try:
            scored = judge_scores(store, dataset, (version, signature), items=on)
        except StoreError:  # judged only items a reloaded file no longer has, or a search's tune groups
            continue
        for key in scored.scores.columns:
            name = f"{label}: {key}"
            columns[name] = _on_items(scored.scores[key], found_columns)
            if said:
                held[name] = said
            compared[name] = human_aspect_for(scored.template, key, [aspect]) or scored.humans[key]
            sources[name] = (label, key)
            if compared[name].lower() == aspect.lower():
                rows.append(name)
                scales[name] = scored.scales[key]
                if judge is None and wanted == (version, signature):
                    judge = name
    judge = judge or next(iter(rows), None)
    if baselines:
        for result in compute_baselines(items, baselines, dataset=dataset, layout=store.dataset_layout(dataset),
                                        store=store):
            columns[result.title] = result.scores.reindex(ids)
    table = pd.DataFrame(columns, index=ids)
    return Features(table, rows, judge, pd.Series(found_columns.strings("groups"), index=ids),
                    scales.get(judge), held, compared, sources)


def _on_items(scores: pd.Series, found: ItemColumns) -> pd.Series:
    """`scores` (by item id) on the items of `found`, in their order, NaN for an item without one: a
    reindex that finds each score's item without comparing every id (`ItemColumns.placed`)."""
    return pd.Series(found.placed(scores), index=found.index)


# --- which item next ------------------------------------------------------------------------------


def fitted(found: Features, human: pd.Series, seed: int = 0) -> pd.Series | None:
    """The combination fitted on the labeled items (`human`, by item id): a ridge of every column
    (the judge's own score not shrunk), read on every item that has all of them. None with fewer
    than MIN_FIT labeled items that have all columns, or fewer than two groups among them."""
    labeled = human.reindex(found.table.index).astype(float)
    complete = found.table.notna().all(axis=1)
    train = complete & labeled.notna()
    if train.sum() < MIN_FIT or found.groups[train].nunique() < 2:
        return None
    predicted = fit_predict("ridge", found.table[train].to_numpy(float), labeled[train].to_numpy(float),
                            found.table[complete].to_numpy(float), found.groups[train].to_numpy(), seed,
                            [found.table.columns.get_loc(found.judge)] if found.judge else [])
    return pd.Series(predicted, index=found.table.index[complete])


def informativeness(found: Features, human: pd.Series, seed: int = 0) -> pd.Series | None:
    """How much the judge rows compared with the aspect, and (with MIN_FIT labels in `human`) the
    combination `fitted` on them, disagree on each item: the spread of their percentile ranks.
    None when there are fewer than two such columns to disagree."""
    parts = {name: found.table[name].rank(pct=True) for name in found.rows}
    combination = fitted(found, human, seed)
    if combination is not None:
        parts["fitted"] = combination.rank(pct=True)
    if len(parts) < 2:
        return None
    return pd.DataFrame(parts).std(axis=1)


def order(ids: Sequence[str], how: str, seed: int = 0, judge: pd.Series | None = None,
          spread: pd.Series | None = None) -> list[str]:
    """`ids` in the order to label them (`ORDERS`): "random" (seeded), "stratified" (by `judge`,
    the judge's score of each item: its quintiles dealt round robin, each shuffled; unscored
    items last), "informative" (`spread`, from `informativeness`, largest first; ties and
    items without one in the seeded random order) or "uncertain" (`spread`: the judge's own
    uncertainty, `uncertainty`; drawn one at a time with probability `sampling_weights`, so that
    `system_means` stays valid). Raises LabelError for an unknown order, or one whose scores are
    not given."""
    if how not in ORDERS:
        raise LabelError(f"order '{shown(how)}' is unknown; use one of {', '.join(ORDERS)}")
    if how == "uncertain":
        if spread is None:
            raise LabelError("the order where a label buys most needs the judge's uncertainty: a judge with a "
                             "distribution over scores (G-EVAL's), or use the random order")
        return weighted_order(list(ids), sampling_weights(spread.reindex(ids)), seed)
    shuffled = [ids[i] for i in np.random.default_rng(seed).permutation(len(ids))]
    if how == "random":
        return shuffled
    values = judge if how == "stratified" else spread
    if values is None:
        raise LabelError(f"the {ORDERS[how]} order needs "
                         + ("the judge's scores: score the dataset first" if how == "stratified" else
                            "two judge rows, or a judge and 10 labels, that can disagree"))
    values = values.reindex(shuffled).astype(float)
    if how == "informative":
        return list(values.sort_values(ascending=False, kind="stable", na_position="last").index)
    known = values.dropna()
    strata = min(STRATA, known.nunique())
    if strata < 2:
        return list(known.index) + list(values.index[values.isna()])
    bins = pd.qcut(known.rank(method="first"), strata, labels=False)
    dealt = [list(known.index[bins == k]) for k in range(strata)]
    dealt.reverse()  # the highest scores first, then the lowest, ...
    interleaved = [i for turn in zip(*(d + [None] * (max(map(len, dealt)) - len(d)) for d in dealt)) for i in turn
                   if i is not None]
    return interleaved + list(values.index[values.isna()])


# --- how many labels a figure needs -----------------------------------------------------------------


def labels_needed(r: float, half_width: float = TARGET, z: float = 1.96,
                  effect: float | Callable[[int], float] = 1.0) -> int:
    """The number of items at which a Pearson correlation of `r` has a 95% interval (Fisher's z)
    no wider than ±`half_width`, with the design `effect` (1: items taken as independent; k: a
    group's items count as 1/k of independent ones, `design_effect`; or the effect at each number of
    items, `grown_effect`); an undefined `r` counts as 0."""
    at = effect if callable(effect) else lambda n: effect
    n = 4
    while _half_width(r, n, z, at(n)) > half_width:
        n += 1
    return n


def _half_width(r: float, n: int, z: float = 1.96, effect: float = 1.0) -> float:
    """Half the width of the 95% interval (Fisher's z) of a Pearson `r` on `n` > 3 items, with the
    design `effect`; an undefined `r` counts as 0."""
    r = 0.0 if r is None or not math.isfinite(r) else min(abs(r), 0.999)
    spread = z * math.sqrt(effect / (n - 3))
    return (math.tanh(math.atanh(r) + spread) - math.tanh(math.atanh(r) - spread)) / 2


def planned_r(r: float, n: int, z: float = 1.96, effect: float = 1.0) -> float:
    """The Pearson a plan of labels reads from `r` on `n` labels: the end of its 95% interval (Fisher's z, with the
    design `effect`) nearest 0, or 0 where the interval holds 0 or `r` is undefined; 0, the widest, on 3 or fewer.
    A few labels' r (-0.98 on 4) would promise an interval of ±0.10 after a handful more."""
    if r is None or not math.isfinite(r) or n <= 3:
        return 0.0
    near = abs(math.atanh(min(abs(r), 0.999))) - z * math.sqrt(effect / (n - 3))
    return math.tanh(near) if near > 0 else 0.0


def design_effect(judge: pd.Series, human: pd.Series, groups: pd.Series) -> float | None:
    """How much wider the interval over groups is than one taking the items as independent: the
    delete-one-group jackknife's variance of the Pearson correlation on Fisher's z over 1/(n − 3),
    at least 1 (the groups of these labels so far); None below MIN_GROUPS groups or where the
    correlation is undefined."""
    resamples = Resamples.leave_one_out(groups.to_numpy())
    if not resamples.enough or len(judge) < 4:
        return None
    loo = item_bootstrap(judge.to_numpy(float), human.to_numpy(float), resamples, ("pearson",))["pearson"]
    se = jackknife_se(np.arctanh(np.clip(loo, -1 + 1e-12, 1 - 1e-12)))
    return max(1.0, se * se * (len(judge) - 3)) if math.isfinite(se) else None


def grown_effect(effect: float, n: int, total: int, within: float, share: float) -> float:
    """The design effect at `n` labels drawn at random from `total` items whose groups hold `within` other items
    each on average (`Features.judge_grouping`): the larger of `effect`, measured on the labels so far, and
    1 + (m − 1)·`share`, m − 1 the labels a label's group holds besides it at `n` of the items
    ((n − 1)/(N − 1)·`within`), `share` the judge's between-group share of variance squared (`between_share`,
    standing in for the judge's times the people's). The labels so far share few groups in a random order:
    measured on them alone, the effect of more labels is too small."""
    if total < 2:
        return effect
    return max(effect, 1.0 + (min(n, total) - 1) / (total - 1) * within * share)


def accuracy_design_effect(hits: pd.Series, groups: pd.Series) -> float | None:
    """`design_effect` of an accuracy (`hits`: 1 where the judge's label is the person's, else 0): the delete-one-
    group jackknife's variance of the share of hits over p(1 − p)/n, at least 1; None below MIN_GROUPS groups or
    where every label is a hit or none is (no spread to measure it by)."""
    codes, n_groups = group_codes(groups)
    p = float(hits.mean()) if len(hits) else math.nan
    if n_groups < MIN_GROUPS or not 0 < p < 1:
        return None
    values = hits.to_numpy(float)
    se = jackknife_se(share_parts(values, np.ones_like(values), codes, n_groups)[1])  # of the accuracy without each
    return max(1.0, se * se * len(hits) / (p * (1 - p))) if math.isfinite(se) else None


def accuracy_labels_needed(hits: int, labeled: int, half_width: float = TARGET, z: float = 1.96,
                           effect: float = 1.0) -> int:
    """The number of labels at which an accuracy has a 95% interval no wider than ±`half_width` (the normal
    approximation, with the design `effect`), planned at (hits + 2) / (labeled + 4): 0.5, the widest, before any
    label, and never a certain 0 or 1 from a few."""
    return max(4, math.ceil(_accuracy_half_width(hits, labeled, 1, z, effect) ** 2 / half_width ** 2))


def _accuracy_half_width(hits: int, labeled: int, n: int, z: float = 1.96, effect: float = 1.0) -> float:
    """Half the width of an accuracy's 95% interval on `n` labels, planned as `accuracy_labels_needed` plans it."""
    p = _planned_accuracy(hits, labeled)
    return z * math.sqrt(p * (1 - p) * effect / n)


def _planned_accuracy(hits: int, labeled: int) -> float:
    """The accuracy a plan reads from `hits` of `labeled`: (hits + 2) / (labeled + 4)."""
    return (hits + 2) / (labeled + 4)


def progress_line(found: Features, human: pd.Series, aspect: str, half_width: float = TARGET,
                  categories: Sequence[str] = ()) -> str:
    """"23 labeled; about N more for a 95% interval of ±0.10 on the judge's Pearson with your
    Natural labels (now 0.42)": the judge's Pearson with the labels (`human`, indexed by item id)
    of `aspect`, planned at the end of its interval nearest 0 (`planned_r`; 0 while it cannot be computed), counted
    with the design effect of the groups labeled so far (`design_effect`; below MIN_GROUPS groups, 1) grown to the
    planned number of labels (`grown_effect`), saying so where it grew or where it takes the items as independent.
    On a categorical aspect (its `categories`, the labels their indexes) the
    judge's accuracy instead: its nearest category against the label (`accuracy_labels_needed`,
    `accuracy_design_effect`). Labels where the judge is not read (the groups a prompt
    search chose its template on: `Features.held`) do not count. When the dataset has fewer items
    than that needs, it says so, and how narrow all of them make it."""
    human = human.reindex(found.table.index).astype(float)
    labeled = int(human.notna().sum())
    if found.judge is None:
        others = sorted(set(found.compared.values()), key=str.lower)
        if not others:
            return (f"{labeled} labeled; no judge has scored these items yet: score them with a template whose "
                    f"aspect is compared with {aspect} to see how far the judge agrees with you")
        return (f"{labeled} labeled; the judges scored here are compared with {', '.join(others)}, not with {aspect}: "
                f"score the items with a template whose aspect is compared with {aspect} (human = \"{aspect}\") to "
                "see how far the judge agrees with you")
    judge = found.judge_scores()
    both = judge.notna() & human.notna()
    usable, total = int(both.sum()), int(judge.notna().sum())
    if categories:  # labels: how often the judge's nearest category is the person's
        hits = (as_labels(judge[both], found.scale, len(categories)) == human[both]).astype(float)
        now = float(hits.mean()) if usable else math.nan
        effect = accuracy_design_effect(hits, found.groups[both])
        needed = accuracy_labels_needed(int(hits.sum()), usable, half_width, effect=effect or 1.0)
        every = _accuracy_half_width(int(hits.sum()), usable, total, effect=effect or 1.0) if total > 3 else math.nan
        planned = _planned_accuracy(int(hits.sum()), usable)
        at_plan = effect or 1.0
        what, unknown = "accuracy", "not computable yet, planned as 0.50: the widest"
        shown = f", planned as {planned:.2f} until there are more" if f"{planned:.2f}" != f"{now:.2f}" else ""
    else:
        now = correlate("pearson", judge[both], human[both]) if usable >= 3 else math.nan
        effect = design_effect(judge[both], human[both], found.groups[both]) if math.isfinite(now) else None
        planned = planned_r(now, usable, effect=effect or 1.0)
        items, within, share = found.judge_grouping()
        grown = partial(grown_effect, effect or 1.0, total=items, within=within, share=share ** 2)
        needed = labels_needed(planned, half_width, effect=grown)
        every = _half_width(planned, total, effect=grown(total)) if total > 3 else math.nan
        at_plan = grown(min(needed, total))
        what, unknown = "Pearson", "not computable yet, taken as 0"
        shown = ("" if f"{planned:.2f}" == f"{abs(now):.2f}" else
                 f", planned as {planned:.2f}, the end of its 95% interval nearest 0, until there are more" if planned
                 else ", planned as 0 until there are more: its 95% interval holds 0")
    shown = shown if needed > usable else ""  # enough: no plan to read
    figure = (f"a 95% interval of ±{half_width:.2f} on the judge's {what} with your {aspect} labels ("
              + (f"now {now:.2f}{shown})" if math.isfinite(now) else f"{unknown})"))
    counted = _counted(effect, at_plan, min(needed, total) if needed > usable else 0, found.groups[both].nunique())
    held = (f" ({usable} where the judge is read: {found.held[found.judge]})" if found.judge in found.held else
            f" ({usable} of them on the {total} items the judge scored: only those are compared with it)"
            if usable < labeled else "")
    if needed <= usable:
        return f"{labeled} labeled{held}: enough for {figure}{counted}"
    if needed <= total:
        return f"{labeled} labeled{held}; about {needed - usable} more for {figure}{counted}"
    reach = f"; all {total} give about ±{every:.2f}" if math.isfinite(every) else ""
    return (f"{labeled} labeled{held}; {figure} needs about {needed} labels, more than the {total} items the "
            f"judge scored{reach}{counted}")


def _counted(effect: float | None, at_plan: float, planned: int, groups: int) -> str:
    """How `progress_line` counted the labels: with the design `effect` of the `groups` labeled so far (None: too few
    to measure), grown to `at_plan` at the `planned` number of labels (0: no plan to read)."""
    grew = f"{at_plan:.1f}" != f"{effect or 1.0:.1f}" and planned
    if effect is not None:
        growth = f"; ×{at_plan:.1f} at {planned} labels, more of them in one group" if grew else ""
        return f"; counted with the design effect of the {groups} groups labeled so far (×{effect:.1f}{growth})"
    if grew:
        return (f"; counted with ×{at_plan:.1f} at {planned} labels, the design effect expected from how much the "
                f"judge's scores of a group's items move together (fewer than {MIN_GROUPS} groups labeled to measure "
                "it on your labels)")
    return (f"; counted as if items were independent (fewer than {MIN_GROUPS} groups labeled to measure how much a "
            "group's items move together: more will be needed)")


# --- the learning curve ------------------------------------------------------------------------------


CURVE_COLUMNS = ["labels", "groups", "judge", "judge_low", "judge_high", "combined", "combined_low", "combined_high",
                 "difference", "low", "high", "note"]


@dataclass
class LearningCurve:
    """The agreement (`metric`: Pearson, or on an aspect labeled with categories accuracy) of the judge
    alone and of the combination fitted on the labels, after each number of labels (`points`,
    CURVE_COLUMNS); `beats_at`: the fewest labels from which on the combination beats the judge with a
    paired 95% interval above 0 (None: not yet)."""

    aspect: str
    judge: str
    columns: list[str]
    points: pd.DataFrame
    notes: list[str] = field(default_factory=list)
    metric: str = "pearson"

    @property
    def beats_at(self) -> int | None:
        """The fewest labels from which on (at that number and every larger one) the combination
        beats the judge with a paired 95% interval above 0; None when it does not at the most."""
        above = (self.points["low"] > 0).to_numpy()
        if not len(above) or not above[-1]:
            return None
        start = len(above) - int(np.argmin(above[::-1])) if not above.all() else 0
        return int(self.points["labels"].iloc[start])


#: The numbers of labels a learning curve is read at (below the number given, then all of them): every 5
#: labels up to 30, where a point moves most, then further apart.
CURVE_SIZES = (10, 15, 20, 25, 30, 40, 50, 75, 100, 150, 200, 300, 400, 500, 750, 1000, 1500, 2000, 3000, 5000, 7500,
               10000)


def curve_sizes(total: int) -> list[int]:
    """CURVE_SIZES below `total`, then `total` (none below MIN_FIT)."""
    return [size for size in CURVE_SIZES if size < total] + ([total] if total >= MIN_FIT else [])


def learning_curve(found: Features, human: pd.Series, labeled_order: Sequence[str], aspect: str = "",
                   sizes: Sequence[int] | None = None, folds: int = FOLDS, seed: int = 0,
                   read_on: Sequence[str] | None = None, categories: int | None = None) -> LearningCurve:
    """The learning curve of `human` (labels indexed by item id) taken in `labeled_order`: at each
    of `sizes` (default `curve_sizes`), the judge alone and the combination of every column of
    `found` fitted on the labels, read on the labeled items (each item's value fitted on the other
    groups' labels: what a user can see), or with `read_on` on those items instead (other groups,
    whose human scores `human` holds too: a simulation). `categories`: the aspect is labeled with that
    many, `human` their indexes: each read by accuracy (`_paired`). Raises LabelError without a judge
    column or with fewer than MIN_FIT labels."""
    if found.judge is None:
        raise LabelError(f"no scored judge compares an aspect with '{aspect}': score the dataset with a template "
                         "whose aspect is compared with it first")
    human = human.astype(float)

    def usable(ids) -> list[str]:  # labeled, and scored by the judge
        return [i for i in dict.fromkeys(ids) if i in found.table.index and pd.notna(human.get(i))
                and pd.notna(found.table.at[i, found.judge])]

    ordered, read = usable(labeled_order), usable(read_on or [])
    if len(ordered) < MIN_FIT:
        raise LabelError(f"{counted(len(ordered), 'label')} of {aspect or 'this aspect'}: a learning curve starts "
                         f"at {MIN_FIT}")
    dropped = [c for c in found.table.columns if c != found.judge and found.table.loc[ordered + read, c].isna().any()]
    kept = Features(found.table.drop(columns=dropped), found.rows, found.judge, found.groups, found.scale, found.held)
    notes = [f"{found.judge}: {found.held[found.judge]}"] if found.judge in found.held else []
    notes += [f"left out of the combination (no value on some items): {', '.join(dropped)}"] if dropped else []
    points = [_on_other_groups(kept, human, ordered[:size], read, aspect, seed, categories) if read_on is not None
              else _on_the_labels(kept, human, ordered[:size], aspect, folds, seed, categories)
              for size in sizes or curve_sizes(len(ordered))]
    frame = pd.DataFrame(points).reindex(columns=CURVE_COLUMNS)
    frame["note"] = frame["note"].fillna("")
    if (frame["groups"] < MIN_GROUPS).any():
        notes.append(f"below {MIN_GROUPS} groups no interval is given")
    return LearningCurve(aspect, found.judge, list(kept.table.columns), frame, notes,
                         ACCURACY if categories else "pearson")


def _on_the_labels(found: Features, human: pd.Series, ids: list[str], aspect: str, folds: int, seed: int,
                   categories: int | None) -> dict:
    """A point of the curve read on the labeled items `ids`: the combination's value of each held
    out by group (`cross_validated`)."""
    groups = found.groups[ids]
    point = {"labels": len(ids), "groups": int(groups.nunique())}
    k = min(folds, groups.nunique())
    try:
        if k < 2:
            raise CalibrationError(f"{groups.nunique()} group: the combination is fitted on other groups")
        combined = cross_validated(found.table.loc[ids], human[ids], groups, "ridge", k, seed, free=[found.judge])
    except CalibrationError as exc:
        alone = found.table.loc[ids, found.judge]
        return {**point, "note": f"no combination: {exc}",
                "judge": float(np.mean(_labels(alone, found.scale, categories) == human[ids])) if categories
                else correlate("pearson", alone, human[ids])}
    paired = _paired(found.table.loc[ids, found.judge], combined, human[ids], groups, aspect, found.scale, categories)
    return {**point, **paired,
            "note": "; ".join(filter(None, [paired["note"], f"{k} folds" if k < folds else ""]))}


def _on_other_groups(found: Features, human: pd.Series, ids: list[str], read: list[str], aspect: str,
                     seed: int, categories: int | None) -> dict:
    """A point of the curve read on the items `read` (other groups): the combination fitted on all
    the labeled items `ids`."""
    combination = fitted(found, human[ids], seed)
    read = [i for i in read if combination is not None and i in combination.index]
    groups = found.groups[read]
    point = {"labels": len(ids), "groups": int(groups.nunique())}
    if combination is None or len(read) < 3:
        return {**point, "note": "no combination: too few labels, or no item to read it on"}
    return {**point, **_paired(found.table.loc[read, found.judge], combination[read], human[read], groups, aspect,
                               found.scale, categories)}


def _labels(judge: pd.Series, scale: tuple[int, int] | None, categories: int) -> np.ndarray:
    """A judge's scores on `scale` as the nearest of `categories` labels (`as_labels`)."""
    return as_labels(judge, scale, categories).to_numpy(float)


def _paired(judge: pd.Series, combined: pd.Series, human: pd.Series, groups: pd.Series, aspect: str,
            scale: tuple[int, int] | None = None, categories: int | None = None) -> dict:
    """The judge and the combination against `human` on the same items: each Pearson with its 95%
    interval and their paired difference (`comparison.paired_columns`). With `categories` (`human` their
    indexes), each one's accuracy instead: the judge's nearest label on its `scale`, the combination's
    prediction rounded to the nearest label, the paired difference `comparison.paired_accuracy`'s."""
    if categories:
        said, where = human.to_numpy(float), groups.to_numpy()
        judged = (_labels(judge, scale, categories) == said).astype(float)
        combination = (np.clip(np.floor(combined.to_numpy(float) + 0.5), 0, categories - 1) == said).astype(float)
        found = paired_accuracy(judged, combination, where)
        (judge_low, judge_high), (low, high) = accuracy_interval(judged, where), accuracy_interval(combination, where)
        return {"judge": found.a, "judge_low": judge_low, "judge_high": judge_high, "combined": found.b,
                "combined_low": low, "combined_high": high, "difference": found.difference, "low": found.low,
                "high": found.high, "note": found.note}
    row = paired_columns({aspect: (judge.to_numpy(float), combined.to_numpy(float), human.to_numpy(float))},
                         groups.to_numpy(), "item", "pearson")[0]
    return {"judge": row["a"], "judge_low": row["a_low"], "judge_high": row["a_high"], "combined": row["b"],
            "combined_low": row["b_low"], "combined_high": row["b_high"], "difference": row["difference"],
            "low": row["low"], "high": row["high"], "note": row["note"]}


def curve(store: Store, dataset: str, aspect: str, combo: tuple[str, str] | None = None,
          annotator: str | None = None, baselines: Sequence[str] = FAST, seed: int = 0) -> LearningCurve:
    """The learning curve of the stored labels of `aspect` (any case; of one `annotator`, default
    all, their mean per item; on an aspect labeled with categories their majority, read by accuracy), in the
    order they were first given, against `combo` (default: the
    most recently scored judge compared with the aspect) and the combination of every judge score
    and `baselines` (`learning_curve`)."""
    labels = store.labels(dataset, annotator)
    labels = labels[labels["aspect"].str.lower() == aspect.lower()]
    named = aspect_words(store.categories(dataset), aspect)  # labels: read by accuracy
    human = labels.groupby("item_id")["score"].agg(lambda s: majority(tuple(s))) if named else \
        labels.groupby("item_id")["score"].mean()
    labeled_order = list(labels.sort_values(["created"], kind="stable")["item_id"].drop_duplicates())
    found = features(store, dataset, aspect, combo, baselines)
    return learning_curve(found, human, labeled_order, aspect, seed=seed, categories=len(named) if named else None)


# --- what the labels buy: systems as people would score them --------------------------------------


#: How the labeled items were chosen, for `system_means`: the estimator follows the design.
DESIGNS = {"random": "at random (the seeded random order; imported labels)",
           "uncertain": "where a label buys most (the judge's uncertainty, with known probabilities)",
           "documents": "a document at a time (every system's item of each document drawn)"}


def uncertainty(store: Store, dataset: str, aspect: str, combo: tuple[str, str] | None = None) -> pd.Series | None:
    """The judge's own uncertainty on each item of `aspect`: the spread (standard deviation) of its
    stored distribution over scores (G-EVAL's probabilities; a sampled judge's answers), by item id.
    None when the judge gives none (an imported judge: one score, no spread)."""
    scored = judge_scores(store, dataset, combo)
    key = next((k for k, h in scored.humans.items() if h.lower() == aspect.lower()), None)
    if key is None:
        return None
    version, signature = resolve(store, dataset, combo)
    frame = store.judgments(dataset, version, signature, columns=("item_id", "aspect", "distribution"))
    frame = frame[frame["aspect"] == key]
    spreads = {}
    for item_id, text in zip(frame["item_id"], frame["distribution"]):
        try:
            distribution = {float(s): float(p) for s, p in json.loads(text or "{}").items()}
        except (ValueError, AttributeError):
            continue
        total = sum(distribution.values())
        if total > 0:
            mean = sum(s * p for s, p in distribution.items()) / total
            spreads[item_id] = math.sqrt(sum(p * (s - mean) ** 2 for s, p in distribution.items()) / total)
    found = pd.Series(spreads, dtype=float)
    return found if len(found) and found.max() > 0 else None


def estimable_aspects(store: Store, dataset: str, items: list[Item] | None = None,
                      among: Sequence[str] | None = None) -> tuple[list[str], list[str]]:
    """The human aspects of `dataset` (of `among` only, in any case) some judge is compared with, in
    the dataset's order, whose systems' means can be read (`system_means`); and a line for each left
    out: a categorical aspect, whose categories have no mean."""
    items = store.items(dataset) if items is None else items
    wanted = {a.lower() for a in among} if among else None
    names = [a for a in dict.fromkeys(a for item in items for a in item.human) if wanted is None or a.lower() in wanted]
    if not names or store.combos(dataset).empty:
        return [], []
    found = features(store, dataset, names[0], baselines=(), items=items)
    compared = {h.lower() for h in found.compared.values()}
    categories = {a.lower(): c for a, c in store.categories(dataset).items()}
    judged = [a for a in names if a.lower() in compared]
    return ([a for a in judged if a.lower() not in categories],
            [categorical_line(a, categories[a.lower()]) for a in judged if a.lower() in categories])


def categorical_line(aspect: str, categories: Sequence[str]) -> str:
    """Why a categorical aspect has no systems' means: its labels are categories, not scores (a pass/fail one
    has each system's pass rate instead: `pass_rates`)."""
    shown_ = ", ".join(categories[:3]) + (", …" if len(categories) > 3 else "")
    counted = positive(tuple(categories))
    rate = f"; each system's {counted} rate is estimated instead" if counted is not None else ""
    return (f"{aspect} is categorical ({len(categories)} categories: {shown_}): a mean needs scores, so no system's "
            f"mean is estimated on it (its codes are not scores){rate}")


def system_means(store: Store, dataset: str, aspect: str, combo: tuple[str, str] | None = None,
                 together: bool = False, per_system: int | None = None, design: str = "random", seed: int = 0,
                 items: list[Item] | None = None, anytime: bool = False) -> SystemMeans:
    """The mean people would give each system of `dataset` on `aspect` (`geval.decisions.systems`):
    from the people's scores of the items labeled (your labels in the order given, the dataset's
    own in a seeded order) and every judge compared with the aspect (`combo` first: the one the
    combined estimate reads; `together`: all of them fitted together), beside the labels alone
    and the judge alone. `per_system`: what that many labels per system would give, drawn from
    the human side's scores (the dataset's own, as a rule; `design`: "documents", every item of
    documents drawn until a system has k; "random", k items per system; "uncertain", by the
    judge's uncertainty), the people's mean over all items
    beside it, and each judge's worth for those labels read on every item people scored. `anytime`:
    intervals valid however many labels come (the Label page's live line). Raises SystemsError with
    one line when it cannot be read (a categorical aspect among them)."""
    if design not in DESIGNS:
        raise SystemsError(f"design '{shown(design)}' is unknown; use one of {', '.join(DESIGNS)}")
    items = store.items(dataset) if items is None else items
    found_columns = item_columns(items)
    names = found_columns.human_aspects
    name = next((h for h in names if h.lower() == aspect.lower()), None)
    if name is None:
        raise SystemsError(f"'{dataset}' has no people's scores of {aspect}"
                           + (f" (it has {', '.join(names)})" if names else ": label some items first"))
    categories = {a.lower(): c for a, c in store.categories(dataset).items()}
    if name.lower() in categories and positive(categories[name.lower()]) is None:  # pass/fail: a rate (pass_rates)
        raise SystemsError(categorical_line(name, categories[name.lower()]))
    found = features(store, dataset, name, combo, baselines=(), items=items)
    if not found.rows:
        raise SystemsError(f"no judge on '{dataset}' is compared with {name}: score one, or import one, first")
    judges = [found.judge] + [r for r in found.rows if r != found.judge]
    # the judges' scores read by place, under an index of the ids of its own: the lookup table the
    # population's reads by id make (32 MB at a million items) goes with it, not kept with the items' index
    population = pd.DataFrame({"system": found_columns.strings("systems"), "group": found_columns.strings("groups"),
                               "human": found_columns.mean(name),
                               **{judge: found_columns.placed(found.table[judge]) for judge in judges}},
                              index=pd.Index(found_columns.ids, dtype=object, copy=False))
    low, high = (0, 1) if name.lower() in categories else \
        people_scales(store, dataset, items, [name]).get(name, (math.nan, math.nan))
    scale = (math.floor(low), math.ceil(high))
    spread = uncertainty(store, dataset, name, combo) if design == "uncertain" else None
    if design == "uncertain" and spread is None:
        spread = population[judges].std(axis=1) if len(judges) > 1 else None  # several judges: their spread
        if spread is None:
            raise SystemsError(f"{found.judge} gives no distribution over scores (an imported judge): its "
                               "uncertainty is unknown; use the random order")
    weights = sampling_weights(spread.reindex(population.index)) if spread is not None else None
    notes, source = [], HUMAN_SOURCES[store.human_side(dataset)]  # the human side's scores, drawn or given
    if per_system is not None:
        design = design if design != "documents" or _shared_groups(population) else "random"
        order = _drawn(population, per_system, design, weights, seed)
        notes.append(_drawn_line(population, order, per_system, design, seed, _unit(items), source,
                                 "rate" if name.lower() in categories else "mean"))  # pass/fail: a rate
    else:
        order = _labeled_order(store, dataset, name, population, seed)
    result = means(population, order, judges, scale, name, weights if design == "uncertain" else None, together,
                   anytime=anytime, worth_on=population.index if per_system is not None else None)
    result.notes = notes + result.notes
    result.source = source
    result.judge_scale = found.scale  # the judge read alone: its template's scale
    held = [f"{j}: {found.held[j]}" for j in judges if j in found.held]
    result.notes += held
    result.worth["combo"] = [found.sources.get(j, ("", ""))[0] for j in result.worth["judge"]]
    result.worth["key"] = [found.sources.get(j, ("", ""))[1] for j in result.worth["judge"]]
    return result


def pass_rates(store: Store, dataset: str, aspect: str, combo: tuple[str, str] | None = None,
               per_system: int | None = None, design: str = "documents", seed: int = 0,
               items: list[Item] | None = None) -> PassRates:
    """Each system's pass rate on an aspect labeled pass/fail (yes/no, true/false) of `dataset`, read as
    `system_means` reads a mean (`combo`: the judge; the labels given, or `per_system` drawn from the
    dataset's own by `design`), with the judge's true-positive and true-negative rates
    (`geval.decisions.pass_rates`). PassRatesError with one line when the aspect has none."""
    items = store.items(dataset) if items is None else items
    name, words = two_words(store.categories(dataset), aspect)
    if len(words) > 2:
        raise PassRatesError(categorical_line(name, words) + "; nor a pass rate, having more than two")
    try:
        means = system_means(store, dataset, name, combo, per_system=per_system, design=design, seed=seed, items=items)
    except SystemsError as exc:
        raise PassRatesError(str(exc)) from None
    found = features(store, dataset, name, combo, baselines=(), items=items)
    return rates_of(name, words, means, as_labels(found.judge_scores(), found.scale, len(words)), items,
                    store.human_side(dataset))


#: Whose scores `system_means` reads, by the dataset's human side (`HUMAN_SIDES`).
HUMAN_SOURCES = {"people": "the dataset's own scores", "you": "your labels",
                 "both": "your labels beside the dataset's own scores"}


def labels_saved(store: Store, dataset: str, aspects: Sequence[str] | None = None, items: list[Item] | None = None,
                 seed: int = 0) -> tuple[pd.DataFrame, list[str]]:
    """What each judge saves of the labels a system's mean needs, on each aspect they can be read on,
    as `system_means` reads them by default (the labels given; where people scored every item,
    `default_labels` per system drawn a document at a time, the judge's worth read on every item):
    the labels alone that would give the combined estimate's variance, from the variance of people's
    scores the judge removes within systems (`geval.decisions.worth`; a constant saves exactly 0). One
    row per combination (`combo`, its label) and human aspect, with the labels read (in all, and per
    system: their median), the share saved with its 95% interval (`saved_low`, `saved_high`) and the
    judge's Pearson with people within systems (`within`); and a line for each aspect it cannot be
    read on (categorical, too few labels). `aspects`: only these (any case)."""
    items = store.items(dataset) if items is None else items
    aspects, lines = estimable_aspects(store, dataset, items, aspects)
    rows = []
    for aspect in aspects:
        try:
            result = system_means(store, dataset, aspect, per_system=labels_to_draw(items, aspect),
                                  design="documents", seed=seed, items=items)
        except SystemsError as exc:
            lines.append(f"{aspect}: {exc}")
            continue
        worth = result.worth[result.worth["combo"] != ""]
        per = int(result.table["labeled"].median())
        rows += [{"combo": row.combo, "aspect": aspect, "labels": row.labels, "per system": per, "saved": row.saved,
                  "saved_low": row.saved_low, "saved_high": row.saved_high, "within": row.within}
                 for row in worth.itertuples()]
    columns = ["combo", "aspect", "labels", "per system", "saved", "saved_low", "saved_high", "within"]
    return pd.DataFrame(rows, columns=columns), lines


def labels_to_draw(items: list[Item], aspect: str, per_system: int | None = None) -> int | None:
    """The labels per system to draw from the human side's scores of `aspect` where they score every item
    (`per_system`, else `default_labels`); None where they do not: the labels given are read."""
    sizes = drawn_from(items, aspect)
    return None if sizes is None else per_system or default_labels(sizes)


def drawn_from(items: list[Item], aspect: str) -> list[int] | None:
    """Where people scored every item of `aspect` (labels can be drawn from their scores): each
    system's number of items, in first-seen order; else None."""
    found = item_columns(items)
    if not found.scored(aspect).all():
        return None
    return found.memo(("system sizes",),
                      lambda: pd.Series(found.counted("systems")).value_counts(sort=False, dropna=False).tolist())


def blind_text(item: Item) -> str:
    """The text a person labeling blind reads: a pair's two responses without the names of the models that wrote
    them (as the file gave them, when it gave its own text); any other item's response as it is."""
    if item.pair is not None and item.response == pair_text(item.pair):
        return pair_text(item.pair, named=False)
    return item.response


def most_scores(items: list[Item]) -> int | None:
    """The most scores one item has of one aspect (1: one annotator); None when no item has a human aspect."""
    found = item_columns(items)
    if not found.human_aspects:
        return None
    return max(int(found.rated(aspect).max(initial=0)) for aspect in found.human_aspects)


def _shared_groups(population: pd.DataFrame) -> bool:
    """Whether some group (document, dialogue) holds items of several systems, or there are no
    systems: then k groups can be drawn, every system's item of each."""
    return (population["system"] == "").all() or bool(population.groupby("group")["system"].nunique().max() > 1)


def _unit(items: list[Item]) -> str:
    """What a group is, in words: "items" when each holds one, else dialogues, documents or groups."""
    found = item_columns(items)
    if len(found.first_seen("groups")) == len(found):  # one item in each
        return "items"
    levels = found.first_seen("levels")
    return GROUP_NOUNS.get(levels[0], "groups") if len(levels) == 1 else "groups"


def _drawn_line(population: pd.DataFrame, order: list[str], per_system: int, design: str, seed: int,
                unit: str, source: str, what: str = "mean") -> str:
    """What was drawn, in words: how many labels of what, how, from whose scores (`source`, `HUMAN_SOURCES`'), and
    beside it the people's `what` over all items ("mean"; "rate" of a pass/fail aspect)."""
    whole = population["human"].notna().all()
    drawn_rows = population.loc[order]
    # as many as there are, when fewer than asked: 100 documents "drawn" of 10 said 100
    documents = int(drawn_rows["group"].nunique())
    per = int(drawn_rows.groupby("system").size().max()) if len(order) else 0
    asked = f" (all there are; {per_system} asked)" if per < per_system else ""
    if (population["system"] == "").all():
        drawn = (f"{len(order)} items drawn at random" if design != "documents" or unit == "items" else
                 f"{documents} {unit} drawn at random{asked}, every item of each ({len(order)} labels)") \
            if design != "uncertain" else f"{len(order)} items drawn where a label buys most"
        beside = f": the people's {what} over all {len(population)} items beside it" if whole else ""
    else:
        drawn = {"documents": f"{documents} {unit} drawn at random{asked}, every system's item of each ({per} "
                              "labels per system)",
                 "random": f"{per} items per system drawn at random{asked}",
                 "uncertain": f"{per} items per system drawn where a label buys most (more often where the "
                              f"judge is unsure){asked}"}[design]
        beside = f": the people's {what} over all items beside each" if whole else ""
    return f"{drawn}, from {source} (seed {seed}){beside}"


def _drawn(population: pd.DataFrame, per_system: int, design: str, weights: pd.Series | None, seed: int) -> list[str]:
    """The items a design would label, in order: documents until a system has k labels (every
    system's item of each), k items per system at random, or k per system by weight."""
    scored = population[population["human"].notna()]
    if design == "documents":
        return _documents(scored, per_system, seed)
    order = []
    for offset, (_, part) in enumerate(scored.groupby("system", sort=True)):
        ids = list(part.index)
        drawn = weighted_order(ids, weights, seed + offset) if weights is not None else \
            [ids[i] for i in np.random.default_rng(seed + offset).permutation(len(ids))]
        order += drawn[:per_system]
    return order


def _documents(scored: pd.DataFrame, per_system: int, seed: int) -> list[str]:
    """Documents (groups) in a seeded order, every item of each, until some system has `per_system` labels:
    a document holding two of a system's items (two responses to a dialogue) counts two, so that k labels per
    system are k labels, not k documents. Read on the first documents of the order, twice as many while
    they are too few."""
    groups = pd.unique(scored["group"].array)  # the items' groups: never missing
    shuffled = groups[np.random.default_rng(seed).permutation(len(groups))]
    if not len(shuffled):
        return []
    first = per_system
    while True:
        chosen = shuffled[:first]
        part = scored[scored["group"].isin(chosen)]  # the chosen groups' items only
        place = part["group"].map(pd.Series(np.arange(len(chosen)), index=chosen)).to_numpy()
        part = part.assign(place=place).sort_values(["place", "system"], kind="stable")
        # the most labels any system has once a document is in, document by document
        most = (part.groupby("system").cumcount() + 1).groupby(part["place"].to_numpy()).max().cummax()
        if most.iloc[-1] >= per_system or first >= len(shuffled):
            taken = most.index[most.shift(fill_value=0).to_numpy() < per_system]
            return part.index[part["place"].isin(taken)].tolist()
        first *= 2


def _labeled_order(store: Store, dataset: str, aspect: str, population: pd.DataFrame, seed: int) -> list[str]:
    """The labeled items in the order they were labeled: your labels by the time given, then the
    dataset's own scores in a seeded order (their order is unknown; any order fixed before seeing
    them will do)."""
    labels = store.labels(dataset)
    mine = list(dict.fromkeys(labels.loc[labels["aspect"].str.lower() == aspect.lower(), "item_id"]))
    taken = set(mine)
    rest = [i for i in population.index[population["human"].notna()].tolist() if i not in taken]
    return mine + [rest[i] for i in np.random.default_rng(seed).permutation(len(rest))]


#: Modules reached through this one (they build on it): a team's annotation queues, and what people's
#: reasons make of the judge's prompt: `geval.labeling.queues`, `geval.labeling.reasons`.
BUILT_ON = ("queues", "reasons")


def __getattr__(name: str):
    """`geval.labeling.queues` and `geval.labeling.reasons`, imported on first use (PEP 562)."""
    if name in BUILT_ON:
        return importlib.import_module(f"geval.decisions.{name}")
    raise AttributeError(f"module 'geval.labeling' has no attribute '{name}'")
