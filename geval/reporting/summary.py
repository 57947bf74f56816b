"""The report's first section, what a supervisor reads in a minute: what was judged, the main
correlation with its interval, the verdict in words (which judge agrees best, whether its interval
rules out chance, the comparisons' verdicts), and the people's own agreement (the ceiling: one
annotator against the mean of the others) with how far each judge is from it."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from geval.analysis.agreement import AVERAGE
from geval.analysis.correlation import reading
from geval.analysis.leaderboard import CEILING, Leaderboard
from geval.analysis.protocols import get_protocol
from geval.data.labels import COMPARED_WITH
from geval.reporting.document import Bullets, Heading, Table, Text
from geval.wording import counted

#: What the ceiling is, and why a judge above it is not shown to judge better than a person.
CAVEAT = ("The judge is read against the mean of all annotators, which is less noisy than one annotator, while each "
          "annotator is read against the mean of the others: a judge at or above this line is not shown to judge "
          "better than a person, and one below it may still be near one.")


@dataclass(frozen=True)
class Judged:
    """What a report judged: the dataset as `Dataset.summary` says it, its items, how many of them
    the judges scored, the judges and the template versions (as the store names them)."""

    dataset: str
    items: int
    judged: int
    judges: Sequence[str]
    templates: Sequence[str]
    annotators: int = 0  # the most annotators an item has on an aspect
    imported: Sequence[tuple[str, str]] = ()  # judges imported from files (no template): (name, file)
    side: str = "people"  # the human side the judges are compared with (`Store.human_side`)


def summary_section(judged: Judged, board: Leaderboard | None, tables: Mapping[str, pd.DataFrame], people: pd.DataFrame,
            metric: str, verdicts: Sequence[str], replacement: Sequence[str] = ()) -> list:
    """The summary's blocks. The figures come from the leaderboard (its first protocol, in that
    protocol's metric) when there is one, else from the agreement `tables` (by combination, in
    `metric`, at their first level); the ceiling from the leaderboard's people row, else from
    `people` (`annotator_agreement`). `verdicts`: the comparisons' sentences; `replacement`: the
    alternative annotator test's, per aspect (`geval.reporting.replacement`)."""
    blocks = [Heading("Summary"), Text(what_was_judged(judged, people))]
    if replacement:
        blocks += [Text("Can the judge replace an annotator? (the alternative annotator test, below)"),
                   Bullets(tuple(replacement))]
    cells, how = _cells(board, tables, people, metric)
    said, level = _headline(judged, cells, how, verdicts)
    return blocks + said + (_ceiling(cells, cells[cells["kind"] == "judge"], level) if level else [])


def headline(judged: Judged, board: Leaderboard | None, tables: Mapping[str, pd.DataFrame], people: pd.DataFrame,
             metric: str, verdicts: Sequence[str], most: int = 3) -> list:
    """The main correlation with its interval and what it means in words, then the comparisons' `verdicts` (or why
    there is no correlation yet): what the report's bottom line says after what was judged, as its summary does.
    More than `most` verdicts (six imported judges compared: 20) are counted, not listed."""
    said = _headline(judged, *_cells(board, tables, people, metric), verdicts if len(verdicts) <= most else ())[0]
    if len(verdicts) > most:
        said.append(Text(f"{len(verdicts)} comparisons of template versions and judges on the same items: the summary "
                         "below lists them."))
    return said


def _headline(judged: Judged, cells: pd.DataFrame, how: str, verdicts: Sequence[str]) -> tuple[list, str | None]:
    """`headline`'s blocks from the summary's cells, and the level of its main result (None when there is none)."""
    judges = cells[cells["kind"] == "judge"]
    if judges["value"].notna().sum() == 0:
        return [Text(f"No correlation with {COMPARED_WITH[judged.side]} to report yet: " + (
            "nothing is judged." if not judged.judged else "no judged aspect has a correlation with a human score "
                                                           "(see the agreement tables below for why)."))], None
    column = AVERAGE if judges.loc[judges["column"] == AVERAGE, "value"].notna().any() else \
        judges.loc[judges["value"].notna(), "column"].iloc[0]
    ranked = judges[judges["column"] == column].dropna(subset=["value"]).sort_values("value", ascending=False)
    best = ranked.iloc[0]
    what = f"the average over its aspects ({best['human']})" if column == AVERAGE else column
    who = COMPARED_WITH[judged.side]
    agrees = f"agrees with {who} at" if best["value"] > 0 else f"does not agree with {who}:"
    blocks = [Text(f"Main result: {best['row']} {agrees} {best['metric']} {_read(best)} on {what}. "
                   f"{how}; read at the {best['level']} level, on {_rests_on(best)}."),
              Text(" ".join(filter(None, (_chance(best, who), _best_of(ranked), _baseline(cells, column)))))]
    if verdicts:
        blocks += [Text("Compared on the same items:"), Bullets(tuple(verdicts))]
    return blocks, best["level"]


def what_was_judged(judged: Judged, people: pd.DataFrame) -> str:
    """What was judged, by which judges and template versions, compared with whom, in one sentence."""
    annotators = int(people["annotators"].max()) if len(people) else judged.annotators
    who = (f"the mean of {annotators} annotators per item" if annotators > 1 else
           "one score per item (no second annotator: how much people agree is not known)")
    if not judged.judged:
        return f"Nothing of the {judged.items} items of {judged.dataset} is judged yet."
    ran = (f"{_listed(judged.judges)}, with {counted(len(set(judged.templates)), 'template version')} "
           f"({_listed(judged.templates)})") if judged.templates else ""
    files = dict.fromkeys(file for _, file in judged.imported)
    imported = "; ".join(f"{counted(len(names), 'judge')} imported from {file} ({_listed(names)})" for file, names in
                         ((file, [name for name, f in judged.imported if f == file]) for file in files))
    return (f"What was judged: {judged.judged} of {judged.items} items of {judged.dataset}. Judged by "
            f"{' and '.join(filter(None, [ran, imported]))}; compared with {who}.")


def _cells(board: Leaderboard | None, tables: Mapping[str, pd.DataFrame], people: pd.DataFrame,
           metric: str) -> tuple[pd.DataFrame, str]:
    """The cells the summary reads (row, kind, column, human, level, metric, value, low, high, n,
    groups, note) and how they were computed, in words."""
    instead = ""
    if board is not None and not board.cells.empty:
        protocol = get_protocol(board.cells["protocol"].iloc[0])
        cells = board.cells[(board.cells["protocol"] == protocol.name) & (board.cells["metric"] == protocol.primary)]
        if cells.loc[cells["kind"] == "judge", "value"].notna().any() or not tables:
            if (cells["kind"] == "ceiling").any():
                return cells, f"Protocol: {protocol.title}"
            return pd.concat([cells, _people_row(people, protocol.primary)], ignore_index=True), \
                f"Protocol: {protocol.title}"
        # e.g. SummEval's per-document and per-system levels on 20 summaries of 9 documents: the tables' level
        instead = f", as the protocol ({protocol.title}) reads no judge here (see the leaderboard below for why)"
    parts = []
    for label, table in tables.items():
        mine = table[table["metric"] == metric]
        mine = mine[mine["level"] == mine["level"].iloc[0]] if len(mine) else mine
        parts.append(mine.assign(row=label, kind="judge", column=mine["human"]))
    return pd.concat([*parts, _people_row(people, metric)], ignore_index=True), f"From the agreement tables{instead}"


def _people_row(people: pd.DataFrame, metric: str) -> pd.DataFrame:
    """The people's leave-one-out correlations as ceiling cells (item level)."""
    mine = people[people["statistic"] == f"leave-one-out {metric}"]
    return pd.DataFrame({"row": CEILING, "kind": "ceiling", "column": mine["human"], "human": mine["human"],
                         "level": "item", "metric": metric, "value": mine["value"], "low": mine["low"],
                         "high": mine["high"], "n": mine["items"], "groups": math.nan, "note": mine["note"]})


def _read(cell: pd.Series) -> str:
    groups = cell.get("groups")
    return reading(cell["value"], cell["low"], cell["high"], cell["level"], cell["n"],
                   None if groups is None or pd.isna(groups) else groups)


def _rests_on(cell: pd.Series) -> str:
    unit = {"item": "items", "group": "groups averaged", "system": "systems"}.get(cell["level"], "items")
    groups = cell.get("groups")
    over = f" in {int(groups)} groups" if cell["level"] == "item" and groups is not None and pd.notna(groups) else ""
    return f"{int(cell['n'])} {unit}{over}"


def _chance(cell: pd.Series, who: str) -> str:
    """Whether the interval rules out chance, in words."""
    if not (math.isfinite(cell["low"]) and math.isfinite(cell["high"])):
        return ("There is no interval to judge it by (too few groups or systems): chance is not ruled out; score more "
                "groups.")
    if cell["low"] > 0:
        return "Its 95% interval lies above 0: the agreement is not chance."
    if cell["high"] < 0:
        return f"Its 95% interval lies below 0: it disagrees with {who}."
    return "Its 95% interval holds 0: these items cannot tell its agreement from chance."


def _best_of(ranked: pd.DataFrame) -> str:
    if len(ranked) < 2:
        return ""
    second = ranked.iloc[1]
    return (f"It is the best of {len(ranked)} judge rows by this figure (next: {second['row']}, "
            f"{second['value']:.3f}); whether a lead is more than chance is for the paired comparisons.")


def _baseline(cells: pd.DataFrame, column: str) -> str:
    baselines = cells[(cells["kind"] == "baseline") & (cells["column"] == column)].dropna(subset=["value"])
    if baselines.empty:
        return ""
    top = baselines.sort_values("value", ascending=False).iloc[0]
    return f"The best baseline by the same figure, {top['row']}, reads {_read(top)}."


def _ceiling(cells: pd.DataFrame, judges: pd.DataFrame, level: str) -> list:
    """Per human aspect: the best judge at the main result's `level` (where the aspect has one there), the people's
    ceiling, and how far apart they are, in words."""
    people = cells[cells["kind"] == "ceiling"].drop_duplicates("human").set_index("human")  # columns may carry a level
    rows, said = [], {"below": 0, "within": 0, "above": 0}
    for aspect in dict.fromkeys(judges.loc[judges["column"] != AVERAGE, "human"]):  # Overall: the mean of aspects
        mine = judges[judges["human"] == aspect].dropna(subset=["value"]).sort_values("value", ascending=False)
        mine = mine[mine["level"] == level] if (mine["level"] == level).any() else mine  # not a system level's 0.40
        if mine.empty:
            continue
        best = mine.iloc[0]
        line = {"human aspect": aspect, "best judge row": best["row"] + ("" if best["column"] == aspect
                                                                       else f" ({best['column']})"),
                "judge": _read(best)}
        if aspect in people.index and pd.notna(people.loc[aspect, "value"]):
            ceiling = people.loc[aspect]
            where = _versus(best["value"], ceiling)
            said[where] += 1
            line |= {"people: one annotator against the others": _read(ceiling),
                     "judge − people": f"{best['value'] - ceiling['value']:+.3f} ({_WHERE[where]})"}
        rows.append(line)
    blocks = [Heading("How far from people", 3)]
    if not sum(said.values()):
        notes = [note for note in people["note"].dropna() if note]
        why = notes[0] if notes else "no people row"
        return blocks + [Text(f"No human ceiling: {why}. Without a second annotator there is no estimate of how much "
                              "people agree, so a judge's correlation cannot be set beside one."),
                         Table(pd.DataFrame(rows))]
    total = sum(said.values())
    parts = [f"{_WHERE[where]} on {'all ' if count == total > 1 else ''}{count} aspect{'' if count == 1 else 's'}"
             for where, count in said.items() if count]
    blocks.append(Text("The human ceiling is how well one annotator agrees with the mean of the others (leave one "
                       f"annotator out). The best judge is {' and '.join(parts)}. {CAVEAT}"))
    return blocks + [Table(pd.DataFrame(rows))]


_WHERE = {"below": "below one annotator", "within": "within one annotator's interval",
          "above": "above one annotator"}


def _versus(value: float, ceiling: pd.Series) -> str:
    low, high = ceiling["low"], ceiling["high"]
    if math.isfinite(low) and math.isfinite(high):
        return "below" if value < low else "above" if value > high else "within"
    return "below" if value < ceiling["value"] else "above"


def _listed(names: Sequence[str]) -> str:
    return ", ".join(dict.fromkeys(names))
