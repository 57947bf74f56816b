"""A pairwise judge in words, tables and a figure (`geval.analysis.pairwise`): how it answers as the
order of a pair changes, how it agrees with people and with how much they agree with each other, and
each model's win rate from the judge beside the people's. The Agreement page and `geval agree` show
the same sentences (`lines`) and tables.

    import geval
    for found in geval.reporting.pairwise.read_all(store, "mtbench"):
        print(geval.reporting.pairwise.text(found))
"""

from __future__ import annotations

import html
import math

import pandas as pd

from geval.analysis.correlation import MIN_GROUPS
from geval.analysis.grouped import Estimate
from geval.analysis.pairwise import Pairwise, read, read_all, same_order
from geval.data.labels import COMPARED_WITH
from geval.reporting.document import Bullets, Figure, Heading, Table, Text
from geval.reporting.figures import colour
from geval.reporting.how_it_errs import band
from geval.store import Store
from geval.wording import counted

__all__ = ["INTRO", "ZHENG", "agreement_table", "lines", "position_table", "read", "read_all", "report_section",
           "text", "wins_figure", "wins_table"]

#: What the section says before its figures, on the page and in `geval agree`.
INTRO = ("Pairwise judging: every pair is asked in both orders, the second with its responses swapped, and the "
         "judgment is the mean of the two answers' probabilities after swapping back (A and B equally likely: a tie). "
         "Position consistency is the share of pairs with the same winner in both orders; the first-position "
         "preference, of the answers that name a side, the share naming the response shown first (50%: none); the tie "
         "rate, the share of pairs judged a tie. Agreement with people: accuracy with ties, accuracy without them (the "
         "pairs where neither side said tie) and Cohen's kappa, beside the people's with each other. A model's win "
         "rate is the share of its pairs it wins, a tie counting half, from the judge and from the people's votes on "
         "the same pairs. 95% intervals over the questions (or dialogues) the pairs answer, the delete-one-group "
         "jackknife with Student's t; none below 10 of them.")
#: The published reference: GPT-4's consistency under swap on MT-Bench (Zheng et al. 2023, table 2).
ZHENG = "Zheng et al. (NeurIPS 2023) report 65% for GPT-4 on MT-Bench, 46% for GPT-3.5 and 24% for Claude-v1"


def _reads(found: Estimate | None) -> str:
    """A share as a percentage with its interval, or n/a with why."""
    if found is None:
        return "n/a"
    if not math.isfinite(found.value):
        return f"n/a ({found.note})" if found.note else "n/a"
    return found.percent()


def _kappa(found: Estimate) -> str:
    shown = found.reads()
    return f"n/a ({found.note})" if shown.startswith("n/a") and found.note else shown


def position_table(found: list[Pairwise]) -> pd.DataFrame:
    """A row per figure of position, a column per pairwise judge (narrow enough for a page at any number of them):
    the pairs and the questions they answer, consistency, first-position preference, the pairs with the first
    (second) position in both answers, and the tie rate, each with its interval."""
    figures = {"pairs": lambda one: f"{one.positions.pairs} ({one.positions.questions} {one.unit})",
               "consistent under swap": lambda one: _reads(one.positions.consistency),
               "first-position preference": lambda one: _reads(one.positions.first),
               "first position both times": lambda one: _reads(one.positions.both_first),
               "second position both times": lambda one: _reads(one.positions.both_second),
               "ties": lambda one: _reads(one.positions.ties)}
    return pd.DataFrame({"": list(figures),
                         **{one.judge: [figure(one) for figure in figures.values()] for one in found}})


def agreement_table(found: Pairwise) -> pd.DataFrame:
    """The judge against each annotator, their mean and the majority, then the people with each other (with one
    annotator, the majority alone: the three rows would be the same)."""
    one_annotator = len(found.annotators) == 1
    frame = found.agreement.tail(1) if one_annotator else pd.concat([found.agreement, found.people], ignore_index=True)
    if frame.empty:
        return frame
    shown = frame.copy()
    for column in ("accuracy", "accuracy without ties"):
        shown[column] = [_reads(value) for value in frame[column]]
    shown["kappa"] = [_kappa(value) for value in frame["kappa"]]
    return shown


def wins_table(found: Pairwise) -> pd.DataFrame:
    """A row per model: its pairs and questions, its win rate from the judge and from the people."""
    if found.wins.empty:
        return found.wins
    shown = found.wins.copy()
    shown["judge"] = [_reads(value) for value in found.wins["judge"]]
    shown["people"] = [_reads(value) for value in found.wins["people"]]
    return shown.rename(columns={"judge": "win rate: judge", "people": f"win rate: {found.who}",
                                 "questions": found.unit})


def lines(found: Pairwise) -> list[str]:
    """Every sentence of a pairwise judge: positions, agreement with people, win rates."""
    said = _position_lines(found)
    if not found.agreement.empty:
        said += _agreement_lines(found)
    if not found.wins.empty:
        said += _wins_lines(found)
    return said + [f"Note: {note}." for note in dict.fromkeys(found.notes)]


def _position_lines(found: Pairwise) -> list[str]:
    positions = found.positions
    first = positions.first
    if first.above(0.5):
        leaning = "it prefers the position shown first"
    elif first.below(0.5):
        leaning = "it prefers the position shown second"
    elif first.has_interval():
        leaning = "no clear preference for either position (the interval holds 50%)"
    elif first.value in (0.0, 1.0):  # a share of 0 or 1 has no interval on the logit: every answer says it
        leaning = f"it always names the position shown {'first' if first.value else 'second'}"
    else:
        leaning = "too little to say which position it prefers"
    people = (f"; of the labels {found.who} gave, {_reads(found.people_ties)} are ties" if found.people_ties is not None
              and math.isfinite(found.people_ties.value) else "")
    return [
        f"Asked in both orders, the judge names the same winner on {_reads(positions.consistency)} of "
        f"{positions.pairs} pairs ({positions.questions} {found.unit}); {ZHENG}.",
        f"Of its answers that name a side, {_reads(first)} name the response shown first: {leaning}. Both answers "
        f"name the first position on {_reads(positions.both_first)} of the pairs, the second on "
        f"{_reads(positions.both_second)}.",
        f"It judges {_reads(positions.ties)} of the pairs a tie{people}."]


def _agreement_lines(found: Pairwise) -> list[str]:
    rows = found.agreement.set_index("with")
    majority, mean = rows.loc[found.against], rows.loc["each annotator, mean"]
    said = [f"Against {found.against} ({counted(int(majority['pairs']), 'pair')} with a clear one): accuracy "
            f"{_reads(majority['accuracy'])}, {_reads(majority['accuracy without ties'])} without ties "
            f"({counted(int(majority['pairs without ties']), 'pair')}), Cohen's kappa {_kappa(majority['kappa'])}"
            + (f", {band(majority['kappa'].value)} on Landis and Koch's scale" if math.isfinite(majority["kappa"].value)
               else "") + "."]
    if not found.people.empty:
        people = found.people.iloc[-1]
        said.append(f"Against one annotator the judge reaches accuracy {_reads(mean['accuracy'])} "
                    f"({_reads(mean['accuracy without ties'])} without ties) and kappa {_kappa(mean['kappa'])} on "
                    f"average; two annotators reach {_reads(people['accuracy'])} "
                    f"({_reads(people['accuracy without ties'])} without ties) and kappa {_kappa(people['kappa'])} "
                    "with each other.")
    return said


def _wins_lines(found: Pairwise) -> list[str]:
    alike, swaps = same_order(found.wins)
    count = len(found.wins)
    # said first: a model's win rate is over the models it met, so two models are ordered whether or not they met
    order = ("A win rate here is a share of the model's pairs against the models it met, not a ranking against one "
             "common opponent. ")
    if alike:
        order += f"The judge's win rates order the {count} models as {found.who} do."
    else:
        shown = "; ".join(swaps[:3]) + (f" and {len(swaps) - 3} more" if len(swaps) > 3 else "")
        pairs = count * (count - 1) // 2
        order += (f"The judge's win rates order the models otherwise than {found.who} do: "
                  + (f"of the {pairs} pairs of models, met or not, {len(swaps)} {'is' if len(swaps) == 1 else 'are'} "
                     "ordered the other way round" if pairs > 1 else "the two are ordered the other way round")
                  + f" (the judge's rates put {shown}; the table has each win rate with its interval).")
    without = sum(min(row.judge.groups, row.people.groups) < MIN_GROUPS for row in found.wins.itertuples())
    if without:  # an order of point estimates: no finding
        order += (f" {without} of the {count} models' win rates rest on fewer than {MIN_GROUPS} questions, too few "
                  "for an interval: "
                  f"{'both orders are' if alike else 'these are'} their point estimates' orders, not a finding.")
    return [order]


def text(found: Pairwise) -> str:
    """The sentences and tables of one pairwise judge, for a terminal."""
    parts = [f"Pairwise: {found.judge} ({found.aspect}" + (f" vs {found.human}" if found.human else "") + ")",
             *(f"  {line}" for line in lines(found)),
             position_table([found]).to_string(index=False)]
    table = agreement_table(found)
    if not table.empty:
        parts.append(table.to_string(index=False))
    wins = wins_table(found)
    if not wins.empty:
        parts.append(wins.to_string(index=False))
    return "\n".join(parts)


def wins_figure(found: Pairwise, title: str | None = None):
    """Each model's win rate from the judge and from the people (`Pairwise.who`), with their 95% intervals, under
    `title` (default: "Win rates: judge and people")."""
    import plotly.graph_objects as go

    figure = go.Figure()
    models = list(found.wins["model"])
    title = title or f"Win rates: judge and {found.who}"
    for index, (name, column) in enumerate((("judge", "judge"), (found.who, "people"))):
        values = list(found.wins[column])
        x = [v.value for v in values]
        plus = [v.high - v.value if v.has_interval() else 0.0 for v in values]
        minus = [v.value - v.low if v.has_interval() else 0.0 for v in values]
        figure.add_trace(go.Scatter(
            x=x, y=[html.escape(m) for m in models], mode="markers", name=name,
            marker={"color": colour(2 * index), "size": 10, "symbol": "circle" if index == 0 else "diamond"},
            error_x={"type": "data", "symmetric": False, "array": plus, "arrayminus": minus},
            hovertemplate=f"{name}: %{{x:.0%}}<br>%{{y}}<extra></extra>"))
    figure.update_layout(title={"text": html.escape(title)}, xaxis={"title": "win rate (a tie counts half)",
                                                                      "range": [-0.04, 1.04], "tickformat": ".0%",
                                                                      "tickvals": [0, 0.2, 0.4, 0.6, 0.8, 1]},
                         yaxis={"autorange": "reversed"}, height=max(300, 80 + 40 * len(models)),
                         margin={"t": 50}, legend={"orientation": "h", "y": -0.3})
    figure.add_vline(x=0.5, line_dash="dot", line_color="#888")
    return figure


def report_section(store: Store, dataset: str, figures: bool = True) -> list:
    """The report's section of the pairwise judges scored on `dataset` (`read_all`): per judge the
    sentences, tables and win rates' figure the Agreement page shows; [] where there is none."""
    found = read_all(store, dataset)
    if not found:
        return []
    out = [Heading(f"Pairwise judging: position, agreement with {COMPARED_WITH[store.human_side(dataset)]}, win rates"),
           Text(INTRO)]
    for one in found:
        label = f"{one.judge} ({one.aspect}" + (f" vs {one.human}" if one.human else "") + ")"
        out += [Heading(label, 3), Bullets(tuple(lines(one))), Table(position_table([one]))]
        out += [Table(table) for table in (agreement_table(one), wins_table(one)) if not table.empty]
        if figures and not one.wins.empty:
            out.append(Figure(wins_figure(one), f"{label}: win rates from judge and {one.who}"))
    return out
