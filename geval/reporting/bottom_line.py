"""The bottom line, one sentence per human aspect: which judge is worth most labels (the judge the
CLI, the Agreement page and the report open on, `worth_most`), what it saves, whether it may
replace an annotator, which judge agrees best with people, and where the three orders (Pearson,
labels saved, advantage probability) differ and why; and which systems differ (`systems_line`).

What a judge is worth is read from the systems' estimate (`geval.labeling.system_means`, its
`worth`: the labels a judge saves of those each system's mean needs), never computed here. Beside
it stand two simple references: the judge's Pearson with the people's mean over all items, and
within each system (both centred on the system's mean: what corrects a system's mean), so that a
figure that ranks differently from them is said to."""

from __future__ import annotations

import math
from collections import Counter
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from geval.analysis.correlation import MIN_GROUPS
from geval.data.columns import columns as item_columns
from geval.data.items import Item
from geval.decisions import labeling
from geval.decisions.labeling import TOGETHER, Features, SystemMeans
from geval.reporting.document import Bullets, Heading, Text
from geval.errors import GevalError
from geval.store import Store
from geval.wording import counted

#: The tail of an imported judge's label, left out of a sentence where the name alone tells it apart.
IMPORTED = re.compile(r" \(imported from [^()]*\)$")
#: Why the advantage probability may rank judges otherwise than a correlation.
WHY_ADVANTAGE = "which rewards the commonest score and punishes an offset, where a correlation sees neither"


#: An aspect no judge of a report's choice scores.
NONE_HERE = "no judge here scores it (score it, or choose a judge that does)"


def judges_on(found: Features, items: Sequence[Item], aspect: str) -> pd.DataFrame:
    """Every judge column of `found` compared with `aspect` (index: the column, "label: key"): its
    combination (`combo`), its Pearson with the people's mean over the items both have (`pearson`),
    the same within systems (`within`: judge and people each centred on their system's mean), the groups
    (dialogues, documents) of those items (`groups`) and their number (`items`), and whether it gives one score
    throughout (`constant`: it tells no item from another)."""
    found_columns = item_columns(items)
    human = found_columns.mean(aspect)
    systems = pd.Series(found_columns.strings("systems")).fillna("").array
    groups = found_columns.groups
    rows = []
    for column in [c for c, h in found.compared.items() if h.lower() == aspect.lower()]:
        scores = found_columns.placed(found.table[column])  # by place: no lookup table of the items' ids
        both = ~np.isnan(scores) & ~np.isnan(human)
        judge, people, system = pd.Series(scores[both]), pd.Series(human[both]), systems[both]
        rows.append({"column": column, "combo": found.sources.get(column, (column, ""))[0],
                     "pearson": _pearson(judge, people),
                     "within": _pearson(judge - judge.groupby(system).transform("mean"),
                                        people - people.groupby(system).transform("mean")),
                     "groups": len(pd.unique(groups[both])), "items": int(both.sum()),
                     "constant": bool(judge.nunique() <= 1)})
    return pd.DataFrame(rows, columns=["column", "combo", "pearson", "within", "groups", "items", "constant"]
                        ).set_index("column")


def _pearson(x: pd.Series, y: pd.Series) -> float:
    """Pearson's r, NaN below 3 pairs or when either side is constant."""
    if len(x) < 3 or np.ptp(x.to_numpy()) == 0 or np.ptp(y.to_numpy()) == 0:
        return math.nan
    return float(np.corrcoef(x.to_numpy(float), y.to_numpy(float))[0, 1])


def worth_most(worth: pd.DataFrame, constant: Collection[str] = (), among: Collection[str] | None = None) -> str | None:
    """The judge worth most labels: of `worth` (`SystemMeans.worth`: a row per judge, `judge` and
    `saved`), the one with the highest share saved, its `judge` returned. Judges fitted together,
    a judge that gives one score throughout (`constant`, by `judge`: it saves nothing, and would lead
    wherever every real judge saves less than nothing) and one with no figure are never chosen;
    `among`: only the judges of these combinations (by `combo`, their labels: the ones a page has
    chosen). A tie goes to the first in `worth`'s order. None when no judge has a figure, or when every
    figure is exactly 0 (every item labeled: no judge saves anything, and nothing tells them apart)."""
    combos = worth["combo"] if "combo" in worth else worth["judge"]
    candidates = [(judge, saved) for judge, combo, saved in zip(worth["judge"], combos, worth["saved"])
                  if judge != TOGETHER and judge not in constant and (among is None or combo in among)
                  and saved is not None and math.isfinite(saved)]
    if all(saved == 0 for _, saved in candidates):  # every item labeled: nothing to save, nothing to choose by
        return None
    return max(candidates, key=lambda pair: pair[1])[0]  # max keeps the first of equals


def default_means(store: Store, dataset: str, aspect: str, judges: pd.DataFrame, per_system: int | None = None,
                  design: str = "documents", seed: int = 0, items: list[Item] | None = None,
                  among: Collection[str] | None = None) -> SystemMeans:
    """The systems' means on `aspect` (`geval.labeling.system_means`) combined with the judge worth most
    labels there (`worth_most`, of `judges`, `judges_on`'s frame, the constant ones never; of the
    combinations `among` when given). Read first with the judge that agrees best with people within
    systems (the figure's simple reference: most often the one worth most), again with the one worth most
    when it is another. Raises SystemsError as `system_means` does."""
    combos = store.combos(dataset).set_index("label")
    guess = closest(judges, among)

    def read(column: str | None) -> SystemMeans:
        combo = None
        if column is not None and judges.loc[column, "combo"] in combos.index:
            row = combos.loc[judges.loc[column, "combo"]]
            combo = (row["template_version"], row["signature"])
        return labeling.system_means(store, dataset, aspect, combo, False, per_system, design, seed, items=items)

    result = read(guess)
    best = worth_most(result.worth, set(judges.index[judges["constant"]]), among)
    return result if best is None or best == result.judge or best not in judges.index else read(best)


@dataclass
class Aspect:
    """What the bottom line says of one human aspect: the systems' estimate with the judge worth most
    labels (`result`; None with the reason in `error`), each judge's figures (`figures`) and that judge
    (`default`, a row of `figures`; None when labels saved are not read)."""

    aspect: str
    result: SystemMeans | None
    figures: pd.DataFrame
    default: str | None
    error: str = ""


def read(store: Store, dataset: str, items: list[Item], tests: Sequence | None = None,
         per_system: int | None = None, among: Collection[str] | None = None,
         on_progress=lambda message: None) -> tuple[list[Aspect], list[str]]:
    """Every aspect's bottom line material (`Aspect`), in the dataset's order, and a line for each aspect
    left out (categorical). `tests`: the alternative annotator test's results (`geval.alttest.run`);
    `per_system`: the labels per system drawn from the people's scores where they scored every item
    (default: `labeling.default_labels`); `among`: the combinations chosen (their labels)."""
    aspects, left_out = labeling.estimable_aspects(store, dataset, items)
    if not aspects:
        return [], left_out
    found = labeling.features(store, dataset, aspects[0], baselines=(), items=items)
    by_judge = {(t.judge, t.aspect): t for t in tests or () if not t.baseline}
    out = []
    for aspect in aspects:
        on_progress(f"{dataset}: the judge worth most labels on {aspect}")
        judges = judges_on(found, items, aspect)
        if among is not None:
            judges = judges[judges["combo"].isin(list(among))]
        constant = set(judges.index[judges["constant"]])
        if among is not None and judges.empty:  # read with no judge of another choice than the report's
            out.append(Aspect(aspect, None, figures(aspect, judges, None, by_judge), None, NONE_HERE))
            continue
        try:
            result = default_means(store, dataset, aspect, judges, labeling.labels_to_draw(items, aspect, per_system),
                                   items=items, among=among)
        except GevalError as exc:
            out.append(Aspect(aspect, None, figures(aspect, judges, None, by_judge), None, str(exc)))
            continue
        chosen = worth_most(result.worth, constant, among)
        out.append(Aspect(aspect, result, figures(aspect, judges, saved_by(result), by_judge), chosen))
    return out, left_out


def figures(aspect: str, judges: pd.DataFrame, saved: Mapping[str, tuple[float, float]] | None = None,
            tests: Mapping[tuple[str, str], object] | None = None) -> pd.DataFrame:
    """Per judge of `judges` (`judges_on`), the three orders' figures side by side: Pearson over all items
    and within systems (`pearson`, `within`), the share of labels saved and the low end of its 95% interval
    (`saved`, `saved_low`: by combination label, as `saved_by` or `geval.labeling.labels_saved` read them; NaN
    where not read, a low end NaN where there is no interval), and the alternative annotator
    test on `aspect` (`test`: from `tests`, by (combination label, aspect in any case), an `AltTest`, or None;
    `advantage`: its advantage probability)."""
    frame = judges.copy()
    found = [(saved or {}).get(combo, (math.nan, math.nan)) for combo in frame["combo"]]
    frame["saved"] = [float(value) for value, _ in found]
    frame["saved_low"] = [float(low) for _, low in found]
    lowered = {(judge, name.lower()): test for (judge, name), test in (tests or {}).items()}
    frame["test"] = [lowered.get((combo, aspect.lower())) for combo in frame["combo"]]
    frame["advantage"] = [t.advantage_probability if t is not None else math.nan for t in frame["test"]]
    return frame


def closest(judges: pd.DataFrame, among: Collection[str] | None = None) -> str | None:
    """The judge closest to people, the simple reference where no judge's worth can be read: of `judges`
    (`judges_on`'s frame; the constant ones never; of the combinations `among` when given), the highest
    Pearson within systems, else over the items; None when no judge has one."""
    usable = _read_on_enough(judges[~judges["constant"] & (judges["combo"].isin(list(among)) if among is not None
                                                            else True)])
    return _top(usable, "within") or _top(usable, "pearson")


def _read_on_enough(judges: pd.DataFrame) -> pd.DataFrame:
    """The judges whose correlations are read on MIN_GROUPS groups or more (where they have an interval), when any
    is: a judge of 8 items in 2 dialogues led one of every item by a Pearson that says little; else all of them."""
    if "groups" not in judges:
        return judges
    enough = judges[judges["groups"] >= MIN_GROUPS]
    return enough if len(enough) else judges


def default_of(frame: pd.DataFrame) -> str | None:
    """The judge worth most labels among the rows of `figures` (`worth_most`: a constant never)."""
    rows = frame.reset_index()
    return worth_most(rows.rename(columns={rows.columns[0]: "judge"}), set(frame.index[frame["constant"]]))


def saved_by(result: SystemMeans | None) -> dict[str, tuple[float, float]]:
    """The share of labels each judge saves in `result` (its `worth`) and the low end of its 95% interval, by
    combination label."""
    if result is None:
        return {}
    worth = result.worth[result.worth["combo"] != ""] if "combo" in result.worth else result.worth
    return dict(zip(worth["combo"], zip(worth["saved"], worth["saved_low"])))


def sentence(aspect: str, frame: pd.DataFrame, default: str | None, per_system: float | None = None,
             named=str, constant_test=None, why_not: str = "", systems: bool = True, who: str = "people") -> str:
    """The bottom line of one aspect in one sentence (`frame`: `figures`; `default`: the judge worth most
    labels, `worth_most`, a row of `frame`; `per_system`: the labels per system the figure was read at;
    `named`: a judge's name as the reader knows it, from its combination's label; `constant_test`: the
    alternative annotator test of the constant judge on the aspect, if run; `why_not`: why labels saved
    are not read, when they are not; `systems`: False where the dataset has none, its one mean estimated;
    `who`: whom the judges are compared with, `geval.labeling.COMPARED_WITH` of the human side):
    which judge is worth most
    labels and what it saves, whether it may replace an annotator, and where Pearson and the advantage
    probability put another judge first, and why."""
    real = frame[~frame["constant"]]
    if real.empty:  # e.g. a report of some judges only, none of them scoring this aspect
        return f"{aspect}: {NONE_HERE}."
    lead = default if default in real.index else _top(_read_on_enough(real), "pearson")
    if lead is None:
        return (f"{aspect}: no judge here has a correlation with {who} (too few items scored by both, or each "
                "judge gives one score throughout).")
    name, saved = named(real.loc[lead, "combo"]), real.loc[lead, "saved"]
    at = (f" at {per_system:.0f} per system" if systems else f" at {per_system:.0f} labels") if per_system else ""
    mean = "each system's mean" if systems else "the dataset's mean"
    if lead != default or not math.isfinite(saved):
        reason = f": {why_not}" if why_not else ""
        how = f"{_pearson_read(real.loc[lead])}; the labels it saves are not read here{reason}"
        if not real.loc[lead, "pearson"] > 0:  # the closest judge may still go against people
            said = (f"no judge here agrees with {who} (the closest, {name}: {how})" if len(real) > 1
                    else f"{name} does not agree with {who} ({how})")
        else:
            said = f"{name} agrees {'best ' if len(real) > 1 else ''}with {who} ({how})"
    elif saved > 0.005:
        low = real.loc[lead, "saved_low"] if "saved_low" in real else math.nan
        caveat = ("; its 95% interval holds 0: not told apart from the labels alone" if low <= 0 else "" if
                  math.isfinite(low) else f"; no interval: {MIN_GROUPS} labeled groups needed, not yet to rely on")
        said = f"{name} is worth most labels ({saved:+.0%} of those {mean} needs{at}{caveat})"
    else:
        said = f"no judge saves labels{at} (the best, {name}, {saved:+.0%}: the labels alone do as well)"
    return f"{aspect}: " + "; ".join(filter(None, [said, _replaces(real.loc[lead], constant_test),
                                                   _orders(real, lead, named)])) + "."


def _pearson_read(row: pd.Series) -> str:
    """A judge's Pearson as the sentence gives it, with what it rests on where that is fewer groups than an interval
    needs (MIN_GROUPS): a figure of 5 items in 1 dialogue is not read as one of 500 items would be."""
    said = f"Pearson {row['pearson']:.2f}"
    groups, items = row.get("groups"), row.get("items")
    if groups is None or not groups < MIN_GROUPS:
        return said
    on = f"{counted(int(items), 'item')} of " if items is not None and math.isfinite(items) else ""
    kinds = "dialogue or document" if groups == 1 else "dialogues or documents"
    return f"{said} on {on}{int(groups)} {kinds}: too few for an interval (it needs {MIN_GROUPS}), not yet to rely on"


def _top(frame: pd.DataFrame, column: str) -> str | None:
    """The row of the highest finite value of `column` (the first of equals), None when none is finite."""
    values = frame[column].astype(float)
    values = values[np.isfinite(values)]
    return None if values.empty else str(values.idxmax())


def _first(frame: pd.DataFrame, column: str, lead: str, among: pd.DataFrame | None = None) -> str | None:
    """The row of `among` (default: `frame`) that leads on `column` (`_top`), but `lead` where its value is the
    same as shown (two decimals): "X leads (0.82 against 0.82)" would be no lead. None when no value is finite."""
    top = _top(frame if among is None else among, column)
    if top is None or top == lead:
        return top
    return lead if f"{frame.loc[top, column]:.2f}" == f"{frame.loc[lead, column]:.2f}" else top


def _replaces(row: pd.Series, constant_test) -> str:
    """Whether the judge may replace an annotator, in a clause."""
    test = row["test"]
    if test is None:
        return "whether it may replace an annotator is not tested (that needs two annotators per item)"
    if test.passed is None:
        return f"no verdict on whether it may replace an annotator ({'; '.join(test.missing)})"
    beaten = (f"beats {sum(a.rejected for a in test.tested)} of {len(test.tested)} annotators at epsilon "
              f"{test.epsilon:g}, advantage probability {test.advantage_probability:.2f}")
    if not test.passed:
        return f"it may not replace an annotator ({beaten}; it needs half)"
    if constant_test is not None and constant_test.passed:
        return f"it passes the test to replace an annotator ({beaten}), but so does a constant: that says little"
    return f"it may replace an annotator ({beaten})"


def _against(value: float) -> str:
    """What the first judge's figure is set against: "against 0.42", or that it has none (no verdict)."""
    return f"against {value:.2f}" if math.isfinite(value) else "where it has none"


def _orders(frame: pd.DataFrame, lead: str, named) -> str:
    """Where Pearson and the advantage probability put another judge first than `lead`, and why; or that
    they put it first too ("" with one judge)."""
    if len(frame) < 2:
        return ""
    said, same = [], []
    # by Pearson as the lead is chosen where labels saved are not read: among judges read on enough groups
    pearson, advantage = _first(frame, "pearson", lead, _read_on_enough(frame)), _first(frame, "advantage", lead)
    if pearson is not None and pearson != lead:
        said.append(f"by Pearson {named(frame.loc[pearson, 'combo'])} leads ({_pearsons(frame, pearson, lead)})"
                    f"{_why_saved(frame, lead, pearson)}")
    elif pearson is not None:
        same.append("Pearson")
    if advantage is not None and advantage != lead:
        said.append(f"by advantage probability {named(frame.loc[advantage, 'combo'])} leads "
                    f"({frame.loc[advantage, 'advantage']:.2f} {_against(frame.loc[lead, 'advantage'])}), "
                    f"{WHY_ADVANTAGE}")
    elif advantage is not None:
        same.append("the advantage probability")
    if same:
        said.insert(0, f"{' and '.join(same)} put{'s' if len(same) == 1 else ''} it first too")
    return "; ".join(said)


def _pearsons(frame: pd.DataFrame, first: str, lead: str) -> str:
    """The two Pearsons set side by side, "0.60 against 0.55"; with their items where the two rest on different
    numbers of them (a judge of 30 items against one of 60: not a comparison on the same items)."""
    said = f"{frame.loc[first, 'pearson']:.2f} {_against(frame.loc[lead, 'pearson'])}"
    if "items" not in frame or frame.loc[first, "items"] == frame.loc[lead, "items"] \
            or not math.isfinite(frame.loc[lead, "pearson"]):
        return said
    first_items, lead_items = int(frame.loc[first, "items"]), int(frame.loc[lead, "items"])
    return (f"{frame.loc[first, 'pearson']:.2f} on {counted(first_items, 'item')} against "
            f"{frame.loc[lead, 'pearson']:.2f} on {lead_items}: not the same items, so not yet a comparison")


def _why_saved(frame: pd.DataFrame, lead: str, pearson: str) -> str:
    """Why labels saved put `lead` first where Pearson puts another: the agreement within systems ("" when
    labels saved are not read)."""
    r_lead, r_other = frame.loc[lead, "within"], frame.loc[pearson, "within"]
    if not math.isfinite(frame.loc[lead, "saved"]):
        return ""
    if math.isfinite(r_lead) and math.isfinite(r_other) and r_lead >= r_other:
        return (f", but labels saved follow the agreement within systems ({r_lead:.2f} against {r_other:.2f}), "
                "which is what corrects a system's mean")
    return (f", and labels saved do not follow the agreement within systems here ({r_lead:.2f} against "
            f"{r_other:.2f}): check their intervals before choosing")


def systems_line(result: SystemMeans, named=str) -> str:
    """Which systems differ on the aspect, for all pairs together (the ranks' intervals), with the judge
    the estimate reads and the labels per system; or that none can be told apart ("" with one system)."""
    differences = result.differences
    if len(result.table) < 2 or differences.empty:
        return ""
    apart = differences[(differences["simultaneous_low"] > 0) | (differences["simultaneous_high"] < 0)]
    alone = differences[(differences["low"] > 0) | (differences["high"] < 0)]
    judge = named(result.judge.rsplit(": ", 1)[0]) if result.judge != TOGETHER else TOGETHER
    per = result.table["labeled"].median()
    how = f"with {judge} and {per:.0f} labels per system"
    pairs = len(differences)
    if apart.empty:  # those that differ alone named: the sentences beside name only neighbours in rank
        return (f"{result.aspect}: no two of the {len(result.table)} systems can be told apart for all {pairs} pairs "
                f"together {how} ({len(alone)} of {pairs} pairs differ, each pair alone"
                + (f": {_named_pairs(alone)})." if len(alone) else ")."))
    shown = _named_pairs(apart)
    exact = " (every item labeled: the people's own means on these items, not a sample's estimate)" \
        if result.every_item_labeled else ""
    if len(apart) == pairs:
        return f"{result.aspect}: all {pairs} pairs of systems differ{exact} {how}: {shown}."
    return (f"{result.aspect}: {len(apart)} of {pairs} pairs of systems differ for all pairs together{exact} {how}: "
            f"{shown}; the others cannot be told apart.")


def _named_pairs(differences: pd.DataFrame, most: int = 4) -> str:
    """Pairs of systems as "A above B", the first `most` of them and how many more."""
    named = [f"{a} above {b}" if d > 0 else f"{b} above {a}"
             for a, b, d in zip(differences["a"], differences["b"], differences["difference"])]
    return ", ".join(named[:most]) + (f" and {len(named) - most} more" if len(named) > most else "")


def section(what: str, aspects: Sequence[Aspect], left_out: Sequence[str], tests: Sequence | None,
            headline: Sequence = (), who: str = "people") -> list:
    """The report's first part, its bottom line: what was judged (`what`), the main correlation and the
    comparisons' verdicts (`headline`: `geval.reporting.summary.headline`), a sentence per aspect
    (`sentence`), which systems differ (`systems_line`), the aspects left out and why; the test's
    constant judge from `tests` (`geval.alttest.run` with its baseline); `who`: whom the judges are compared with."""
    blocks: list = [Heading("Bottom line"), Text(what), *headline]
    constants = {t.aspect: t for t in tests or () if t.baseline}
    named = short_names([combo for a in aspects for combo in a.figures["combo"]])
    lines = [sentence(a.aspect, a.figures, a.default, _per_system(a.result), named, constants.get(a.aspect), a.error,
                      has_systems(a.result), who) for a in aspects]
    epsilon = next((t.epsilon for t in tests or ()), None)
    if lines:
        blocks += [Text("Per aspect: the judge worth most labels (the one the systems' estimates below read), what it "
                        "saves, whether it may replace an annotator (the alternative annotator test"
                        + (f", epsilon {epsilon:g}" if epsilon is not None else "") + "), and where Pearson and the "
                        "advantage probability put another judge first, and why:"),
                   Bullets(tuple(lines))]
    systems = [line for line in (systems_line(a.result, named) for a in aspects if a.result is not None) if line]
    if systems:
        blocks += [Text("Which systems differ, by the people's standard estimated with that judge:"), Bullets(tuple(systems))]
    blocks += [Text(f"Left out: {line}.") for line in left_out]
    return blocks + [Text("The parts below hold the figures and tables behind it: in the HTML page each is folded, "
                          "open one to read it (its figures are drawn as it opens).")]


def short_names(labels) -> Callable[[str], str]:
    """A judge's name for a sentence, from its combination's label: an imported judge by its own name
    ("gpt-4o" for "gpt-4o (imported from llm_annotations.json)") where that tells it from the others, any
    other by its label."""
    labels = list(dict.fromkeys(labels))
    short = {label: IMPORTED.sub("", label) for label in labels}
    alike = Counter(short.values())
    return lambda label: short.get(label, label) if alike[short.get(label, label)] == 1 else label


def has_systems(result: SystemMeans | None) -> bool:
    """Whether an estimate is of several systems' means (not of the whole dataset's, which has none)."""
    return result is None or not (len(result.table) == 1 and result.table["system"].iloc[0] == "")


def _per_system(result: SystemMeans | None) -> float | None:
    """The labels per system an estimate read (their median), None without one."""
    return float(result.table["labeled"].median()) if result is not None and len(result.table) else None


def defaults_line(aspects: Sequence[Aspect]) -> str:
    """Which judge each aspect's estimate reads, and why, in one line ("" without an estimate)."""
    read = [(a.aspect, a.result.judge.rsplit(": ", 1)[0], a.default is not None) for a in aspects
            if a.result is not None]
    if not read:
        return ""
    return ("Each aspect's estimate reads the judge worth most labels there, as the bottom line says (the most "
            "recently scored where no judge's worth could be read): "
            + "; ".join(f"{aspect}: {judge}" + ("" if worth else " (most recent)") for aspect, judge, worth in read)
            + ".")
