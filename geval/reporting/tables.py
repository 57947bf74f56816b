"""Agreement tables as people read them: value and interval as one text (or why there is
none), several tables stacked, the CSV, HTML and GitHub Markdown tables, p-values, and the
verdict of a comparison in words."""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from geval.analysis.comparison import Comparison
from geval.analysis.correlation import MIN_GROUPS, reading
from geval.data.declared import category_word, labels_in_words
from geval.data.items import Item
from geval.wording import fixed


def number(value: float | None, digits: int = 3) -> str:
    """A value as tables print it: `digits` decimals, "–" when undefined."""
    return "–" if value is None or not np.isfinite(value) else fixed(value, digits)


def readings(table: pd.DataFrame) -> list[str]:
    """Each row of an agreement table as it reads (`geval.analysis.correlation.reading`):
    "0.512 [0.301, 0.690]", "0.512 (no interval: 5 groups)", "n/a (2 groups, 10 needed)"."""
    groups = table["groups"] if "groups" in table else [None] * len(table)
    return [reading(v, lo, hi, level, n, g) for v, lo, hi, level, n, g in
            zip(table["value"], table["low"], table["high"], table["level"], table["n"], groups)]


def display_table(table: pd.DataFrame) -> pd.DataFrame:
    """An agreement table for people: value with its 95% CI as one text column (or why there
    is none), then n, unscored (dropped) and the note. Columns: aspect, human, level, metric,
    value [95% CI], n, unscored, note (plus combo when `table` has it)."""
    shown = pd.DataFrame({
        **({"combo": table["combo"]} if "combo" in table else {}),
        "aspect": table["aspect"], "human": table["human"], "level": table["level"], "metric": table["metric"],
        "value [95% CI]": readings(table),
        "n": table["n"].astype(int), "unscored": table["unscored"].astype(int), "note": table["note"].fillna(""),
    })
    return shown.reset_index(drop=True)


def agreement_csv(table: pd.DataFrame) -> str:
    """An agreement table (or several, stacked) as CSV: the numbers, and beside them the value as
    it reads ("n/a (2 groups, 10 needed)" where the value is withheld, "0.512 (no interval: 5 groups)")."""
    at = list(table.columns).index("metric") + 1 if "metric" in table else 0
    readable = table.copy()
    readable.insert(at, "value [95% CI]", readings(table))
    return readable.to_csv(index=False)


def items_csv(items: Sequence[Item], categories: Mapping[str, Sequence[str]] | None = None) -> str:
    """Items as CSV, one row each: the id, the file's own id, group, system, level, context, response and
    grounding, then per human aspect the people's mean and each annotator's score (a column "Natural [ann]"
    per annotator; "#k" where the file names none: the k-th score of each item). A categorical aspect of
    `categories` (`Store.categories`) reads in words: each annotator's label, and in the aspect's column
    every label of the item (`labels_in_words`: "pass", or "pass 2, fail 1")."""
    categories = categories or {}
    aspects = list(dict.fromkeys(aspect for item in items for aspect in item.human))
    names = {aspect: list(dict.fromkeys(name for item in items for name in item.ratings(aspect))) for aspect in aspects}
    rows = []
    for item in items:
        row = {"id": item.id, "file id": item.source_id, "group": item.group, "system": item.system,
               "level": item.level, "context": "\n".join(turn.render() for turn in item.context),
               "response": item.response, "grounding": item.grounding}
        for aspect in aspects:
            ratings, words = item.ratings(aspect), categories.get(aspect)
            if words:
                row[aspect] = labels_in_words(ratings.values(), words) if ratings else None
                row.update({f"{aspect} [{name}]": category_word(ratings[name], words) if name in ratings else None
                            for name in names[aspect]})
            else:
                row[aspect] = item.human_mean(aspect) if ratings else None
                row.update({f"{aspect} [{name}]": ratings.get(name) for name in names[aspect]})
        rows.append(row)
    return pd.DataFrame(rows).to_csv(index=False)


def stack_tables(tables: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """Agreement tables of several combos as one, with a first column `combo` (the mapping's key)."""
    parts = [table.assign(combo=label)[["combo", *table.columns]] for label, table in tables.items()]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=["combo"])


def html_table(frame: pd.DataFrame) -> str:
    """A pandas table as HTML, every cell escaped."""
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in frame.columns)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(str(v))}</td>" for v in row) + "</tr>"
        for row in frame.itertuples(index=False)
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def markdown_table(frame: pd.DataFrame) -> str:
    """A pandas table as GitHub markdown (pipes, newlines and markup in cells escaped)."""
    def cell(value) -> str:
        return markdown_text(str(value)).replace("|", "\\|").replace("\n", "<br>")

    head = "| " + " | ".join(cell(c) for c in frame.columns) + " |"
    rule = "|" + "|".join("---" for _ in frame.columns) + "|"
    body = ["| " + " | ".join(cell(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join([head, rule, *body])


def curve_table(curve) -> pd.DataFrame:
    """A learning curve (`geval.labeling.LearningCurve`) as people read it: per number of labels,
    the judge alone, the combination fitted on the labels and their difference, each with its 95%
    interval (or why there is none)."""
    points = curve.points

    def read(value, low, high, groups) -> str:
        return reading(value, low, high, "item", 0, groups) if np.isfinite(value) else "–"

    return pd.DataFrame({
        "labels": points["labels"].astype(int), "groups": points["groups"].astype(int),
        "judge alone": [read(*v) for v in zip(points["judge"], points["judge_low"], points["judge_high"],
                                              points["groups"])],
        "fitted combination": [read(*v) for v in zip(points["combined"], points["combined_low"],
                                                     points["combined_high"], points["groups"])],
        "combination − judge": [read(*v) for v in zip(points["difference"], points["low"], points["high"],
                                                      points["groups"])],
        "note": points["note"],
    })


def curve_caption(curve) -> str:
    """What a learning curve (`geval.labeling.LearningCurve`) shows, in a few sentences: what each
    line is, how many points and why (a point every few labels from the 10 a combination is fitted
    on), whether the combination beats the judge, and the curve's notes."""
    points = curve.points
    last = int(points["labels"].max()) if len(points) else 0
    shown = (f"{len(points)} point{'s' if len(points) != 1 else ''}, from 10 labels (the fewest a combination is "
             f"fitted on) to {last}, every 5 labels up to 30 and further apart after"
             + ("; label more to extend it." if len(points) < 5 else "."))
    beats = (f" The combination beats the judge alone (paired interval above 0) from {curve.beats_at} labels on."
             if curve.beats_at else " The combination does not beat the judge alone with a paired interval above 0.")
    notes = "".join(f" {note[:1].upper()}{note[1:]}." for note in curve.notes)
    read = (f"The accuracy against the {curve.aspect} labels (the share of items given the label you gave) of the "
            f"judge alone ({curve.judge}, its nearest label) and of a ridge combination of every judge score and "
            "baseline, rounded to the nearest label," if curve.metric == "accuracy" else
            f"The Pearson correlation with the {curve.aspect} labels of the judge alone ({curve.judge}) and of a ridge "
            "combination of every judge score and baseline,")
    intervals = (": Wilson's for each accuracy (on the labels' number weighed by their groups' design effect), the "
                 "delete-one-group jackknife's for their difference" if curve.metric == "accuracy" else
                 " from the delete-one-group jackknife")
    return (f"{read} each item's value fitted on the other groups' labels only, after each number of labels in the "
            f"order they were given; 95% intervals{intervals} (none below 10 groups). {shown}{beats}{notes}")


def format_p(p: float) -> str:
    """A p-value as reports print it: "< 0.001" below 0.001, "–" when undefined, else three decimals."""
    if p is None or not math.isfinite(p):
        return "–"
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


def markdown_text(text: str) -> str:
    """Text as it goes into Markdown: `&`, `<` and `>` as entities, so that no markup in a
    dataset's text is run or drawn."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def difference_text(c: Comparison) -> str:
    """B − A with its interval, or why there is none: "+0.120 [+0.031, +0.208]"."""
    if math.isfinite(c.low):
        return f"{fixed(c.difference, 3, True)} [{c.low:+.3f}, {c.high:+.3f}]"
    return f"{fixed(c.difference, 3, True)} ({c.note or 'no interval'})"


def verdict(c: Comparison, a: str, b: str, human: str) -> str:
    """A comparison of B with A in one plain sentence: which agrees better with people on
    `human`, or that these items cannot tell them apart (the paired interval of
    B − A holds 0), or that there are too few groups to say; then what prompt searches left out."""
    searched = f" Prompt searches: {c.searched}." if c.searched else ""
    return _verdict(c, a, b, human) + searched


def _verdict(c: Comparison, a: str, b: str, human: str) -> str:
    """`verdict`'s sentence."""
    undefined = [name for name, value in (("A", c.a), ("B", c.b)) if not math.isfinite(value)]
    if undefined:
        return (f"Not decided on {human}: {' and '.join(undefined)} {'has' if len(undefined) == 1 else 'have'} no "
                f"{c.metric} correlation on these {c.n_items} items (the same score for every item, or fewer than "
                "3 scored), so there is no difference to judge.")
    if not math.isfinite(c.low):
        why = (f"with fewer than {MIN_GROUPS} groups there is no interval to judge it by; score more groups"
               if c.n_groups < MIN_GROUPS else (c.note or "the jackknife gave no interval to judge it by"))
        return (f"Not decided on {human}: B − A = {fixed(c.difference, 3, True)} on {c.n_items} items in {c.n_groups} "
                f"group{'' if c.n_groups == 1 else 's'}, "
                f"but {why}.")
    evidence = (f"B − A = {difference_text(c)}, p {_p(c.p)} ({c.metric} {c.b:.3f} against {c.a:.3f}; "
                f"jackknife over {c.n_groups} groups, {c.n_items} items)")
    if c.low > 0:
        return f"B ({b}) agrees better with people on {human} than A ({a}): {evidence}."
    if c.high < 0:
        return f"A ({a}) agrees better with people on {human} than B ({b}): {evidence}."
    return f"No clear difference on {human} between A ({a}) and B ({b}): the interval holds 0; {evidence}."


def _p(p: float) -> str:
    """"= 0.032" or "< 0.001", after a "p"."""
    text = format_p(p)
    return text if text.startswith("<") else f"= {text}"
