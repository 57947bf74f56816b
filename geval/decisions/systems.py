"""Systems scored as people would score them: the mean people would give each system (model,
prompt, chatbot version) on an aspect, from people's labels on some items and the judge on all of
them (prediction-powered inference: Angelopoulos et al., Science 2023; PPI++, Angelopoulos, Duchi
& Zrnic 2023; active inference, Zrnic & Candès, ICML 2024), beside the interval from the labels
alone and the judge's own mean (biased by an unknown amount: no interval is claimed for it).

The items of a system are a finite population drawn without replacement. For a fixed number of
labels drawn at random or a document at a time (the CLI, the report, the Agreement page), the
intervals are `geval.decisions.t_intervals`': the narrowest whose coverage held for every single
system in simulation; where labels keep coming (`anytime`: the Label page's live line) or are drawn
by the Label page's "where a label buys most" order with known probabilities, `geval.decisions.
betting`'s, valid at any number of labels. Pairwise differences are read on the documents both
systems have labeled when the labels came a document at a time (every system's item of each labeled
document), else from the two systems' own intervals; the ranking's intervals hold for all pairs
together (Bonferroni over the pairs). What each judge is worth: the labels alone that would give the
combined estimate's variance, from the variance of people's scores it removes within systems
(`geval.decisions.worth`), with its 95% interval (docs/statistics.md).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations

import numpy as np
import pandas as pd

from geval.data.declared import scale_text
from geval.decisions import t_intervals
from geval.decisions.betting import ALPHA, Draws, chosen_observations, interval, point, sequential_fit
from geval.decisions.t_intervals import final_fit
from geval.decisions.worth import blocks, judge_worth
from geval.errors import GevalError
from geval.wording import fixed, natural_key

#: Labels a system needs for an interval (the simulation's smallest number: docs/statistics.md).
MIN_LABELS = 5
TOGETHER = "all judges together"
#: The half-width the Label page counts labels for.
TARGET = 0.10


class SystemsError(GevalError):
    """The systems' means cannot be estimated as asked (no labels, no judge score where labeled)."""


#: Systems up to which `SystemMeans.sentences` compares every pair (4: six sentences), not each with the next.
EVERY_PAIR_UP_TO = 4


@dataclass
class SystemMeans:
    """The people's mean of each system on one aspect, estimated three ways (`table`: the labels
    alone, the labels and the judge combined, the judge alone); the pairwise `differences` and the
    `ranking` with intervals that hold together; what each judge is worth (`worth`); whose scores
    the labels are (`source`: "the dataset's own scores", "your labels", ...)."""

    aspect: str
    scale: tuple[float, float]
    judge: str
    table: pd.DataFrame
    differences: pd.DataFrame
    ranking: pd.DataFrame
    worth: pd.DataFrame
    paired: bool
    notes: list[str] = field(default_factory=list)
    source: str = "people's scores"
    sequential: bool = False  # betting intervals (valid at any number of labels), else for these labels
    judge_scale: tuple[float, float] | None = None  # the judge's own scale (its template's), when not the people's

    def judge_alone(self) -> pd.Series:
        """Each system's mean of the judge alone (`table`'s "judge") on the people's `scale`: the judge's own
        scale mapped end to end onto it where the two differ (a 1-10 judge's 7 is 3.67 on 1-5). Biased either way."""
        own = self.table["judge"]
        if not self.judge_scale or tuple(self.judge_scale) == tuple(self.scale):
            return own
        (low, high), (to_low, to_high) = self.judge_scale, self.scale
        return to_low + (own - low) / (high - low) * (to_high - to_low) if high > low else own * math.nan

    def judge_alone_words(self) -> str:
        """The judge alone's name in a table or legend, saying when its scale was mapped onto the people's."""
        if not self.judge_scale or tuple(self.judge_scale) == tuple(self.scale):
            return "judge alone (biased)"
        return (f"judge alone (biased; its {scale_text(self.judge_scale)} mapped onto the people's "
                f"{scale_text(self.scale)})")

    def whole(self) -> pd.Series:
        """Per row of `table`: whether every item of the system is labeled (its mean the people's own, no estimate)."""
        return self.table["labeled"] >= self.table["items"]

    @property
    def every_item_labeled(self) -> bool:
        """Whether every item of every system is labeled: nothing estimated, nothing for a judge to save."""
        return bool(len(self.table)) and bool(self.whole().all())

    def interval_words(self) -> str:
        """How the 95% intervals were made, in words."""
        if self.sequential:
            return "95% intervals valid at any number of labels (betting)"
        return "95% intervals for these labels (Student's t with a label added at each end of the scale)"

    def sentences(self, adjacent: bool | None = None) -> list[str]:
        """A sentence per comparison ("B is rated higher than A by people's standard: +0.21 [+0.08,
        +0.34]"): each system against the next one in the estimated order (`adjacent`), else every pair
        (None: every pair of up to EVERY_PAIR_UP_TO systems, where the first against the last is the pair
        a reader asks about first). Each interval is 95% for its pair alone; a difference it tells apart
        that the intervals for all pairs together (the ranks') do not says so, with those bounds."""
        order = list(self.ranking["system"])
        adjacent = len(order) > EVERY_PAIR_UP_TO if adjacent is None else adjacent
        pairs = list(zip(order, order[1:])) if adjacent else [(a, b) for a, b in combinations(order, 2)]
        found = {(r.a, r.b): r for r in self.differences.itertuples()}
        lines = []
        for high, low in pairs:
            row = found.get((high, low)) or found.get((low, high))
            sign = 1 if (row.a, row.b) == (high, low) else -1
            line = difference_sentence(high, low, sign * row.difference, *sorted((sign * row.low, sign * row.high)),
                                       self.aspect)
            if (row.low > 0 or row.high < 0) and row.simultaneous_low <= 0 <= row.simultaneous_high:
                together = sorted((sign * row.simultaneous_low, sign * row.simultaneous_high))
                line += (f"; for all {len(self.differences)} pairs together [{together[0]:+.2f}, {together[1]:+.2f}], "
                         "which holds 0: the ranks do not tell these two apart")
            lines.append(line)
        return lines

    def pairs_line(self) -> str:
        """What the sentences' and the ranks' intervals are, in words, so that a pair told apart in one
        and not in the other reads as what it is ("" with one system)."""
        n = len(self.differences)
        if not n:
            return ""
        return (f"Each comparison's interval is 95% for that pair alone; the ranks hold for all {n} pairs together "
                f"(Bonferroni: the {100 * ALPHA:g}% shared, each pair at {100 * ALPHA / n:.2g}%), so they tell fewer "
                "systems apart: a pair may differ clearly "
                "alone and not among all of them.")


def difference_sentence(a: str, b: str, difference: float, low: float, high: float, aspect: str = "") -> str:
    """"A is rated higher than B by people's standard: +0.21 [+0.08, +0.34]", or that the interval
    holds 0 (no clear difference); where every item is labeled (an interval of no width), the difference itself.
    """
    shown = fixed(difference, 2, signed=True)
    figure = f"{shown} [{low:+.2f}, {high:+.2f}]" if math.isfinite(low) else f"{shown} (no interval)"
    on = f" on {aspect}" if aspect else ""
    if math.isfinite(low) and high - low <= 1e-12:  # every item labeled: the means themselves, not estimates
        if round(difference, 2) == 0:
            return f"{a} and {b} have the same mean{on} by people's standard (exact: every item labeled): {shown}"
        figure = f"{shown} (exact: every item labeled)"
    if math.isfinite(low) and low > 0:
        return f"{a} is rated higher than {b}{on} by people's standard: {figure}"
    if math.isfinite(high) and high < 0:
        return f"{a} is rated lower than {b}{on} by people's standard: {figure}"
    return f"No clear difference between {a} and {b}{on} by people's standard (the interval holds 0): {figure}"


def means(population: pd.DataFrame, order: Sequence[str], judges: Sequence[str], scale: tuple[float, float],
          aspect: str = "", weights: pd.Series | None = None, together: bool = False,
          alpha: float = ALPHA, anytime: bool = False, worth_on: Sequence[str] | None = None) -> SystemMeans:
    """The estimate from `population` (one row per item, indexed by item id: `system`, `group`,
    `human` (NaN where no person labeled it) and each of `judges`' scores) with the labels taken in
    `order` (item ids, first labeled first); `weights`: the sampling weights of the order (None: at
    random). The combined estimate reads the first of `judges` (`together`: all of them, fitted
    together). `anytime`: intervals valid however many labels come (betting), for a line that
    follows the labels as they are given; else, at random, the narrower ones for these labels.
    `worth_on`: the items whose people's scores tell what each judge is worth, for these labels
    (default: the labeled ones; where people scored more, e.g. every item, all of those). Raises
    SystemsError with one line when no system has MIN_LABELS labels, or no judge scored a labeled
    item."""
    population = population.copy()
    population["system"] = population["system"].fillna("").astype(str)
    labeled, labeled_rows = _scored(population, order)
    counts = population.loc[labeled, "system"].value_counts()
    systems = [s for s in sorted(population["system"].unique(), key=natural_key) if counts.get(s, 0) >= MIN_LABELS]
    if not labeled:
        raise SystemsError(f"no item has people's scores of {aspect or 'this aspect'}: label some first "
                           f"({MIN_LABELS} or more per system)")
    if not systems:
        most = counts.idxmax()
        raise SystemsError(f"too few labels: at most {counts.max()} of one system ({most or 'the dataset'}); an "
                           f"interval needs {MIN_LABELS} labels of a system")
    if not judges:
        raise SystemsError(f"no judge is scored on {aspect or 'this aspect'}: score one, or import one, first")
    unscored = [j for j in judges if population.loc[labeled, j].isna().all()]
    if judges[0] in unscored:
        judged = int(population[judges[0]].notna().sum())
        raise SystemsError(f"{judges[0]} scored none of the {len(labeled)} items whose people's scores are read as "
                           f"labels (it scored {judged} of the {len(population)} items): it cannot be corrected by them; "
                           "score every item with it (its scores on all of them are what the labels correct), or pick "
                           "another judge")
    judges = [j for j in judges if j not in unscored]
    notes = [f"left out of the judges' worth: {j}, which scored none of the {len(labeled)} items whose people's "
             "scores are read as labels (score them to read it)" for j in unscored]
    few = [s for s in population["system"].unique() if s not in systems]
    if few:
        notes.append(f"left out, fewer than {MIN_LABELS} labels: " + ", ".join(
            f"{s or 'no system'} ({counts.get(s, 0)})" for s in sorted(few, key=natural_key)))
    if (population["system"] == "").all():
        notes.append("no systems: the mean of the whole dataset, nothing to compare")
    notes += _all_labeled(population, labeled, systems)
    chosen = list(judges) if together else [judges[0]]
    name = TOGETHER if together and len(judges) > 1 else judges[0]
    arrays = _Items(population, judges)
    arrays.place(labeled, labeled_rows)
    sequential = anytime or weights is not None
    table = _table(arrays, population, labeled, systems, chosen, scale, weights, alpha, sequential)
    alone = population[judges[0]].to_numpy()
    table["judge"] = [pd.Series(alone[arrays.members[s]]).mean() for s in systems]  # each system's own, as pandas reads it
    paired = _document_design(arrays, population, labeled, systems)
    differences = _differences(arrays, population, labeled, systems, chosen, scale, table, paired, alpha, weights,
                               sequential)
    scored = arrays.place(*_scored(population, worth_on)) if worth_on is not None else labeled
    worth = judges_worth(arrays, labeled, systems, judges, scale, weights if worth_on is None else None, scored)
    missing = population[list(judges)].isna().sum()
    notes += [f"{j}: {int(m)} items without its score, read as its mean over their system" for j, m in missing.items()
              if m]
    none_scored = int(population[list(judges)].isna().all(axis=1).sum())  # all judges together: items none scored
    worth["unscored"] = [int(missing.get(j, none_scored)) for j in worth["judge"]]
    return SystemMeans(aspect, scale, name, table, differences, _ranking(table, differences, systems), worth,
                       paired, notes, sequential=sequential)


def judges_worth(arrays: _Items, labeled: list[str], systems: list[str], judges: Sequence[str],
                 scale: tuple[float, float], weights: pd.Series | None, scored: list[str]) -> pd.DataFrame:
    """What each of `judges` is worth over the systems for the `labeled` items
    (`geval.decisions.worth.judge_worth`), read on the people's scores of the items `scored` (drawn
    with `weights`), and all of them together when there are several, most first."""
    sets = [([j], j) for j in judges] + ([(list(judges), TOGETHER)] if len(judges) > 1 else [])
    groups = arrays.groups(scored, systems)
    of_labeled = arrays.system[arrays.rows(labeled)]
    counts = np.array([(of_labeled == s).sum() for s in systems])
    drawn = [arrays.draws(scored, systems, chosen, weights, scale) for chosen, _ in sets]
    split = blocks(groups, drawn[0].labeled)  # the same labels for every judge
    worth = pd.DataFrame([judge_worth(draws, split, name, counts) for draws, (_, name) in zip(drawn, sets)])
    return worth.sort_values("effective", ascending=False, ignore_index=True)


def _scored(population: pd.DataFrame, ids: Sequence[str]) -> tuple[list[str], np.ndarray]:
    """`ids` (each the first time it comes) that are items of `population` with people's scores, in
    order, and their rows in it."""
    wanted = ids if isinstance(ids, pd.Index) else pd.Index(ids, dtype=object)
    if not wanted.is_unique:
        wanted = wanted[~wanted.duplicated()]
    where = np.arange(len(wanted)) if wanted.is_(population.index) else population.index.get_indexer(wanted)
    keep = where >= 0
    keep[keep] = population["human"].notna().to_numpy()[where[keep]]
    return wanted[keep].tolist(), where[keep]


def _all_labeled(population: pd.DataFrame, labeled: list[str], systems: list[str]) -> list[str]:
    """The line naming the systems whose every item is labeled: their mean is the people's own, no
    estimate (an interval of no width, nothing for a judge to save)."""
    counts = population.loc[labeled, "system"].value_counts()
    sizes = population["system"].value_counts()
    whole = [s for s in systems if counts.get(s, 0) >= sizes[s]]
    if not whole:
        return []
    if whole == [""]:
        return ["every item is labeled: this is the people's own mean, not an estimate (no interval to give, nothing "
                "for a judge to save)"]
    if len(whole) == len(systems):
        return ["every item of every system is labeled: these are the people's own means, not estimates (no "
                "interval to give, nothing for a judge to save), of these items only: how the systems would do on "
                "other items of the kind is not read here"]
    return [f"every item of {', '.join(whole)} is labeled: this is the people's own mean of "
            + ("each" if len(whole) > 1 else "it") + ", not an estimate"]


def default_labels(sizes: Sequence[int], most: int = 20) -> int:
    """How many labels per system to draw by default from scores people gave every item: half the
    smallest system's items (so that the interval has something to estimate), at least MIN_LABELS,
    at most `most`."""
    smallest = min(sizes) if len(sizes) else most
    return int(min(most, max(MIN_LABELS, smallest // 2)))


class _Items:
    """The population as arrays, read once: each item's system, group, people's score, and every
    judge's score centred on its system's mean (an item without a score at the mean)."""

    def __init__(self, population: pd.DataFrame, judges: Sequence[str]):
        self.ids = population.index
        self._rows: dict[int, tuple[Sequence[str], np.ndarray]] = {}  # id of a list of items -> (it, their rows)
        system_of, systems = _coded(population["system"].astype(str))
        self.system = systems[system_of]
        group_of, groups = _coded(population["group"].fillna("").astype(str))
        self.group = groups[group_of]
        self.human = population["human"].to_numpy(float)
        self.judges = list(judges)
        scores = population[self.judges].astype(float)
        self.centred = (scores - scores.groupby(population["system"]).transform("mean")).fillna(0.0).to_numpy(float)
        self.members = {s: np.flatnonzero(system_of == code) for code, s in enumerate(systems.tolist())}

    def place(self, ids: list[str], rows: np.ndarray) -> list[str]:
        """Keep `rows` as the rows of the items `ids` (the list itself) for `rows`; `ids` back."""
        self._rows[id(ids)] = (ids, np.asarray(rows, int))
        return ids

    def rows(self, ids: Sequence[str]) -> np.ndarray:
        """The rows of the items `ids` (kept for a list placed or read before: labels are read many times)."""
        if id(ids) not in self._rows:
            self.place(ids, self.ids.get_indexer(pd.Index(ids, dtype=object)))
        return self._rows[id(ids)][1]

    def draws(self, labeled: Sequence[str], systems: Sequence[str], judges: Sequence[str],
              weights: pd.Series | None, scale: tuple[float, float]) -> Draws:
        """One sequence per system: its labels in the order given."""
        columns = [self.judges.index(j) for j in judges]
        rows = self.rows(labeled)
        sequences = [rows[self.system[rows] == s] for s in systems]
        size = np.array([len(self.members[s]) for s in systems])
        k, big = max(map(len, sequences)), int(size.max())
        y, x = np.full((len(systems), k), np.nan), np.zeros((len(systems), k, len(columns)))
        pop = np.full((len(systems), big, len(columns)), np.nan)
        w = taken = None
        if weights is not None:
            every = weights.reindex(self.ids).to_numpy(float)
            w, taken = np.full((len(systems), big), np.nan), np.full((len(systems), k), np.nan)
        for b, (system, chosen) in enumerate(zip(systems, sequences)):
            members = self.members[system]
            pop[b, :len(members)] = self.centred[np.ix_(members, columns)]
            y[b, :len(chosen)] = self.human[chosen]
            x[b, :len(chosen)] = self.centred[np.ix_(chosen, columns)]
            if weights is not None:
                w[b, :len(members)], taken[b, :len(chosen)] = every[members], every[chosen]
        return Draws(y, x, pop, size, np.zeros(len(systems), int), scale, w, taken)

    def groups(self, labeled: Sequence[str], systems: Sequence[str]) -> np.ndarray:
        """(systems, k): the group of each label of `draws`' sequences ("" past a system's last)."""
        rows = self.rows(labeled)
        sequences = [rows[self.system[rows] == s] for s in systems]
        found = np.full((len(systems), max(map(len, sequences))), "", dtype=object)
        for b, chosen in enumerate(sequences):
            found[b, :len(chosen)] = self.group[chosen]
        return found


def _coded(strings: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Each row's code and the distinct strings in first-seen order (an object array): `strings` is
    `distinct[codes]`, each distinct string one object (a million of them compared by identity first)."""
    codes, distinct = pd.factorize(strings)
    return codes, np.asarray(distinct.tolist(), dtype=object)


def _intervals(draws: Draws, alphas: Sequence[float], with_judge: bool,
               sequential: bool = True) -> list[tuple[np.ndarray, np.ndarray]]:
    """The interval at each of `alphas`, people alone or with the judge: betting (`sequential`), or
    the padded t for these labels."""
    if not sequential:
        return t_intervals.system_intervals(draws, final_fit(draws) if with_judge else None, list(alphas))
    beta = sequential_fit(draws) if with_judge else None
    observed = chosen_observations(draws, beta)
    return [interval(draws, *observed, alpha=a) for a in alphas]


def _table(arrays: _Items, population: pd.DataFrame, labeled: list[str], systems: list[str], judges: list[str],
           scale: tuple[float, float], weights: pd.Series | None, alpha: float, sequential: bool) -> pd.DataFrame:
    """Per system: items, labels, the people-only and the combined estimate with their intervals
    (95%, and at alpha over the systems for the ranking), and the people's mean over every item
    when people scored all of them (`truth`)."""
    draws = arrays.draws(labeled, systems, judges, weights, scale)
    levels = [alpha, alpha / max(len(systems), 1)]
    (p_low, p_high), _ = _intervals(draws, levels, False, sequential)
    (c_low, c_high), (s_low, s_high) = _intervals(draws, levels, True, sequential)
    final = final_fit(draws)
    rows = pd.DataFrame({
        "system": systems, "items": draws.size, "labeled": draws.labeled.sum(1),
        "people": point(draws, np.zeros_like(final)), "people_low": p_low, "people_high": p_high,
        "combined": point(draws, final), "combined_low": c_low, "combined_high": c_high,
        "simultaneous_low": s_low, "simultaneous_high": s_high})
    truth = population.groupby("system")["human"].agg(lambda v: v.mean() if v.notna().all() else math.nan)
    rows["truth"] = truth.reindex(systems).to_numpy()
    for side in ("people", "combined"):  # a point outside its interval (rare: the interval is not centred on it)
        rows[side] = rows[side].clip(rows[f"{side}_low"], rows[f"{side}_high"])
    return rows


def _document_design(arrays: _Items, population: pd.DataFrame, labeled: list[str], systems: list[str]) -> bool:
    """Whether the labels came a document at a time: every system labeled on the same groups, in
    the same order (then differences are read on those shared documents)."""
    if len(systems) < 2:
        return False
    rows = arrays.rows(labeled)
    system_of, group_of = arrays.system[rows], population["group"].iloc[rows].to_numpy(object)
    orders = [group_of[system_of == s].tolist() for s in systems]
    return all(o == orders[0] for o in orders) and len(set(orders[0])) == len(orders[0])


def _differences(arrays: _Items, population: pd.DataFrame, labeled: list[str], systems: list[str], judges: list[str],
                 scale: tuple[float, float], table: pd.DataFrame, paired: bool, alpha: float,
                 weights: pd.Series | None = None, sequential: bool = True) -> pd.DataFrame:
    """Every pair A, B (A before B): the combined estimate of A − B with its 95% interval and the one
    that holds for all pairs together; on shared documents when `paired` (`t_intervals.
    paired_intervals`, or betting when `sequential`), else from the two systems' own estimates (Welch's
    t of the padded t's; betting: each system's interval at half the level, Bonferroni), read with the
    sampling `weights` of their draws (None: at random)."""
    pairs = list(combinations(range(len(systems)), 2))
    if not pairs:
        return pd.DataFrame(columns=["a", "b", "difference", "low", "high", "simultaneous_low", "simultaneous_high",
                                     "documents"])
    levels = [alpha, alpha / len(pairs)]
    a, b = np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])
    if paired:
        draws, documents = _paired_draws(arrays, labeled, systems, judges, scale, pairs)
        final = final_fit(draws)
        if sequential:
            (low, high), (s_low, s_high) = _intervals(draws, levels, True)
        else:
            low, high, s_low, s_high = t_intervals.paired_intervals(draws, final, alpha, len(pairs))
        difference = point(draws, final)
    elif not sequential:
        draws = arrays.draws(labeled, systems, judges, None, scale)
        centre, se, df = t_intervals.padded_t(t_intervals.residuals(draws, final_fit(draws)), draws.size, scale)
        (low, high), (s_low, s_high) = (t_intervals.welch(centre, se, df, a, b, level) for level in levels)
        width = scale[1] - scale[0]
        low, high, s_low, s_high = (np.clip(v, -width, width) for v in (low, high, s_low, s_high))
        difference, documents = table["combined"].to_numpy()[a] - table["combined"].to_numpy()[b], [0] * len(pairs)
    else:
        combined = table["combined"].to_numpy()
        draws = arrays.draws(labeled, systems, judges, weights, scale)  # drawn by weight: read by weight
        (h_low, h_high), = _intervals(draws, [alpha / 2], True)
        low, high = h_low[a] - h_high[b], h_high[a] - h_low[b]
        s_low = table["simultaneous_low"].to_numpy()[a] - table["simultaneous_high"].to_numpy()[b]
        s_high = table["simultaneous_high"].to_numpy()[a] - table["simultaneous_low"].to_numpy()[b]
        difference, documents = combined[a] - combined[b], [0] * len(pairs)
    return pd.DataFrame({"a": [systems[i] for i, _ in pairs], "b": [systems[j] for _, j in pairs],
                         "difference": np.clip(difference, low, high), "low": low, "high": high,
                         "simultaneous_low": s_low, "simultaneous_high": s_high, "documents": documents})


def _paired_draws(arrays: _Items, labeled: list[str], systems: list[str], judges: list[str],
                  scale: tuple[float, float], pairs: list[tuple[int, int]]) -> tuple[Draws, list[int]]:
    """One sequence per pair: the difference A − B on each shared labeled document, in order, over
    the population of documents both systems have (its bounds: the scale's width either way)."""
    columns = [arrays.judges.index(j) for j in judges]
    by_group = {s: dict(zip(arrays.group[arrays.members[s]].tolist(), arrays.members[s].tolist())) for s in systems}
    order = list(dict.fromkeys(arrays.group[arrays.rows(labeled)].tolist()))
    labeled_rows = set(arrays.rows(labeled).tolist())
    rows = []
    for i, j in pairs:
        one, two = by_group[systems[i]], by_group[systems[j]]
        shared = [g for g in one if g in two]
        diff = arrays.centred[np.ix_([one[g] for g in shared], columns)] - \
            arrays.centred[np.ix_([two[g] for g in shared], columns)]
        diff -= diff.mean(0)
        at = {g: n for n, g in enumerate(shared)}
        done = [g for g in order if g in at and one[g] in labeled_rows and two[g] in labeled_rows]
        values = arrays.human[[one[g] for g in done]] - arrays.human[[two[g] for g in done]]
        rows.append((diff, [at[g] for g in done], values))
    k, big = max(len(r[1]) for r in rows), max(len(r[0]) for r in rows)
    y, x = np.full((len(rows), k), np.nan), np.zeros((len(rows), k, len(columns)))
    pop = np.full((len(rows), big, len(columns)), np.nan)
    for b, (diff, done, values) in enumerate(rows):
        y[b, :len(done)], x[b, :len(done)] = values, diff[done]
        pop[b, :len(diff)] = diff
    width = scale[1] - scale[0]
    return (Draws(y, x, pop, np.array([len(r[0]) for r in rows]), np.zeros(len(rows), int), (-width, width)),
            [len(r[1]) for r in rows])


def _ranking(table: pd.DataFrame, differences: pd.DataFrame, systems: list[str]) -> pd.DataFrame:
    """The systems by their combined estimate, each with the ranks it may hold: 1 + the systems surely
    above it to the count less the systems surely below it (the simultaneous intervals of A − B)."""
    above = {s: 0 for s in systems}
    below = {s: 0 for s in systems}
    for row in differences.itertuples():
        if row.simultaneous_low > 0:
            above[row.b] += 1
            below[row.a] += 1
        elif row.simultaneous_high < 0:
            above[row.a] += 1
            below[row.b] += 1
    ranked = table[["system", "combined", "combined_low", "combined_high"]].sort_values(
        "combined", ascending=False, kind="stable", ignore_index=True)
    ranked["rank"] = range(1, len(ranked) + 1)
    ranked["best_rank"] = [1 + above[s] for s in ranked["system"]]
    ranked["worst_rank"] = [len(systems) - below[s] for s in ranked["system"]]
    return ranked


def sampling_weights(uncertainty: pd.Series, mix: float = 0.5) -> pd.Series:
    """The "where a label buys most" order's weights: half at random, half in proportion to the
    judge's uncertainty on each item (its spread over scores), so that no item's inverse weight is
    above 1 / mix. Uniform when the judge is equally (un)certain everywhere."""
    values = uncertainty.astype(float).fillna(uncertainty.mean() if uncertainty.notna().any() else 0.0)
    average = values.mean()
    if not average > 0:
        return pd.Series(1.0, index=uncertainty.index)
    return mix + (1 - mix) * values / average


def weighted_order(ids: Sequence[str], weights: pd.Series, seed: int = 0) -> list[str]:
    """`ids` in a seeded order drawn one at a time, each with probability its weight over the weight
    of the items left (the order of Exp(1) / weight: Efraimidis & Spirakis)."""
    keys = -np.log(np.random.default_rng(seed).random(len(ids))) / weights.reindex(ids).fillna(1.0).to_numpy(float)
    return [ids[i] for i in np.argsort(keys, kind="stable")]


def more_labels(system: pd.Series, half_width: float = TARGET) -> int | None:
    """About how many more labels of a system bring its combined interval to ±`half_width`: the
    interval's width scaled as sampling without replacement narrows it, (1/n − 1/N), from its width
    now (its shape at this many labels kept: a little more than needed as labels come). None when
    all its items are labeled, or it is there already (0)."""
    n, big = int(system["labeled"]), int(system["items"])
    width = system["combined_high"] - system["combined_low"]
    if n >= big or not math.isfinite(width):
        return None
    if width / 2 <= half_width:
        return 0
    now = 1 / n - 1 / big
    needed = 1 / ((half_width * 2 / width) ** 2 * now + 1 / big)
    return int(min(big, math.ceil(needed))) - n
