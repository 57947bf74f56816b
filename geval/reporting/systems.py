"""Systems as people would score them (`geval.labeling.system_means`), as the Agreement page and
the report show them: a forest plot of each system's three estimates (the labels alone, the labels
and the judge combined, the judge alone), the table in words, the judges by the labels they save
beside their agreement with people within systems and the alternative annotator test's advantage
probability, and the report's section."""

from __future__ import annotations

import math
from collections.abc import Callable

import pandas as pd

from geval.analysis.correlation import MIN_GROUPS
from geval.decisions import alttest, labeling
from geval.errors import GevalError
from geval.reporting.document import Bullets, Figure, Heading, Table, Text
from geval.reporting.figures import COLOURS, standalone
from geval.reporting.names import Names
from geval.store import Store

def worth_words(result: labeling.SystemMeans | None = None) -> str:
    """What the effective labels are, in words (of the systems of `result`; None: systems in general)."""
    whole = result is not None and len(result.table) == 1 and result.table["system"].iloc[0] == ""
    within = "" if whole else " within a system"
    return (f"the labels alone that would give the combined estimate's variance, from the share of people's "
            f"scores{within} the judge explains: a judge that agrees better with people{within} is worth more")


METHOD = ("The mean {who} would give each system, estimated from {whose} of a few items and the judge's "
          "score of every item (prediction-powered inference: the judge's mean over all the system's items, corrected "
          "by its error on the labeled ones, the judge's weight fitted on them: PPI++). Beside it, {whose} "
          "alone, and the judge's own mean, which is biased by an unknown amount (no interval is "
          "claimed for it). The 95% intervals, for these labels: Student's t with a label added at each end of the "
          "scale, for a mean drawn without replacement, the narrowest whose coverage held for every single system in "
          "simulation, however skewed the scores (a textbook normal interval does not; docs/statistics.md). "
          "Effective labels: " + worth_words() + ".")


def _interval(value: float, low: float, high: float, digits: int = 2) -> str:
    if not math.isfinite(value):
        return "n/a"
    return f"{value:.{digits}f} [{low:.{digits}f}, {high:.{digits}f}]" if math.isfinite(low) else f"{value:.{digits}f}"


def _effective(row) -> str:
    """A judge's effective labels [95%] (a row of `SystemMeans.worth`), saying why an interval is missing."""
    shown = _interval(row.effective, row.effective_low, row.effective_high, 0)
    if math.isfinite(row.effective) and not math.isfinite(row.effective_low):
        shown += f" (no interval: {MIN_GROUPS} labeled groups needed)"
    return shown


def _estimate(row, name: str, whole: bool) -> str:
    """A system's estimate `name` ("people", "combined") [95%] of a row of `SystemMeans.table`; of a system whose every
    item is labeled (`whole`), the people's own mean, without an interval (one of no width read as an estimate)."""
    low, high = (math.nan, math.nan) if whole else (getattr(row, f"{name}_low"), getattr(row, f"{name}_high"))
    return _interval(getattr(row, name), low, high)


def systems_table(result: labeling.SystemMeans) -> pd.DataFrame:
    """One row per system as text: labels, the people-only and the combined interval, the judge's
    own mean (on the people's scale: `SystemMeans.judge_alone`), the people's mean over every item
    when they scored all of them."""
    table = result.table
    shown = pd.DataFrame({
        "system": table["system"].replace("", "all items"),
        "labels": [f"{k} of {n}" for k, n in zip(table["labeled"], table["items"])],
        "people only": [_estimate(r, "people", whole) for r, whole in zip(table.itertuples(), result.whole())],
        "combined": [_estimate(r, "combined", whole) for r, whole in zip(table.itertuples(), result.whole())],
        result.judge_alone_words(): [f"{v:.2f}" if math.isfinite(v) else "n/a: none of its items judged"
                                     for v in result.judge_alone()],
        "more labels for ±0.10": [_more(labeling.more_labels(row), row["items"] - row["labeled"])
                                  for _, row in table.iterrows()]})
    if table["truth"].notna().all():
        shown["people, every item"] = [f"{v:.2f}" for v in table["truth"]]
    return shown


def _more(count: int | None, left: int) -> str:
    """`more_labels` in words; where it takes every item left ("about 3" of 3 left read as if 3 would do), that the
    mean is then exact (every row's "all 5 left" read as a count with no end)."""
    if count is None:
        return "all labeled"
    return "reached" if count == 0 else f"all {left} left, then exact" if count >= left else f"about {count}"


def worth_table(result: labeling.SystemMeans, advantage: dict[tuple[str, str], float] | None = None,
                names: Callable[[str], str] | None = None) -> pd.DataFrame:
    """The judges by the labels they are worth on this aspect: labels, effective labels [95%], saved,
    their Pearson with people within systems (pooled; several together: the multiple correlation),
    beside each one's advantage probability in the alternative annotator test (`advantage`, by
    (combination label, human aspect), the aspect in any case; "–" where it was not run). A judge is
    named by its combination (`names`: made readable, e.g. `judge_names`; then its full name in the
    last column, where that says more than its aspect), its own aspect's name added only where one combination
    has two."""
    worth = result.worth
    combos = list(worth["combo"]) if "combo" in worth else [""] * len(worth)
    twice = {c for c in combos if c and combos.count(c) > 1}
    named = [(names(c) if names else c) + (f": {k}" if c in twice else "") if c else j
             for c, j, k in zip(combos, worth["judge"], worth.get("key", worth["judge"]))]
    every = result.every_item_labeled
    shown = pd.DataFrame({
        "judge": named, "labels": worth["labels"],
        "effective labels": ["– (every item labeled)" if every else _effective(r) for r in worth.itertuples()],
        "saved": ["–" if every else f"{v + 0.0:+.0%}" if math.isfinite(v) and round(v, 2) else
                  "+0%" if math.isfinite(v) else "n/a" for v in worth["saved"]],
        "Pearson within systems": [f"{v:.2f}" if math.isfinite(v) else "n/a" for v in worth["within"]]})
    if worth.get("unscored", pd.Series(dtype=int)).any():  # a judge of a few items: the rest read as its means
        items = int(result.table["items"].sum())
        shown["items it scored"] = [f"all {items}" if not m else f"{items - m} of {items} (the rest read as its "
                                    "system's mean)" for m in worth["unscored"]]
    if advantage is not None:
        lowered = {(judge, aspect.lower()): value for (judge, aspect), value in advantage.items()}
        found = [lowered.get((c, result.aspect.lower())) for c in combos]
        shown["advantage probability"] = ["–" if v is None else f"{v:.2f}" if math.isfinite(v) else "n/a" for v in found]
    if any(full.rsplit(": ", 1)[0] != name for full, name in zip(worth["judge"], shown["judge"])):
        shown["judge in full"] = worth["judge"]  # not where it would add only the judge's aspect (cut at the edge)
    return shown


def saved_line(result: labeling.SystemMeans) -> str:
    """Why a judge saves fewer than 0 labels, in words, when one does ("" otherwise)."""
    below = [v for v in result.worth["saved"] if math.isfinite(v) and v < -0.005]
    if not below:
        return ""
    systems = len(result.table) > 1 or (len(result.table) == 1 and result.table["system"].iloc[0] != "")
    return ("Below 0 saved: the labels alone do better than with the judge. It explains about none of people's "
            "scores" + (" within a system" if systems else "") + ", less than the weight fitted to it costs; a judge "
            "saves the more labels the more of them it explains.")


def judge_names(store: Store, dataset: str) -> Callable[[str], str]:
    """Each scored combination's readable name (a template by its name and its version's comment, a
    judge by its model), from its label: what `worth_table` shows."""
    return Names(store.combos(dataset), store.template_comments())


def ranking_table(result: labeling.SystemMeans) -> pd.DataFrame:
    """The systems by their combined estimate, with the ranks each may hold (for all pairs together)."""
    ranked = result.ranking
    return pd.DataFrame({"rank": ranked["rank"], "system": ranked["system"],
                         "combined": [f"{v:.2f}" for v in ranked["combined"]],
                         "may rank": [f"{a}" if a == b else f"{a}-{b}"
                                      for a, b in zip(ranked["best_rank"], ranked["worst_rank"])]})


def systems_forest(result: labeling.SystemMeans):
    """Per system, its three estimates: the people-only and the combined 95% interval, the judge's
    own mean (a cross: biased, no interval; its scale mapped onto the people's), and the people's mean over
    every item when known."""
    import plotly.graph_objects as go

    table = result.table.iloc[::-1]
    names = list(table["system"].replace("", "all items"))
    figure = go.Figure()
    for offset, (side, title, color) in enumerate((("people", "people only", COLOURS[1]),
                                                   ("combined", f"combined with {result.judge}", COLOURS[0]))):
        figure.add_trace(go.Scatter(
            x=table[side], y=names, mode="markers", name=title, marker={"color": color, "size": 9},
            error_x={"type": "data", "symmetric": False, "array": table[f"{side}_high"] - table[side],
                     "arrayminus": table[side] - table[f"{side}_low"], "color": color},
            offsetgroup=str(offset)))
    figure.add_trace(go.Scatter(x=result.judge_alone().iloc[::-1], y=names, mode="markers",
                                name=result.judge_alone_words(),
                                marker={"color": COLOURS[2], "symbol": "x", "size": 9}))
    if table["truth"].notna().all():
        figure.add_trace(go.Scatter(x=table["truth"], y=names, mode="markers", name="people, every item",
                                    marker={"color": COLOURS[4], "symbol": "diamond-open", "size": 10}))
    # the legend below the axis' title, with a line of room per entry (its long names wrap one to a line): in a
    # plot's height of one system it overlapped the axis and, cut, drew a scroll bar
    plot, below = 60 + 28 * len(names), 60 + 22 * len(figure.data)
    figure.update_layout(scattermode="group", height=30 + plot + below,
                         xaxis_title=f"{result.aspect}, the people's scale",
                         legend={"orientation": "h", "yanchor": "top", "y": -55 / plot, "x": 0},
                         margin={"l": 10, "r": 10, "t": 30, "b": below})
    figure.update_xaxes(range=[result.scale[0] - 0.05, result.scale[1] + 0.05])
    return figure


def systems_section(store: Store, dataset: str, on_progress: Callable[[str], None], per_system: int | None = None,
                    figures: bool = True, results: dict | None = None, advantage: dict | None = None) -> list:
    """The report's section "Systems as people would score them": per aspect a judge is compared
    with, the forest plot, the table, the ranking and a sentence per neighbouring pair, and the
    judges by the labels they save beside their advantage probability (a categorical aspect left
    out, with a line saying why). Where people scored every item, what `per_system` labels per
    system (default: `labeling.default_labels`; a document at a time) would give, the truth beside.
    `results`: each aspect's estimate already made (a `SystemMeans`, or the GevalError it raised), by
    aspect; `advantage`: the advantage probabilities already found (default: at the skilled epsilon).
    Empty without a judge."""
    on_progress(f"{dataset}: systems as people would score them")
    items = store.items(dataset)
    aspects, left_out = labeling.estimable_aspects(store, dataset, items)
    if not aspects and not left_out:
        return []
    try:
        advantage = advantage if advantage is not None else {
            (r.judge, r.aspect): r.advantage_probability
            for r in alttest.run(store, dataset, epsilon=alttest.EPSILONS["skilled"])}
    except GevalError:
        advantage = {}
    who, whose = labeling.SCORERS[store.human_side(dataset)]  # your labels: the mean you would give
    blocks = [Heading(f"Systems as {who} would score them"), Text(METHOD.format(who=who, whose=whose))] + [
        Text(line) for line in left_out]
    for aspect in aspects:
        try:
            result = (results or {}).get(aspect) or labeling.system_means(
                store, dataset, aspect, per_system=labeling.labels_to_draw(items, aspect, per_system),
                design="documents", items=items)
            if isinstance(result, GevalError):
                raise result
        except GevalError as exc:
            blocks.append(Text(f"{aspect}: {exc}"))
            continue
        blocks += [Heading(aspect, 3), Bullets(tuple(result.notes))] if result.notes else [Heading(aspect, 3)]
        if figures:
            blocks.append(Figure(standalone(systems_forest(result)), f"{aspect}: each system's three estimates"))
        blocks += [Table(systems_table(result)), Text("The judges by the labels they are worth here (the alternative "
                                                      "annotator test's advantage probability beside):"),
                   Table(worth_table(result, advantage))]
        if line := saved_line(result):
            blocks.append(Text(line))
        if len(result.table) > 1:
            blocks += [Table(ranking_table(result)), Text(result.pairs_line()), Bullets(tuple(result.sentences()))]
    judged = [a for a in labeling.pass_aspects(store, dataset, items) if any(line.startswith(f"{a} is categorical")
                                                                             for line in left_out)]
    for aspect in judged:  # a pass/fail aspect: each system's pass rate instead of a mean, as on the page
        try:
            rates = labeling.pass_rates(store, dataset, aspect,
                                        per_system=labeling.labels_to_draw(items, aspect, per_system), items=items)
        except GevalError as exc:
            blocks.append(Text(f"{aspect}: {exc}"))
            continue
        blocks += [Heading(rates.title(), 3), Text(rates.source_line()), *(Text(note) for note in rates.means.notes),
                   Table(rates.table()), Text(rates.judge_line())]
    return blocks if len(blocks) > 2 else []
