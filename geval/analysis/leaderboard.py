"""The metric leaderboard: judges and baselines side by side, by their agreement with people.

Rows are the scored judge/template versions of a dataset (each with its signature), the
baseline metrics of `geval.baselines` (each with its signature and the reference it used),
and the people themselves (leave-one-annotator-out, the ceiling). Columns are dataset x
human aspect, plus per dataset the average over the aspects (G-EVAL's "average") and, for
judges with several aspects, seed 000's mean of the aspect scores against human Overall.
Each cell is the protocol's correlation with its bootstrap 95% interval over groups.

Single-aspect templates scored by the same judge and named alike (G-EVAL's one prompt per
aspect: topicalchat-naturalness, topicalchat-coherence, ... read as "topicalchat-*") are read
together as one row; a second version of the same aspect gets a row of its own. Baselines
and people are computed on the items the judges scored (every item when none has), so the
rows rest on the same items.

Every judge row is also compared with one row of reference (by default G-EVAL's one prompt per
aspect), pairwise on the items both scored: `Leaderboard.paired` holds, per column, the
difference in the protocol's metric with a paired interval over groups and a p-value
(`versus()`: the judge rows; `versus(supervised=True)`: the label-using rows, apart, the best
said to be the best of k, their intervals treating the fitted predictions as fixed).

Rows that are the judge but not the judge alone say what they are (`Row.caveat`, the rows
table's `caveat`), wherever rows are read against goals: a few-shot template shows other groups'
items with their human scores in every prompt; a pair ensemble is one of k pairs, so the best of
them is the best of k.

Rows that use the human labels (calibrated rows, learned combinations "+ baselines": kind
SUPERVISED) are fitted on other folds' groups only, but they are not the judge: they sit in a
section of their own (`Leaderboard.wide(supervised=True)`), are never read against a judge's goals,
and their intervals treat the held-out predictions as fixed (no refit within the jackknife),
which their notes say. The best of them says of how many it is the best (`best_of`).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from geval.analysis.agreement import AVERAGE, MEAN_OF_ASPECTS, correlations, judge_scores, mean_of_aspects
from geval.analysis.annotators import annotator_agreement
from geval.analysis.baselines import METRICS as BASELINES
from geval.analysis.baselines import Embedder, compute_baselines
from geval.analysis.calibration import CalibrationError, calibrate_scores, combine_aspects, cross_validated
from geval.analysis.comparison import paired_columns
from geval.analysis.correlation import difference_reading, reading
from geval.analysis.held_out import held_out, searched_versions
from geval.analysis.likelihood import LanguageModel
from geval.analysis.protocols import (
    GENERIC,
    PROTOCOLS,
    Protocol,
    ProtocolError,
    computable_levels,
    generic,
    get_protocol,
    protocols_for,
    why_not_computable,
)
from geval.analysis.variants import VARIANTS, VariantError
from geval.data.columns import columns as item_columns
from geval.errors import GevalError, StoreError
from geval.judging.judgment import judge_name, told_apart
from geval.store import Store
from geval.wording import counted

CEILING = "people (leave-one-annotator-out)"
#: The kind of a row that uses the human labels (fitted on other folds' groups): not the judge alone.
SUPERVISED = "supervised"
#: Row kinds that a judge's answers make (the judge alone, or fitted on labels): they have a mean of aspects.
JUDGED = ("judge", SUPERVISED)
#: What a label-using row's note says of its interval.
FIXED_FIT = ("its interval treats the held-out predictions as fixed: it does not include refitting, so it is "
             "narrower than the fit's own uncertainty")
#: A cell a row does not have (an aspect its judge does not score; the people's average), in `Leaderboard.wide`.
NO_CELL = "–"
#: How an average over fewer aspects than its table's other rows reads (its value withheld).
PARTIAL = "n/a (over"
ROW_COLUMNS = ["row", "kind", "reference", "signature", "signature_json", "note", "caveat"]
LONG_COLUMNS = ["row", "kind", "dataset", "protocol", "column", "aspect", "human", "level", "metric", "value", "low",
                "high", "n", "groups", "unscored", "note"]
PAIRED_COLUMNS = ["row", "against", "dataset", "protocol", "column", "level", "metric", "a", "b", "difference", "low",
                  "high", "p", "n", "groups", "note", "kind"]
#: What a few-shot row says of itself wherever it is read against a judge's goals.
FEW_SHOT = "few-shot: every prompt shows other groups' items with their human scores (it uses labels)"
#: The row of reference for the paired comparisons unless another is named (its label starts so).
ONE_PROMPT_PER_ASPECT = "G-EVAL, one prompt per aspect"


@dataclass
class Row:
    """One leaderboard row: what is scored, how, and its signatures (string and JSON)."""

    label: str
    kind: str  # "judge", SUPERVISED (uses human labels), "baseline" or "ceiling"
    signatures: list[str]
    signatures_json: list[dict]
    scores: pd.DataFrame | pd.Series | None = None
    humans: dict[str, str] = field(default_factory=dict)
    scales: dict[str, tuple[float, float]] = field(default_factory=dict)
    reference: str = ""
    note: str = ""
    calibration: str = ""  # "" or the method of `geval.calibration` whose held-out scores these are
    folds: int = 0
    uncalibrated: pd.DataFrame | None = None  # a calibrated row's judge scores, for its learned combination
    parts: pd.DataFrame | None = None  # a judge's answers to checklist questions, its batch orders (`JudgeScores.parts`)
    caveat: str = ""  # what a judge row is beyond the judge alone: few-shot, one of k pair ensembles


@dataclass
class Leaderboard:
    """The long table of every cell, the rows with their signatures, and what was left out."""

    datasets: list[str]
    cells: pd.DataFrame
    rows: pd.DataFrame
    skipped: list[str] = field(default_factory=list)
    paired: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=PAIRED_COLUMNS))
    fallback: list[str] = field(default_factory=list)  # datasets read at other levels than their protocol's, and why

    def versus(self, digits: int = 3, supervised: bool = False) -> pd.DataFrame:
        """Judge rows x columns of their paired difference with the row of reference:
        "+0.060 [-0.011, +0.128] p 0.10" (B minus the reference; "n/a" where undefined), with each
        row's `caveat`. `supervised`: the rows that use the human labels instead, with a column
        `chosen` naming the best of them "best of k" (`best_of`)."""
        paired = self.paired[(self.paired["kind"] == SUPERVISED) == supervised]
        if paired.empty:
            return pd.DataFrame(columns=["row", "against"])
        text = [difference_reading(d, lo, hi, p, digits) for d, lo, hi, p in
                zip(paired["difference"], paired["low"], paired["high"], paired["p"])]
        table = paired.assign(cell=text).pivot_table(index=["row", "against"], columns="column", values="cell",
                                                     aggfunc="first", sort=False)
        table = table.reindex(columns=list(dict.fromkeys(paired["column"]))).fillna("").reset_index()
        if supervised:
            best = self.best_of()
            table.insert(2, "chosen", [f"best of {best[1]}" if best and row == best[0] else "" for row in table["row"]])
        else:
            caveats = self.rows.set_index("row")["caveat"]
            table.insert(2, "caveat", [caveats.get(row, "") for row in table["row"]])
        return table

    def wide(self, metric: str | None = None, digits: int = 3, supervised: bool | None = None) -> pd.DataFrame:
        """Rows x columns of 'value [low, high]' text (or why there is none: "n/a (2 groups, 10 needed)",
        "0.512 (no interval: 5 groups)"; `geval.analysis.correlation.reading`; NO_CELL where the row has no such
        cell), in the
        protocol's primary metric (or `metric`), with the kind, reference and signature of each
        row. `supervised`: True for the rows that use the human labels only, False for the others
        (judges alone, baselines, people), None for all."""
        cells = self._pick(metric)
        text = [note.split(":")[0] if note.startswith(PARTIAL) else reading(v, lo, hi, level, n, groups, digits)
                for v, lo, hi, level, n, groups, note in zip(cells["value"], cells["low"], cells["high"], cells["level"],
                                                             cells["n"], cells["groups"], cells["note"])]
        table = cells.assign(cell=text).pivot_table(index="row", columns="column", values="cell", aggfunc="first",
                                                   sort=False)
        rows = self.rows if supervised is None else self.rows[(self.rows["kind"] == SUPERVISED) == supervised]
        table = table.reindex(index=list(rows["row"]), columns=list(dict.fromkeys(cells["column"])))
        info = rows.set_index("row")[["kind", "reference", "signature"]]
        return info.join(table.fillna(NO_CELL)).reset_index()

    def best_of(self) -> tuple[str, int] | None:
        """The label-using row ranked first (by its first average, as the rows are ordered) and how
        many such rows it was chosen among; None when there are none."""
        rows = list(self.rows.loc[self.rows["kind"] == SUPERVISED, "row"])
        return (rows[0], len(rows)) if rows else None

    def values(self, metric: str | None = None) -> pd.DataFrame:
        """Rows x columns of the correlation values only (NaN where empty or undefined)."""
        cells = self._pick(metric)
        table = cells.pivot_table(index="row", columns="column", values="value", aggfunc="first", sort=False)
        return table.reindex(index=list(self.rows["row"]), columns=list(dict.fromkeys(cells["column"])))

    def _pick(self, metric: str | None) -> pd.DataFrame:
        if metric is None:
            primary = self.cells["protocol"].map(lambda name: get_protocol(name).primary)
            return self.cells[self.cells["metric"] == primary]
        return self.cells[self.cells["metric"] == metric]


def leaderboard(store: Store, datasets: str | Sequence[str], protocols: Sequence[str] | None = None,
                baselines: Sequence[str] = tuple(BASELINES), variants: Sequence[str] = ("wmean",),
                ceiling: bool = True, calibrate: bool = False, ensemble: bool = False, folds: int = 5,
                n_boot: int = 1000, seed: int = 0,
                embedder: Embedder | None = None, language_model: LanguageModel | None = None,
                primary_only: bool = False, against: str | None = ONE_PROMPT_PER_ASPECT,
                on_progress: Callable[[str], None] | None = None) -> Leaderboard:
    """The leaderboard of the stored `datasets` (names as stored).

    `protocols`: protocol names to use (default: the published ones that apply to each dataset's
    layout, else `generic`: item, group and system level, each where the data allows);
    `baselines`: names from `geval.baselines.METRICS` (baseline scores are cached in the
    store); `variants`: judge score variants (`geval.variants`), one row each; `ceiling`:
    add the people's leave-one-out row; `calibrate`: add, per judge row, its scores calibrated
    to the human scale (isotonic) and its aspects combined against Overall (linear), both
    held out by group in `folds` folds (`geval.calibration`), and with baselines each judge row
    combined with them (`with_baselines`), and every judge row with them (`every_judge`); `ensemble`: add the mean of the judge rows, and of
    each pair of them when there are three or more (`ensembles`). Raises StoreError when a
    dataset is not stored. `primary_only`: compute each protocol's own metric only (what
    `Leaderboard.wide()` shows; faster), not all three.
    `embedder` and `language_model`: other models for `embedding` and `pmi` than the
    bundled GGUF file. `against`: the judge row every other judge row is compared with
    pairwise (its label, or how it starts; the first such row); None for no comparison. A
    label named that matches no row raises GevalError; the default matching none compares nothing.
    """
    names = [datasets] if isinstance(datasets, str) else list(datasets)
    say = on_progress or (lambda message: None)
    parts, rows, skipped, paired, fallback = [], {}, [], [], []
    for name in names:
        items = store.items(name)
        if not items:
            raise store.not_stored(name)
        digest = items.digest if item_columns(items).unique else None  # rows that tell each item's texts by its id
        items = _scores_only(store, name, items, skipped)
        layout = store.dataset_layout(name)
        chosen = [get_protocol(p) for p in protocols] if protocols else \
            protocols_for(layout, name, list(dict.fromkeys(i.level for i in items)))
        chosen = [p for p in chosen if p.for_every_item or any(i.level == p.item_level for i in items)]
        if not chosen and protocols:
            raise GevalError(f"none of the protocols {', '.join(protocols)} applies to dataset '{name}' (its items "
                             f"are at {', '.join(dict.fromkeys(i.level for i in items))} level); use --protocol generic")
        if chosen and not protocols:  # the dataset's own protocols: if none can be computed, the levels that can
            reasons = {p.title: why_not_computable(p, items) for p in chosen}
            if all(reasons.values()):
                levels = computable_levels(items)
                fallback.append(f"{name}: its own protocol{'s' if len(chosen) > 1 else ''} cannot be computed on "
                                f"these items ({'; '.join(f'{title}: {why}' for title, why in reasons.items())}); "
                                f"read at the level{'s' if len(levels) > 1 else ''} that can be instead: "
                                f"{', '.join(levels)} (the generic protocol)")
                chosen = [generic(levels)] if levels else []
        chosen = chosen or [GENERIC]
        judges = _judge_rows(store, name, items, variants, skipped)
        candidates = list(judges)
        if ensemble:
            candidates += ensembles(judges)
        if calibrate:
            candidates += [r for r in (_calibrated(row, items, folds, seed, skipped) for row in judges) if r]
        # baselines and people on the items the judges scored (all of them when none did), so that every row
        # of the leaderboard rests on the same items
        level_items = _judged_items(items, candidates, {p.item_level for p in chosen},
                                    any(p.for_every_item for p in chosen))
        if baselines:
            say(f"{name}: baselines {', '.join(baselines)} on {len(level_items)} items")
            measured = [Row(result.title + (f" (vs {result.reference})" if result.reference != "-" else ""),
                            "baseline", [result.signature], [result.signature_json], result.scores,
                            reference=result.reference, note=result.note)
                        for result in compute_baselines(level_items, baselines, dataset=name, layout=layout,
                                                        store=store, embedder=embedder, language_model=language_model,
                                                        on_progress=say, digest=digest)]
            if calibrate:
                candidates += [r for r in (with_baselines(row, measured, items, folds, seed, skipped)
                                           for row in judges) if r]
                candidates += [r for r in [every_judge(judges, measured, items, folds, seed, skipped)] if r]
            candidates += measured
        reference = _reference(candidates, against, name)
        if reference is not None:
            say(f"{name}: judge rows against {reference.label}")
            paired += [_paired(reference, row, protocol, name, items, n_boot, seed) for row in candidates
                       if row.kind in JUDGED and row is not reference for protocol in chosen
                       if protocol.levels[0] in ("item", "group")]
        for row in candidates:
            rows.setdefault(row.label, row)
            for protocol in chosen:
                metrics = (protocol.primary,) if primary_only else protocol.metrics
                parts.append(_cells(row, protocol, name, items, n_boot, seed, skipped, metrics))
        if ceiling:
            for protocol in chosen:
                ceiling_cells = _ceiling(protocol, name, level_items, n_boot, seed)
                if ceiling_cells is not None and primary_only:
                    ceiling_cells = ceiling_cells[ceiling_cells["metric"] == protocol.primary]
                if ceiling_cells is not None:
                    rows.setdefault(CEILING, Row(CEILING, "ceiling", [], [], note="one annotator against the mean of "
                                                 "the others; the judges are compared with the mean of all"))
                    parts.append(ceiling_cells)
    found = [p for p in parts if p is not None and len(p)]  # none where no human score is left (your labels, none)
    cells = pd.concat(found, ignore_index=True) if found else pd.DataFrame(columns=LONG_COLUMNS)
    cells = _sorted_columns(_partial_averages(cells), names)
    if len(names) == 1:
        cells["column"] = cells["column"].str.replace(f"{names[0]}: ", "", regex=False)
    order = _order(rows, cells)
    _best_pair(rows, order)
    table = pd.DataFrame([{"row": label, "kind": rows[label].kind, "reference": rows[label].reference or "",
                           "signature": "\n".join(rows[label].signatures),
                           "signature_json": json.dumps(rows[label].signatures_json), "note": rows[label].note,
                           "caveat": rows[label].caveat} for label in order], columns=ROW_COLUMNS)
    paired = [frame for frame in paired if len(frame)]
    return Leaderboard(names, cells[LONG_COLUMNS], table, skipped,
                       pd.concat(paired, ignore_index=True)[PAIRED_COLUMNS] if paired else
                       pd.DataFrame(columns=PAIRED_COLUMNS), fallback)


def _judged_items(items: list, candidates: list[Row], levels: set[str], every: bool) -> list:
    """The items at one of `levels` (at any when `every`) that a row of `candidates` scored (every one when none
    did); `items` itself when that is all of them (their columns made once). Found as columns: a million items
    not walked one by one."""
    held = item_columns(items)
    keep = np.ones(len(items), bool) if every else np.isin(held.levels, list(levels))
    if any(len(row.scores) for row in candidates):
        scored = np.zeros(len(items), bool)
        for row in candidates:
            if held.unique:  # where each id is, kept for the tables that read these scores next
                where = held.positions(row.scores.index)
                scored[where[where >= 0]] = True
            else:  # an id held twice: each of its items
                scored |= held.index.isin(row.scores.index)
        keep &= scored
    return items if keep.all() else [items[i] for i in np.flatnonzero(keep).tolist()]


def labels_only(store: Store, name: str, items: list | None = None) -> list[str]:
    """The aspects of the stored dataset `name` labeled with categories (pass/fail, a preference) when every aspect
    people gave its `items` (default: those stored, on its human side) is one; else []. A leaderboard correlates
    scores: on such a dataset it has nothing to correlate, and a judge is read by accuracy instead."""
    categorical = {aspect.lower() for aspect in store.categories(name)}
    aspects = item_columns(store.items(name) if items is None else items).human_aspects if categorical else []
    return list(aspects) if aspects and all(a.lower() in categorical for a in aspects) else []


def _scores_only(store: Store, name: str, items: list, skipped: list[str]) -> list:
    """`items` without their categorical aspects, which a correlation would read as numbers (the
    skipped lines say so); GevalError when no aspect is left (`labels_only`)."""
    categorical = store.categories(name)
    if not categorical:
        return items
    only = labels_only(store, name, items)
    if only:
        raise GevalError(f"every aspect of '{name}' is categorical ({', '.join(only)}): a leaderboard "
                         "correlates scores; read it with `geval agree` (accuracy) or `geval alttest`")
    skipped.append(f"{name}: {', '.join(categorical)} {'is' if len(categorical) == 1 else 'are'} categorical, left out: "
                   "a leaderboard correlates scores; `geval agree` reads categories by accuracy, and `geval alttest` "
                   "tests whether a judge can replace an annotator")
    return [replace(item, human={a: s for a, s in item.human.items() if a not in categorical},
                    annotators={a: w for a, w in item.annotators.items() if a not in categorical}) for item in items]


# --- rows ---------------------------------------------------------------------------------------


def _judge_fields(signature_json: str) -> tuple[str, dict]:
    fields = json.loads(signature_json or "{}")
    return json.dumps(_judge_of(fields), sort_keys=True), fields


def _judge_of(fields: dict) -> dict:
    """A signature's fields that describe the judge (not the template or its scales)."""
    return {k: v for k, v in fields.items() if k not in ("template", "scale")}


def _judge_rows(store: Store, dataset: str, items, variants: Sequence[str], skipped: list[str]) -> list[Row]:
    """One row per multi-aspect template version and judge; single-aspect versions of one
    judge together (the most recent version of each aspect and of each template, compared with another
    human aspect or not), the rest one row each."""
    combos = store.combos(dataset)
    unknown = [v for v in variants if v not in VARIANTS]
    if unknown:
        raise VariantError(f"score variant '{unknown[0]}' is unknown; use one of {', '.join(VARIANTS)}")
    members: dict[tuple, list] = {}  # one-aspect templates of one judge named alike: one row
    rows_of: list[tuple[str, list, dict]] = []  # (label without the variant, [(version, signature)], judge fields)
    searched = []  # variants made by prompt searches: read on their test groups in the report, not here
    for version, signature, blob in zip(combos["template_version"], combos["signature"], combos["signature_json"]):
        key, fields = _judge_fields(blob)
        template = store.template(version)
        if template.made_by_search:
            searched.append(template.name)
            continue
        if fields.get("backend") == "imported":  # scores made elsewhere: not a G-EVAL prompt of this app
            rows_of.append((f"{fields.get('model')} (imported from {fields.get('file')})", [(version, signature)],
                            fields))
            continue
        if len(template.aspects) == 1:
            human = (template.aspects[0].human or template.aspects[0].name).lower()
            taken = members.setdefault((key, name_family(template)), [])
            if all(h != human and t.name != template.name for h, _, t, _ in taken):  # one version of each template
                taken.append((human, fields, template, (version, signature)))
                continue
        rows_of.append((f"G-EVAL {template.label} · {judge_name(fields)}", [(version, signature)], fields))
    merged = [(f"G-EVAL, one prompt per aspect ({family}) · {judge_name(taken[0][1])}", [t[3] for t in taken],
               taken[0][1]) for (key, family), taken in members.items() if len(taken) > 1]
    rows_of = merged + rows_of + [(f"G-EVAL {taken[0][2].label} · {judge_name(taken[0][1])}", [taken[0][3]],
                                   taken[0][1]) for taken in members.values() if len(taken) == 1]
    labels = told_apart([label for label, _, _ in rows_of], [_judge_of(fields) for _, _, fields in rows_of],
                        [hashlib.sha256(str(pairs).encode()).hexdigest()[:8] for _, pairs, _ in rows_of])
    rows_of = [(label, pairs) for label, (_, pairs, _) in zip(labels, rows_of)]  # one model at two settings: apart
    if searched:
        skipped.append(f"{len(searched)} template versions made by prompt searches ({', '.join(sorted(set(searched)))}) "
                       "are left out: each was chosen on some of these items, so a row of it here would flatter it; "
                       "the report's section on prompt searches reads each winner on its test groups only")
    rows, tuned = [], searched_versions(store, dataset)
    for variant in variants:
        suffix = "" if variant == "wmean" else f" [{variant}]"
        for label, pairs in rows_of:
            kept = [held_out(items, [version], tuned) for version, _ in pairs]  # each not where a search chose it
            said = "; ".join(dict.fromkeys(f"{store.template(version).name}: {note}" if len(pairs) > 1 else note
                                           for (version, _), (_, note) in zip(pairs, kept) if note))
            try:
                scored = [judge_scores(store, dataset, pair, variant, items=on) for pair, (on, _) in zip(pairs, kept)]
            except VariantError as exc:
                skipped.append(f"{label}{suffix}: {exc}")
                continue
            except StoreError:  # judged only items a reloaded file no longer has, or a search's tune groups
                if said:
                    skipped.append(f"{label}{suffix}: judged only on groups a prompt search chose it on")
                continue
            row = _judge_row(label + suffix, scored, variant, len(items))
            row.note = "; ".join(filter(None, [row.note, said]))
            row.caveat = FEW_SHOT if any(store.template(version).examples for version, _ in pairs) else ""
            rows.append(row)
    return _fully_judged(rows, skipped, item_columns(items).human_aspects)


def _fully_judged(rows: list[Row], skipped: list[str], human_aspects: Sequence[str]) -> list[Row]:
    """The judge rows compared with an aspect people scored (one of `human_aspects`) with at least half as many items
    judged as the most complete of those; a skipped line for the others: rows compared with nobody (a judge imported
    as naturalness where people scored Natural: judging every item, it made the rest look incomplete) and partial
    ones (e.g. a prompt search's variants, each scored on a few groups, which the report shows in a section of their
    own)."""
    people = {aspect.lower() for aspect in human_aspects}
    compared = [any(human.lower() in people for human in row.humans.values()) for row in rows]
    nobody = [f"{row.label} ({', '.join(row.humans.values())})" for row, found in zip(rows, compared) if not found]
    if nobody:
        skipped.append(f"{counted(len(nobody), 'judge row')} compared with no aspect people scored here "
                       f"({', '.join(human_aspects) or 'none yet'}) left out: {'; '.join(nobody)}; import it again "
                       "naming one of theirs, or label its aspect")
    rows = [row for row, found in zip(rows, compared) if found]
    judged = [int(row.scores.notna().any(axis=1).sum()) for row in rows]
    most = max(judged, default=0)
    partial = [f"{row.label} ({n})" for row, n in zip(rows, judged) if 2 * n < most]
    if partial:
        skipped.append(f"{counted(len(partial), 'judge row')} with fewer than half of the {most} items the most complete row "
                       f"judged are left out: {'; '.join(partial)}")
    return [row for row, n in zip(rows, judged) if 2 * n >= most]


def name_family(template) -> str:
    """A one-aspect template's name with its aspect as '*' (topicalchat-naturalness -> topicalchat-*;
    else its last '-' part: fed-turn-engaging, aspect Engagingness -> fed-turn-*): prompts named
    alike are read together as one row, a variant (topicalchat-*-cot) as another."""
    name, aspect = template.name.lower(), template.aspects[0].key
    if aspect in name:
        return name.replace(aspect, "*")
    stem, dash, _ = name.rpartition("-")
    return f"{stem}-*" if dash else name


def _judge_row(label: str, members: list, variant: str, n_items: int) -> Row:
    """A row from one or more scored combinations (one-aspect templates read together)."""
    scores = pd.concat([m.scores for m in members], axis=1)
    return Row(label, "judge", [m.signature for m in members], [json.loads(m.signature_json) for m in members],
               scores, {k: h for m in members for k, h in m.humans.items()},
               {k: s for m in members for k, s in m.scales.items()},
               note=_judged_note(scores, n_items) + (f"; score variant {variant}" if variant != "wmean" else ""),
               parts=pd.concat([m.parts for m in members], axis=1).reindex(scores.index))


def _judged_note(scores: pd.DataFrame, n_items: int) -> str:
    """"60 of 60 items judged", or, when the aspects were scored on different items, each one's
    count: "60 of 60 items judged (naturalness 60, groundedness 8)"."""
    counts = scores.notna().sum()
    each = f" ({', '.join(f'{aspect} {int(n)}' for aspect, n in counts.items())})" if counts.nunique() > 1 else ""
    return f"{len(scores)} of {n_items} items judged{each}"


def _calibrated(row: Row, items, folds: int, seed: int, skipped: list[str]) -> Row | None:
    """The judge row's scores calibrated to each human aspect, held out by group."""
    try:
        scores = calibrate_scores(row.scores, items, row.humans, "isotonic", folds, seed)
    except CalibrationError as exc:
        skipped.append(f"{row.label}, calibrated: {exc}")
        return None
    extra = {"calib": "isotonic", "combine": "linear", "folds": folds, "cv": "group", "seed": seed}
    tail = "|" + "|".join(f"{k}:{v}" for k, v in extra.items())
    return Row(f"{row.label} [calibrated, {folds}-fold CV by group]", SUPERVISED, [s + tail for s in row.signatures],
               [{**blob, **extra} for blob in row.signatures_json], scores, dict(row.humans), {}, note=(
                   f"uses human labels: held-out scores, isotonic calibration of each aspect to its human scale and a "
                   f"linear combination of the aspects against Overall, each fitted on the other folds' groups only "
                   f"({folds} folds); {FIXED_FIT}"),
               calibration="isotonic", folds=folds, uncalibrated=row.scores)


#: How a pair ensemble's caveat starts (`ensembles`; the best of them is marked by `_best_pair`).
PAIR = "pair ensemble"


def ensembles(judges: list[Row]) -> list[Row]:
    """The mean of all judge rows and, with three or more, of each pair of them (`ensemble_row`);
    each pair says that it is one of k pairs (`caveat`), a few-shot member that it uses labels."""
    pairs = [ensemble_row([a, b], label=f"ensemble: {_short(a)} + {_short(b)}")
             for a, b in itertools.combinations(judges, 2)] if len(judges) > 2 else []
    pairs = [row for row in pairs if row]
    for row in pairs:
        row.caveat = "; ".join(filter(None, [f"{PAIR}: one of {len(pairs)} pairs of judge rows", row.caveat]))
    return [row for row in [ensemble_row(judges), *pairs] if row]


def _best_pair(rows: dict[str, Row], order: list[str]) -> None:
    """The pair ensemble ranked first (`order`) says it is the best of the k pairs: read against a
    goal, its lead is partly that choice."""
    pairs = [label for label in order if rows[label].caveat.startswith(PAIR)]
    if len(pairs) > 1:
        best = rows[pairs[0]]
        best.caveat = best.caveat.replace(f"{PAIR}: one of {len(pairs)} pairs of judge rows",
                                          f"{PAIR}: the best of {len(pairs)} pairs of judge rows (chosen by these "
                                          "people's agreement)", 1)


def _short(row: Row) -> str:
    """A judge row's label without 'G-EVAL' and its judge ('one prompt per aspect (topicalchat-*)')."""
    return row.label.removeprefix("G-EVAL").strip(" ,").split(" · ")[0]


def ensemble_row(judges: list[Row], label: str | None = None) -> Row | None:
    """The mean of several judge rows: per human aspect, each row's score mapped onto 0-1 by its
    scale, averaged over the rows that have it (an item missing from one is left out). Uses no
    human label. None for fewer than two rows sharing an aspect."""
    by_human: dict[str, list[pd.Series]] = {}
    for row in judges:
        for column, human in row.humans.items():
            if column in row.scores.columns and column in row.scales:
                low, high = row.scales[column]
                by_human.setdefault(human, []).append((row.scores[column].astype(float) - low) / (high - low))
    shared = {human: parts for human, parts in by_human.items() if len(parts) > 1}
    if not shared:
        return None
    scores = pd.DataFrame({human.lower(): pd.concat(parts, axis=1).mean(axis=1, skipna=False)
                           for human, parts in shared.items()})
    used = [row for row in judges if any(h in shared for h in row.humans.values())]
    few_shot = any(FEW_SHOT in row.caveat for row in used)
    return Row(label or f"ensemble: mean of {len(used)} judge rows", "judge", [s for r in used for s in r.signatures],
               [blob for r in used for blob in r.signatures_json], scores,
               {human.lower(): human for human in shared}, {human.lower(): (0.0, 1.0) for human in shared},
               note=("human labels through its few-shot members" if few_shot else "no human labels")
               + ": each aspect the mean of " + "; ".join(r.label for r in used)
               + " (each score mapped onto 0-1 by its scale)",
               caveat="; ".join(filter(None, ["" if label else f"ensemble: the mean of {len(used)} judge rows",
                                              FEW_SHOT if few_shot else ""])))


def with_baselines(row: Row, measured: list[Row], items, folds: int, seed: int, skipped: list[str]) -> Row | None:
    """The judge row's aspects each predicted from all the row's scores (every aspect it asked)
    and the baselines' scores together (`held_out_combination`)."""
    return held_out_combination(row.label, [row], measured, items, folds, seed, skipped)


def every_judge(judges: list[Row], measured: list[Row], items, folds: int, seed: int,
                skipped: list[str]) -> Row | None:
    """Each human aspect predicted from the scores of every judge row that judged all the items
    the most complete one did, and the baselines' scores (`held_out_combination`); None for
    fewer than two such rows. (A row judged on part of the items, e.g. a search's winner on its
    test groups, would leave the combination only those items.)"""
    judged = [int(row.scores.notna().any(axis=1).sum()) for row in judges]
    complete = [row for row, n in zip(judges, judged) if n == max(judged, default=0)]
    if len(complete) < 2:
        return None
    return held_out_combination(f"every judge row with all items ({len(complete)})", complete, measured, items, folds,
                                seed, skipped)


def held_out_combination(name: str, judges: list[Row], measured: list[Row], items, folds: int, seed: int,
                         skipped: list[str]) -> Row | None:
    """Per human aspect of `judges`, a ridge regression on every score of `judges` and of the
    baselines `measured`, fitted on the other folds' groups only, its penalty chosen by an inner
    cross-validation on those groups (`calibration.fit_predict`, method `ridge`). The row's mean
    of aspects is then set against Overall as for any judge: no Overall label is used in fitting."""
    by_id = {item.id: item for item in items}
    index = list(dict.fromkeys(i for row in judges for i in row.scores.index if i in by_id))
    groups = pd.Series([by_id[i].group or i for i in index], index=index)
    judged = pd.concat([frame.reindex(index).astype(float).add_prefix(f"{k}:") for k, row in enumerate(judges)
                        for frame in (row.scores, row.parts) if frame is not None], axis=1)
    shared = pd.DataFrame({b.label: b.scores.reindex(index).astype(float) for b in measured})
    features = pd.concat([judged, shared], axis=1)
    humans, scales = {}, {}
    for row in judges:  # one output column per human aspect, named as the first row that asks for it names it
        for column, human in row.humans.items():
            if human not in humans.values() and column in row.scores.columns:
                humans[column], scales[column] = human, row.scales.get(column)
    out, labelled = {}, 0
    for column, human in humans.items():
        target = pd.Series([by_id[i].human_mean(human) for i in index], index=index)
        labelled = max(labelled, int(target.notna().sum()))
        try:
            predicted = cross_validated(features, target, groups, "ridge", folds, seed)
        except CalibrationError as exc:
            skipped.append(f"{name} + baselines, {column}: {exc}")
            continue
        if predicted.notna().any():  # a baseline that has no value where the judge has (no context, no fact)
            out[column] = predicted
        else:
            skipped.append(f"{name} + baselines, {column}: no item has every judge score and every baseline's score")
    if not out:
        return None
    n_parts = sum(row.parts.shape[1] for row in judges if row.parts is not None)
    what = f"{judged.shape[1] - n_parts} judge scores" + (f" and {n_parts} answers to parts of them (checklist "
                                                          "questions, batch orders)" if n_parts else "")
    extra = {"combine": "ridge", "features": f"{judged.shape[1] - n_parts} judge scores" + (f"+{n_parts} parts" if n_parts else ""),
             "with": ",".join(b.label for b in measured), "folds": folds, "cv": "group", "alpha": "inner cv",
             "seed": seed}
    tail = "|" + "|".join(f"{k}:{v}" for k, v in extra.items())
    return Row(f"{name} + baselines [held-out ridge combination, {folds}-fold CV by group]", SUPERVISED,
               [s + tail for row in judges for s in row.signatures],
               [{**blob, **extra} for row in judges for blob in row.signatures_json],
               pd.DataFrame(out, index=index), {c: humans[c] for c in out},
               {c: scales[c] for c in out if scales[c]}, note=(
                   f"uses human labels: each aspect predicted from {what}"
                   + (f" ({'; '.join(row.label for row in judges)})" if len(judges) > 1 else "")
                   + f" and {', '.join(b.label for b in measured)} by a ridge regression fitted on the other folds' "
                   f"groups, its penalty chosen by a cross-validation within them (about "
                   f"{labelled * (folds - 1) // folds} of the {labelled} labelled items per fit; {folds} folds by "
                   f"group); {FIXED_FIT}"))


# --- paired comparisons -------------------------------------------------------------------------


def _reference(candidates: list[Row], against: str | None, dataset: str) -> Row | None:
    """The judge row named `against` (exactly, else the first whose label starts so; for the
    default, of those whose scores vary (a judge of constant scores has no correlation to compare
    with), the one with the most items scored on every aspect)."""
    if against is None:
        return None
    judges = [row for row in candidates if row.kind == "judge"]
    named = [row for row in judges if row.label.startswith(against)]
    if against == ONE_PROMPT_PER_ASPECT:  # of those whose scores vary, the one with the most complete items
        named = sorted((row for row in named if np.any(row.scores.nunique() > 1)),
                       key=lambda row: -int(row.scores.notna().all(axis=1).sum()))
    found = next((row for row in judges if row.label == against), None) or next(iter(named), None)
    if found is None and against != ONE_PROMPT_PER_ASPECT:
        raise GevalError(f"no judge row of '{dataset}' is named '{against}'; the judge rows are: "
                         + "; ".join(row.label for row in judges))
    return found


def _paired(reference: Row, row: Row, protocol: Protocol, dataset: str, items, n_boot: int,
            seed: int) -> pd.DataFrame:
    """`row` minus `reference` on each human aspect both compare with (and on their mean of
    aspects → Overall, and the average of the aspects but Overall), on the protocol's items
    that both scored, in its primary metric at its level."""
    quiet: list[str] = []  # what the leaderboard's cells already reported as left out
    sides = [_against_overall(side, protocol, items, seed, quiet, dataset) for side in (reference, row)]
    keyed = [{(human.lower(), column == combined): column for column, human in humans.items()
              if column in scores.columns} for scores, humans, combined, _ in sides]
    level_items = items if protocol.for_every_item else [i for i in items if i.level == protocol.item_level]
    (ref_scores, ref_humans, *_), (scores, *_) = sides
    order = [h.lower() for h in protocol.aspects.values()]
    shared = sorted((key for key in keyed[0] if key in keyed[1]),
                    key=lambda key: (key[1], order.index(key[0]) if key[0] in order else len(order)))
    both = [(keyed[0][key], keyed[1][key]) for key in shared]
    common = [i for i in level_items if i.id in ref_scores.index and i.id in scores.index
              and any(pd.notna(ref_scores.at[i.id, a]) and pd.notna(scores.at[i.id, b]) for a, b in both)]
    if not common or not shared:
        return pd.DataFrame(columns=PAIRED_COLUMNS)
    ids = [i.id for i in common]
    columns, overall = {}, (protocol.overall or "").lower()
    for human, combined in shared:
        a_column, b_column = keyed[0][(human, combined)], keyed[1][(human, combined)]
        name = ref_humans[a_column]
        columns[f"{MEAN_OF_ASPECTS} → {name}" if combined else name] = (
            ref_scores.loc[ids, a_column].to_numpy(float), scores.loc[ids, b_column].to_numpy(float),
            np.array([i.human_mean(name) for i in common]))
    averaged = [ref_humans[keyed[0][key]] for key in shared if not key[1] and key[0] != overall]
    found = paired_columns(columns, [i.group or i.id for i in common], protocol.levels[0], protocol.primary,
                           averaged)
    return pd.DataFrame(found).assign(row=row.label, against=reference.label, dataset=dataset,
                                      protocol=protocol.name, level=protocol.levels[0],
                                      metric=protocol.primary, kind=row.kind)[PAIRED_COLUMNS]


# --- cells --------------------------------------------------------------------------------------


def _column(dataset: str, protocol: Protocol, human: str, several: bool) -> str:
    return f"{dataset}: {human}" + (f" ({protocol.name})" if several else "")


def _cells(row: Row, protocol: Protocol, dataset: str, items, n_boot: int, seed: int, skipped: list[str],
           metrics: tuple[str, ...]) -> pd.DataFrame | None:
    """The row's cells under `protocol`: each aspect, their average and, for a judge with several
    aspects, its mean of aspects (or, calibrated, its learned combination) against Overall."""
    several = len(protocols_for(_protocol_layout(protocol))) > 1
    scores, humans, combined, judged = _against_overall(row, protocol, items, seed, skipped, dataset)
    try:
        table = correlations(scores, items, protocol, humans or None, n_boot, seed, metrics, average=True)
    except ProtocolError as exc:
        skipped.append(f"{row.label} on {dataset} ({protocol.name}): {exc}")
        return None
    if combined == MEAN_OF_ASPECTS:
        rows = table["aspect"] == combined
        table.loc[rows, "note"] = [f"mean of {', '.join(judged)}" + (f"; {note}" if note else "")
                                   for note in table.loc[rows, "note"]]
    table["column"] = [_column(dataset, protocol, _label(aspect, human) + _level(protocol, level), several)
                       for aspect, human, level in zip(table["aspect"], table["human"], table["level"])]
    return table.assign(row=row.label, kind=row.kind, dataset=dataset)


def _partial_averages(cells: pd.DataFrame) -> pd.DataFrame:
    """An average over fewer aspects than the other rows of its table is not theirs to compare
    with: its value is withheld (n/a), and its note names the aspects it had and those it lacks."""
    if cells.empty:
        return cells
    cells = cells.copy()
    table = ["dataset", "protocol", "level", "metric"]
    is_average = cells["aspect"] == AVERAGE
    aspects = cells[~is_average & (cells["kind"] != "ceiling") & (cells["aspect"] != MEAN_OF_ASPECTS)
                    & ~cells["aspect"].str.startswith("learned combination")]
    for key, averages in cells[is_average].groupby(table, sort=False):
        protocol = get_protocol(key[1])
        overall = (protocol.overall or "").lower()
        same = (aspects[table] == pd.Series(key, index=table)).all(axis=1)
        every = list(dict.fromkeys(h for h in aspects.loc[same, "human"] if h.lower() != overall))
        for index, humans in averages["human"].items():
            had = humans.split(", ")
            lacks = [h for h in every if h not in had]
            if lacks:
                cells.loc[index, ["value", "low", "high"]] = math.nan
                cells.loc[index, "note"] = (f"{PARTIAL} {len(had)} of {len(every)} aspects): the mean of {', '.join(had)} "
                                            f"only, without {', '.join(lacks)}, so not to be set beside the other "
                                            "rows' averages; score the rest to compare")
    return cells


def _level(protocol: Protocol, level: str) -> str:
    """A column's level, for protocols of several levels (GENERIC): " (group level)"; "" for the item level."""
    return f" ({level} level)" if len(protocol.levels) > 1 and level != "item" else ""


def _label(aspect: str, human: str) -> str:
    """A cell's column: the human aspect; the average; the mean of aspects → Overall; a learned combination."""
    if aspect == AVERAGE or aspect.startswith("learned combination"):
        return aspect
    return f"{MEAN_OF_ASPECTS} → {human}" if aspect == MEAN_OF_ASPECTS else human


def _against_overall(row: Row, protocol: Protocol, items, seed: int, skipped: list[str], dataset: str):
    """The row's scores and humans, with one more column against the protocol's Overall: seed
    000's mean of aspects for a judge with several aspects, or for a calibrated row its learned
    combination (fitted on other folds only). Returns (scores, humans, that column or "", the
    aspect columns it is made of)."""
    scores, humans = row.scores, dict(row.humans)
    if not (row.kind in JUDGED and protocol.overall and isinstance(scores, pd.DataFrame) and len(humans) > 1):
        return scores, humans, "", []
    overall = protocol.overall.lower()
    human_aspects = {h.lower(): h for item in items if item.level == protocol.item_level for h in item.human}
    judged = [c for c in scores.columns if c in humans and humans[c].lower() != overall
              and humans[c].lower() in human_aspects]
    if overall not in human_aspects or len(judged) < 2:
        skipped.append(f"{row.label} on {dataset}: the items have no human '{protocol.overall}' scores, or fewer than "
                       "two aspects to set against them")
        return scores, humans, "", []
    if row.calibration:
        try:
            extra = combine_aspects(row.uncalibrated[judged], items, protocol.overall, folds=row.folds, seed=seed,
                                    humans={c: humans[c] for c in judged})
        except CalibrationError as exc:
            skipped.append(f"{row.label} on {dataset}: {exc}")
            return scores, humans, "", []
    else:
        extra = mean_of_aspects(scores, {c: row.scales[c] for c in judged})
    return scores.assign(**{extra.name: extra}), {**humans, extra.name: human_aspects[overall]}, extra.name, judged


def _protocol_layout(protocol: Protocol) -> str:
    return protocol.layouts[0] if protocol.layouts else ""


def _ceiling(protocol: Protocol, dataset: str, items, n_boot: int, seed: int) -> pd.DataFrame | None:
    """The people's leave-one-out correlation per human aspect at each of the protocol's levels, in
    its metrics (`annotator_agreement`: one annotator against the mean of the others, its interval
    made as a judge row's is at that level)."""
    level_items = items if protocol.for_every_item else [i for i in items if i.level == protocol.item_level]
    held = item_columns(level_items)
    humans = [h for h in dict.fromkeys(protocol.aspects.values() or held.human_aspects) if h in held.human_aspects]
    several = len(protocols_for(_protocol_layout(protocol))) > 1
    groups = len(held.first_seen("group_ids"))
    frames = []
    for level in protocol.levels:
        table = annotator_agreement(level_items, humans, n_boot=n_boot, seed=seed, alpha=False, level=level)
        table = table[table["statistic"].str.startswith("leave-one-out ") & table["value"].notna()]
        if table.empty:
            continue
        frame = pd.DataFrame({
            "protocol": protocol.name, "aspect": [protocol.aspect_for(h) for h in table["human"]],
            "human": table["human"], "level": level, "metric": table["statistic"].str.removeprefix("leave-one-out "),
            "value": table["value"], "low": table["low"], "high": table["high"], "n": table["n"],
            "groups": groups, "unscored": 0, "note": table["note"],
        })
        frame["column"] = [_column(dataset, protocol, h + _level(protocol, level), several) for h in frame["human"]]
        frames.append(frame)
    if not frames:
        return None
    return pd.concat(frames, ignore_index=True).assign(row=CEILING, kind="ceiling", dataset=dataset)


def _sorted_columns(cells: pd.DataFrame, names: list[str]) -> pd.DataFrame:
    """Cells in column order: dataset, protocol, then the protocol's aspects in its order,
    other aspects, the average and the mean of aspects last."""
    def rank(row) -> tuple:
        protocol = get_protocol(row["protocol"])
        humans = [h.lower() for h in protocol.aspects.values()]
        if row["aspect"] == AVERAGE:
            place = len(humans) + 1
        elif row["aspect"] == MEAN_OF_ASPECTS:
            place = len(humans) + 2
        elif row["aspect"].startswith("learned combination"):
            place = len(humans) + 3
        else:
            place = humans.index(row["human"].lower()) if row["human"].lower() in humans else len(humans)
        level = protocol.levels.index(row["level"]) if row["level"] in protocol.levels else 0
        return names.index(row["dataset"]), order.index(protocol.name), level, place

    if cells.empty:
        return cells
    order = [*PROTOCOLS, GENERIC.name]
    keys = cells.apply(rank, axis=1)
    return cells.assign(_rank=keys).sort_values("_rank", kind="stable").drop(columns="_rank").reset_index(drop=True)


def _order(rows: dict[str, Row], cells: pd.DataFrame) -> list[str]:
    """Judges and baselines by their first average (best first), the people last."""
    averages = cells[cells["aspect"] == AVERAGE]
    if len(averages):
        primary = averages["protocol"].map(lambda name: get_protocol(name).primary)
        averages = averages[averages["metric"] == primary]
    best = averages.groupby("row", sort=False)["value"].first().to_dict()
    ranked = [label for label, row in rows.items() if row.kind != "ceiling"]
    ranked.sort(key=lambda label: -best.get(label, -np.inf) if math.isfinite(best.get(label, -np.inf)) else np.inf)
    return ranked + [label for label, row in rows.items() if row.kind == "ceiling"]
