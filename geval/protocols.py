"""The published meta-evaluation protocols, as named functions shared by the CLI and the app.

Each protocol says which items it uses (their level), which human aspect each scored
aspect is compared with, at which level the correlation is taken, and which metric the
papers report. Every function takes the scores to evaluate and the items (with their human
scores) and returns one tidy table with bootstrap 95% intervals that resample whole groups
(dialogues, documents; `geval.stats`):

    protocol, aspect, human, level, metric, value, low, high, n, unscored, note

`scores` is a DataFrame indexed by item id with one column per aspect (named as the
protocol names it, e.g. "naturalness", or as the human aspect, e.g. "Natural", any case),
or a Series: one score per item (a baseline metric), compared with every human aspect.

| function | items | correlation |
|---|---|---|
| `topicalchat_turn`, `personachat_turn` | USR responses (turn) | over all responses; Natural, Maintains Context, Engaging, Uses Knowledge, Overall ↔ naturalness, coherence, engagingness, groundedness, overall (G-EVAL, UniEval) |
| `fed_turn`, `fed_dialogue` | FED turns / whole dialogues | over all turns / dialogues, per FED aspect |
| `summeval_summary` | SummEval summaries | per document over its summaries, then the mean over documents (G-EVAL's summary level: Spearman and Kendall) |
| `summeval_system` | SummEval summaries | mean score of each of the 16 systems, then across systems |
| `dstc9_dialogue`, `dstc9_system` | DSTC9 dialogues | over all dialogues / over the 11 system means |
| `mean_vs_overall` | any of the above | seed 000: the mean of the aspect scores against human Overall |
| `average_over_aspects` | any of the above | the mean of the per-aspect correlations (G-EVAL's "average" column) |

A correlation that cannot be computed (constant scores, fewer than two items, groups of
one item) is NaN with a note saying why; it never raises.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from geval.errors import GevalError
from geval.items import Item
from geval.stats import (
    MEAN_OF_ASPECTS,
    METRICS,
    Correlation,
    agreement,
    bootstrap_groups,
    correlate,
    fast_correlate,
    interval_note,
    mean_of_aspects,
    to_frame,
)

COLUMNS = ["protocol", "aspect", "human", "level", "metric", "value", "low", "high", "n", "unscored", "note"]
AVERAGE = "average"


class ProtocolError(GevalError):
    """A protocol cannot be applied: unknown name, no items of its level, or no score maps to its aspects."""


@dataclass(frozen=True)
class Protocol:
    """What a published protocol compares, and how. `aspects` maps the protocol's aspect
    names to the dataset's human aspects; `levels` are `geval.stats` levels."""

    name: str
    title: str
    item_level: str
    aspects: dict[str, str]
    levels: tuple[str, ...]
    metrics: tuple[str, ...]
    primary: str
    reference: str
    overall: str = ""
    layouts: tuple[str, ...] = field(default=())

    def human_for(self, column: str, human_aspects: list[str]) -> str | None:
        """The human aspect a score column is compared with: the protocol's mapping, else a
        human aspect of the same name (any case); None when neither is there."""
        wanted = {k.lower(): v for k, v in self.aspects.items()}.get(column.lower(), column)
        return next((h for h in human_aspects if h.lower() == wanted.lower()), None)

    def aspect_for(self, human: str) -> str:
        """The protocol's name for a human aspect (the human name, lower case, when unmapped)."""
        return next((a for a, h in self.aspects.items() if h.lower() == human.lower()), human.lower())


USR_ASPECTS = {"naturalness": "Natural", "coherence": "Maintains Context", "engagingness": "Engaging",
               "groundedness": "Uses Knowledge", "overall": "Overall"}
FED_TURN_ASPECTS = {a.lower(): a for a in ("Interesting", "Engaging", "Specific", "Relevant", "Correct",
                                            "Semantically appropriate", "Understandable", "Fluent", "Overall")}
FED_DIALOGUE_ASPECTS = {a.lower(): a for a in ("Coherent", "Error recovery", "Consistent", "Diverse", "Depth",
                                                "Likeable", "Understanding", "Flexible", "Informative",
                                                "Inquisitive", "Overall")}
SUMMEVAL_ASPECTS = {a: a for a in ("coherence", "consistency", "fluency", "relevance")}

PROTOCOLS: dict[str, Protocol] = {p.name: p for p in (
    Protocol("topicalchat-turn", "Topical-Chat USR, turn level", "turn", USR_ASPECTS, ("item",), METRICS, "pearson",
             "G-EVAL (Liu et al. 2023) Table 2, after UniEval: correlation over all responses (360 in the full file)",
             "Overall",
             ("usr",)),
    Protocol("personachat-turn", "PersonaChat USR, turn level", "turn", USR_ASPECTS, ("item",), METRICS, "pearson",
             "USR (Mehri & Eskenazi 2020): correlation over all responses (300 in the full file)", "Overall", ("usr",)),
    Protocol("fed-turn", "FED, turn level", "turn", FED_TURN_ASPECTS, ("item",), METRICS, "spearman",
             "FED (Mehri & Eskenazi 2020): correlation over all annotated turns", "Overall", ("fed",)),
    Protocol("fed-dialogue", "FED, dialogue level", "dialogue", FED_DIALOGUE_ASPECTS, ("item",), METRICS,
             "spearman", "FED (Mehri & Eskenazi 2020): correlation over all annotated dialogues", "Overall",
             ("fed",)),
    Protocol("summeval-summary", "SummEval, summary level", "summary", SUMMEVAL_ASPECTS, ("group",),
             ("spearman", "kendall", "pearson"), "spearman",
             "G-EVAL (Liu et al. 2023) Table 1: per document over its 16 summaries, then averaged", "",
             ("summeval",)),
    Protocol("summeval-system", "SummEval, system level", "summary", SUMMEVAL_ASPECTS, ("system",), METRICS,
             "kendall", "SummEval (Fabbri et al. 2021): the 16 systems' mean scores", "", ("summeval",)),
    Protocol("dstc9-dialogue", "DSTC9, dialogue level", "dialogue", {"overall": "overall"}, ("item",), METRICS,
             "spearman", "DSTC9 track 3 interactive evaluation: over all dialogues", "", ("dstc9",)),
    Protocol("dstc9-system", "DSTC9, system level", "dialogue", {"overall": "overall"}, ("system",), METRICS,
             "spearman", "DSTC9 track 3: the 11 systems' mean scores", "", ("dstc9",)),
)}


def get_protocol(name: str) -> Protocol:
    """The protocol called `name`."""
    if name not in PROTOCOLS:
        raise ProtocolError(f"protocol '{name}' is unknown; use one of {', '.join(PROTOCOLS)}")
    return PROTOCOLS[name]


def protocols_for(layout: str, dataset: str = "", levels: list[str] | None = None) -> list[Protocol]:
    """The protocols that apply to a dataset of this loader layout (and name, for USR:
    PersonaChat when the name says so, else Topical-Chat), limited to its item levels."""
    found = [p for p in PROTOCOLS.values() if layout in p.layouts]
    if layout == "usr":
        persona = any(word in dataset.lower() for word in ("persona", "pc_"))
        found = [p for p in found if p.name == ("personachat-turn" if persona else "topicalchat-turn")]
    if levels is not None:
        found = [p for p in found if p.item_level in levels]
    return found


# --- the protocols -------------------------------------------------------------------------


def topicalchat_turn(scores, items: list[Item], humans: Mapping[str, str] | None = None, n_boot: int = 1000,
                     seed: int = 0) -> pd.DataFrame:
    """Topical-Chat USR at turn level, as in G-EVAL's Table 2 (after UniEval): Pearson,
    Spearman and Kendall over all responses, per aspect. Intervals resample contexts."""
    return run_protocol("topicalchat-turn", scores, items, humans, n_boot, seed)


def personachat_turn(scores, items: list[Item], humans: Mapping[str, str] | None = None, n_boot: int = 1000,
                     seed: int = 0) -> pd.DataFrame:
    """PersonaChat USR at turn level: as `topicalchat_turn`, the persona as the grounding."""
    return run_protocol("personachat-turn", scores, items, humans, n_boot, seed)


def fed_turn(scores, items: list[Item], humans: Mapping[str, str] | None = None, n_boot: int = 1000,
             seed: int = 0) -> pd.DataFrame:
    """FED turn level: over all annotated turns, per FED turn aspect. Intervals resample dialogues."""
    return run_protocol("fed-turn", scores, items, humans, n_boot, seed)


def fed_dialogue(scores, items: list[Item], humans: Mapping[str, str] | None = None, n_boot: int = 1000,
                 seed: int = 0) -> pd.DataFrame:
    """FED dialogue level: over all annotated dialogues, per FED dialogue aspect."""
    return run_protocol("fed-dialogue", scores, items, humans, n_boot, seed)


def summeval_summary(scores, items: list[Item], humans: Mapping[str, str] | None = None, n_boot: int = 1000,
                     seed: int = 0) -> pd.DataFrame:
    """SummEval summary level as in G-EVAL: for each document, Spearman and Kendall (and
    Pearson) between the scores of its summaries, then the mean over documents. A document
    whose scores (or human scores) are all equal, or that has one summary, has no
    correlation: it is left out of the mean and counted in the note; `n` is the number of
    documents averaged. Intervals resample documents."""
    return run_protocol("summeval-summary", scores, items, humans, n_boot, seed)


def summeval_system(scores, items: list[Item], humans: Mapping[str, str] | None = None, n_boot: int = 1000,
                    seed: int = 0) -> pd.DataFrame:
    """SummEval system level: each system's mean score over the documents, then one
    correlation across systems (`n` = systems). Intervals resample documents."""
    return run_protocol("summeval-system", scores, items, humans, n_boot, seed)


def dstc9_dialogue(scores, items: list[Item], humans: Mapping[str, str] | None = None, n_boot: int = 1000,
                   seed: int = 0) -> pd.DataFrame:
    """DSTC9 dialogue level: over all dialogues against the human overall score."""
    return run_protocol("dstc9-dialogue", scores, items, humans, n_boot, seed)


def dstc9_system(scores, items: list[Item], humans: Mapping[str, str] | None = None, n_boot: int = 1000,
                 seed: int = 0) -> pd.DataFrame:
    """DSTC9 system level: the mean score of each of the 11 systems, then across systems."""
    return run_protocol("dstc9-system", scores, items, humans, n_boot, seed)


FUNCTIONS = {
    "topicalchat-turn": topicalchat_turn, "personachat-turn": personachat_turn, "fed-turn": fed_turn,
    "fed-dialogue": fed_dialogue, "summeval-summary": summeval_summary, "summeval-system": summeval_system,
    "dstc9-dialogue": dstc9_dialogue, "dstc9-system": dstc9_system,
}


def run_protocol(protocol: str | Protocol, scores, items: list[Item], humans: Mapping[str, str] | None = None,
                 n_boot: int = 1000, seed: int = 0, metrics: tuple[str, ...] | None = None) -> pd.DataFrame:
    """Apply a protocol (by name or object). `humans` may name, per score column, the human
    aspect it is compared with (e.g. a template's `human = ...`), before the protocol's own
    mapping. Only items of the protocol's level that appear in `scores` take part; those
    with no score count as `unscored`. `metrics`: a subset of the protocol's (default all).
    Raises ProtocolError when no column maps to a human aspect of these items."""
    protocol = get_protocol(protocol) if isinstance(protocol, str) else protocol
    metrics = tuple(m for m in protocol.metrics if metrics is None or m in metrics)
    frame, info, pairs = _prepare(protocol, scores, items, humans)
    tables = []
    for column, human in pairs:
        judge, people = frame[column].to_numpy(float), info[f"human:{human}"].to_numpy(float)
        if protocol.levels == ("item",):
            table = _item_level(judge, people, info["group"].to_numpy(), metrics, n_boot, seed)
        else:
            table = to_frame(agreement(judge, people, info["group"].to_numpy(), info["system"].to_numpy(),
                                       levels=protocol.levels, n_boot=n_boot, seed=seed))
        table = table[table["metric"].isin(metrics)]
        place = [(protocol.levels.index(level), protocol.metrics.index(metric))
                 for level, metric in zip(table["level"], table["metric"])]
        table = table.assign(_place=place).sort_values("_place", kind="stable").drop(columns="_place")
        table.insert(0, "human", human)
        table.insert(0, "aspect", _name(protocol, column, human))
        table["unscored"] = int(frame[column].isna().sum())
        tables.append(table)
    return _tidy(protocol, tables)


def mean_vs_overall(scores: pd.DataFrame, items: list[Item], scales: Mapping[str, tuple[float, float]],
                    protocol: str | Protocol = "topicalchat-turn", aspects: list[str] | None = None,
                    overall: str | None = None, humans: Mapping[str, str] | None = None, n_boot: int = 1000,
                    seed: int = 0, metrics: tuple[str, ...] | None = None) -> pd.DataFrame:
    """Seed 000's analysis: the mean of each item's aspect scores against the human Overall.

    `aspects` are the score columns to average (default: every column that maps to a human
    aspect other than Overall), each mapped onto 0-1 by its scale in `scales` ({column: (min,
    max)}) before the mean (`geval.stats.mean_of_aspects`): seed 000 averaged raw scores, all on
    1-5, which is the same up to a linear map. An item missing any aspect's score is unscored.
    Correlation at the protocol's levels.
    """
    protocol = get_protocol(protocol) if isinstance(protocol, str) else protocol
    overall = overall or protocol.overall or "Overall"
    if not isinstance(scores, pd.DataFrame):
        raise ProtocolError("mean_vs_overall needs a table of several aspect scores, one column per aspect")
    human_aspects = _human_aspects(items)
    overall_name = next((h for h in human_aspects if h.lower() == overall.lower()), None)
    if overall_name is None:
        raise ProtocolError(f"the items have no human '{overall}' scores to compare the mean of aspects with; "
                            f"they have {', '.join(human_aspects) or 'none'}")
    mapped = {c: _map(protocol, c, human_aspects, humans) for c in scores.columns}
    chosen = aspects or [c for c, h in mapped.items() if h is not None and h != overall_name]
    missing = [c for c in chosen if c not in scores.columns or c not in scales]
    if missing or len(chosen) < 2:
        raise ProtocolError(f"the mean of aspects needs at least two aspect columns with their scales; "
                            f"missing {missing or chosen}")
    mean = mean_of_aspects(scores, {column: scales[column] for column in chosen})
    table = run_protocol(protocol, mean.to_frame(), items, {MEAN_OF_ASPECTS: overall_name}, n_boot, seed, metrics)
    table["note"] = [f"mean of {', '.join(chosen)}" + ("" if not note else f"; {note}")
                     for note in table["note"]]
    return table


def average_over_aspects(scores: pd.DataFrame, items: list[Item], protocol: str | Protocol = "topicalchat-turn",
                         aspects: list[str] | None = None, metric: str = "pearson",
                         humans: Mapping[str, str] | None = None, n_boot: int = 1000,
                         seed: int = 0) -> pd.DataFrame:
    """The mean of the per-aspect correlations (G-EVAL's "average" column), one row, with a
    95% interval from the same group resamples for every aspect (so it is not the mean of
    the aspects' intervals). Item-level protocols only. `aspects`: the score columns to
    average (default: all that map, Overall excluded). Undefined when any aspect is."""
    protocol = get_protocol(protocol) if isinstance(protocol, str) else protocol
    if protocol.levels != ("item",):
        raise ProtocolError(f"average_over_aspects takes an item-level protocol; {protocol.name} is "
                            f"{', '.join(protocol.levels)} level")
    frame, info, pairs = _prepare(protocol, scores, items, humans)
    overall = (protocol.overall or "").lower()
    pairs = [(c, h) for c, h in pairs if (c in aspects if aspects else h.lower() != overall)]
    if not pairs:
        raise ProtocolError("no aspect to average")
    columns = [(frame[c].to_numpy(float), info[f"human:{h}"].to_numpy(float)) for c, h in pairs]

    def average(rows: np.ndarray) -> float:
        values = []
        for judge, human in columns:
            keep = rows[~(np.isnan(judge[rows]) | np.isnan(human[rows]))]
            values.append(fast_correlate(metric, judge[keep], human[keep]))
        return float(np.mean(values))

    everything = np.arange(len(info))
    value = average(everything)
    low, high = bootstrap_groups(average, info["group"].to_numpy(), n_boot, seed) if math.isfinite(value) \
        else (math.nan, math.nan)
    names = [_name(protocol, c, h) for c, h in pairs]
    note = "; ".join(filter(None, [f"mean over {', '.join(names)}",
                                   "" if math.isfinite(value) else "undefined: an aspect's correlation is",
                                   interval_note(info["group"].to_numpy()) if math.isfinite(value) else ""]))
    row = {"protocol": protocol.name, "aspect": AVERAGE, "human": ", ".join(h for _, h in pairs), "level": "item",
           "metric": metric, "value": value, "low": low, "high": high, "n": len(info),
           "unscored": int(frame[[c for c, _ in pairs]].isna().any(axis=1).sum()), "note": note}
    return pd.DataFrame([row], columns=COLUMNS)


def _item_level(judge: np.ndarray, human: np.ndarray, groups: np.ndarray, metrics: tuple[str, ...], n_boot: int,
                seed: int) -> pd.DataFrame:
    """`geval.stats.agreement` at item level for `metrics` only, its bootstrap through
    `fast_correlate`: the same draws, so the same intervals to rounding, several times faster."""
    keep = ~(np.isnan(judge) | np.isnan(human))
    judge, human, groups = judge[keep], human[keep], np.asarray(groups).astype(str)[keep]
    rows = []
    for metric in metrics:
        value = correlate(metric, judge, human)
        if math.isnan(value):
            rows.append(Correlation(metric, "item", value, math.nan, math.nan, len(judge),
                                    "undefined: constant or too few scores"))
            continue
        low, high = bootstrap_groups(lambda r, m=metric: fast_correlate(m, judge[r], human[r]), groups, n_boot, seed)
        rows.append(Correlation(metric, "item", value, low, high, len(judge), interval_note(groups)))
    return to_frame(rows)


# --- shared steps ------------------------------------------------------------------------------


def _human_aspects(items: list[Item]) -> list[str]:
    return list(dict.fromkeys(a for item in items for a in item.human))


def _map(protocol: Protocol, column: str, human_aspects: list[str], humans: Mapping[str, str] | None) -> str | None:
    if humans and column in humans:
        wanted = humans[column]
        return next((h for h in human_aspects if h.lower() == wanted.lower()), None)
    return protocol.human_for(column, human_aspects)


def _name(protocol: Protocol, column: str, human: str) -> str:
    return column if column == MEAN_OF_ASPECTS else protocol.aspect_for(human)


def _prepare(protocol: Protocol, scores, items: list[Item], humans: Mapping[str, str] | None):
    """The score table on the protocol's items, their info, and the (column, human) pairs."""
    level_items = [item for item in items if item.level == protocol.item_level]
    if not level_items:
        raise ProtocolError(f"{protocol.title}: none of the {len(items)} items is at {protocol.item_level} level")
    human_aspects = _human_aspects(level_items)
    if isinstance(scores, pd.Series):  # one score per item: compared with every aspect of the protocol
        wanted = [h for h in dict.fromkeys(protocol.aspects.values()) if h in human_aspects]
        frame = pd.DataFrame({protocol.aspect_for(h): scores for h in wanted})
        given = {protocol.aspect_for(h): h for h in wanted}
    else:
        frame, given = scores, dict(humans or {})
    by_id = {item.id: item for item in level_items}
    ids = [i for i in frame.index if i in by_id]
    if not ids:
        raise ProtocolError(f"{protocol.title}: no scored item is one of the {len(level_items)} "
                            f"{protocol.item_level}-level items")
    frame = frame.loc[ids].apply(pd.to_numeric, errors="coerce")
    info = pd.DataFrame({
        "group": [by_id[i].group or i for i in ids],
        "system": [by_id[i].system for i in ids],
        **{f"human:{h}": [by_id[i].human_mean(h) for i in ids] for h in human_aspects},
    }, index=ids)
    pairs = [(c, h) for c in frame.columns if (h := _map(protocol, c, human_aspects, given)) is not None]
    if not pairs:
        raise ProtocolError(
            f"{protocol.title}: no score column ({', '.join(map(str, frame.columns))}) maps to a human aspect "
            f"({', '.join(human_aspects)}); name the columns as {', '.join(protocol.aspects)} or pass humans="
        )
    return frame, info, pairs


def _tidy(protocol: Protocol, tables: list[pd.DataFrame]) -> pd.DataFrame:
    table = pd.concat(tables, ignore_index=True)
    table.insert(0, "protocol", protocol.name)
    table["note"] = table["note"].fillna("")
    return table[COLUMNS]

