"""The engine's analyses, cached for the pages: each result is kept until the combination it
reads gets new judgments (its row of `Store.combos`: latest time and counts) or the dataset's
human side changes (`Store.human_stamp`: a label, an undo, another side), so a rerun of a page,
or another page on the same combination, computes nothing again.

What grows with the items (a row per judgment, the test's items, the figures drawn from them) is
kept as it was made (`kept`: st.cache_resource, given back without a copy, which a million rows
would cost on every run): the pages read it and never change it. `forget` drops it."""

from __future__ import annotations

import pandas as pd
import streamlit as st

import geval

#: Results kept of each function whose results grow with the items.
KEPT = 8
_forgettable = []


def kept(show_spinner: str | bool = False, max_entries: int = KEPT):
    """st.cache_resource for a result that grows with the items, shared as it is (never changed by a page)."""
    def wrap(function):
        cached = st.cache_resource(show_spinner=show_spinner, max_entries=max_entries)(function)
        _forgettable.append(cached)
        return cached
    return wrap


def forget() -> None:
    """Drop every result `kept` (after a deletion, they still hold what was deleted)."""
    for cached in _forgettable:
        cached.clear()


#: The columns of a combination that `stamp` reads.
_STAMPED = ("last", "ok", "unscored", "failed")


def stamp(combo: pd.Series) -> tuple:
    """What changes when a (template version, signature) gets new judgments."""
    last, ok, unscored, failed = (combo[column] for column in _STAMPED)
    return float(last), int(ok), int(unscored), int(failed)


def stamps(combos: pd.DataFrame) -> tuple:
    """What changes when any of `combos` gets new judgments: read a column at a time (no row Series made)."""
    return tuple(stamp(dict(zip(_STAMPED, row))) for row in zip(*(combos[column].tolist() for column in _STAMPED)))


def pair(combo: pd.Series) -> tuple[str, str]:
    """A combination's (template version, signature)."""
    return combo["template_version"], combo["signature"]


def agreement(store: geval.Store, dataset: str, combo: pd.Series, variant: str = "wmean",
              levels: tuple[str, ...] = geval.OPTIONS.levels, n_boot: int = 1000) -> pd.DataFrame:
    """geval.agree for one combination."""
    return _agree(store, str(store.path), dataset, pair(combo), variant, tuple(levels), n_boot,
                  (stamp(combo), store.human_stamp(dataset)))


def disagreements(store: geval.Store, dataset: str, combo: pd.Series, columns: str = "all") -> pd.DataFrame:
    """geval.disagreements for one combination (`columns="scores"`: without prompts, answers, reasons and
    distributions, for plots)."""
    return _disagreements(store, str(store.path), dataset, pair(combo), (stamp(combo), store.human_stamp(dataset)),
                          columns)


def figure(store: geval.Store, dataset: str, combo: pd.Series, draw, aspect: str, human: str, **options):
    """`draw(frame, aspect, human, **options)` (a figure of `geval.reporting` over `disagreements(...,
    columns="scores")`), drawn once per combination, aspect, human side and options."""
    return _figure(store, str(store.path), dataset, pair(combo), (stamp(combo), store.human_stamp(dataset)),
                   draw.__name__, aspect, human, tuple(options.items()))


@kept(max_entries=3 * KEPT)
def _figure(_store, path: str, dataset: str, combo: tuple, stamp: tuple, name: str, aspect: str, human: str,
            options: tuple):
    frame = _disagreements(_store, path, dataset, combo, stamp, "scores")
    return getattr(geval.reporting, name)(frame, aspect, human, **dict(options))


def comparison(store: geval.Store, dataset: str, a: pd.Series, b: pd.Series, human: str, metric: str):
    """geval.compare of combination B against A."""
    return _compare(store, str(store.path), dataset, pair(a), pair(b), human, metric,
                    (stamp(a), stamp(b), store.human_stamp(dataset)))


def leaderboard(store: geval.Store, dataset: str, combos: pd.DataFrame, baselines: tuple, variant: str, n_boot: int,
                combined: bool = False):
    """geval.leaderboard of the dataset (each protocol's own metric only); `combined`: with the
    ensemble of the judges and the held-out rows (calibrated, and combined with the baselines)."""
    return _leaderboard(store, str(store.path), dataset, tuple(baselines), variant, n_boot, combined,
                        (stamps(combos), store.human_stamp(dataset)))


@st.cache_data(show_spinner="Computing correlations and bootstrap intervals…")
def _agree(_store, path: str, dataset: str, combo: tuple, variant: str, levels: tuple, n_boot: int,
           stamp: tuple) -> pd.DataFrame:
    return geval.agree(_store, dataset, combo, variant=variant, levels=levels, n_boot=n_boot)


@kept(show_spinner="Joining judgments with human scores…")
def _disagreements(_store, path: str, dataset: str, combo: tuple, stamp: tuple, columns: str) -> pd.DataFrame:
    return geval.disagreements(_store, dataset, combo, columns=columns)


@st.cache_data(show_spinner="Comparing the two on the same groups…")
def _compare(_store, path: str, dataset: str, a: tuple, b: tuple, human: str, metric: str, stamps: tuple):
    return geval.compare(_store, dataset, a, b, human, metric=metric)


@st.cache_data(show_spinner="Computing baselines and the leaderboard…")
def _leaderboard(_store, path: str, dataset: str, baselines: tuple, variant: str, n_boot: int, combined: bool,
                 stamps: tuple):
    return geval.leaderboard(_store, dataset, baselines=baselines, variants=(variant,), n_boot=n_boot,
                             primary_only=True, calibrate=combined, ensemble=combined)


def label_features(store: geval.Store, dataset: str, aspect: str, combos: pd.DataFrame, combo: pd.Series | None,
                   baselines: tuple[str, ...] = ()):
    """geval.labeling.features of `aspect`, `combo` read alone (None: the newest compared with it)."""
    return _features(store, str(store.path), dataset, aspect, pair(combo) if combo is not None else None,
                     tuple(baselines), (stamps(combos), store.dataset_loaded(dataset)))


def learning_curve(store: geval.Store, dataset: str, aspect: str, combos: pd.DataFrame, combo: pd.Series | None,
                   annotator: str | None = None):
    """geval.labeling.curve of the stored labels of `aspect` against `combo` and the combination of
    every judge score and the fast baselines."""
    return _curve(store, str(store.path), dataset, aspect, pair(combo) if combo is not None else None, annotator,
                  (stamps(combos), store.human_stamp(dataset)))


@kept(show_spinner="Reading the judges' scores and baselines…", max_entries=16)
def _features(_store, path: str, dataset: str, aspect: str, combo: tuple | None, baselines: tuple, stamp: tuple):
    return geval.labeling.features(_store, dataset, aspect, combo, baselines)


@st.cache_data(show_spinner="Fitting the learning curve…", max_entries=16)
def _curve(_store, path: str, dataset: str, aspect: str, combo: tuple | None, annotator: str | None, stamp: tuple):
    return geval.labeling.curve(_store, dataset, aspect, combo, annotator)


def alttest(store: geval.Store, dataset: str, combos: pd.DataFrame, epsilon: float, alignment: str | None,
            by: str | None = None, fdr: str = "by") -> dict:
    """geval.alttest.run of every judge on the dataset, read each way a G-EVAL score can be read:
    {reading: [AltTest, ...]} (`geval.alttest.READINGS`); `by`: what each annotator's t-test takes
    as independent (`geval.alttest.BY`; None: groups where the items have them); `fdr`: the step-up
    procedure across annotators (`geval.alttest.FDR`)."""
    return _alttest(store, str(store.path), dataset, float(epsilon), alignment, by, fdr,
                    (stamps(combos), store.human_stamp(dataset)))


def alttest_plan(store: geval.Store, dataset: str, aspect: str, combos: pd.DataFrame, combo: pd.Series | None,
                 epsilon: float, alignment: str | None = None, by: str | None = None, reading: str = "mode",
                 fdr: str = "by"):
    """geval.alttest.plan of `aspect`: how many items give a judge as good as `combo` (None: as
    good as an annotator) an 80% chance to pass, the judge read and the test taken as its verdict
    reads and takes them (`reading`, `by`, `fdr`); None before two annotators share an item."""
    return _alttest_plan(store, str(store.path), dataset, aspect, pair(combo) if combo is not None else None,
                         float(epsilon), alignment, by, reading, fdr,
                         (stamps(combos), store.human_stamp(dataset)))


@kept(show_spinner="Running the alternative annotator test…", max_entries=16)
def _alttest(_store, path: str, dataset: str, epsilon: float, alignment: str | None, by: str | None, fdr: str,
             stamp: tuple) -> dict:
    prepared = _alttest_prepared(_store, path, dataset, alignment, by, stamp)
    return {reading: found.results(epsilon, fdr=fdr) for reading, found in prepared.items()}


@kept(show_spinner="Comparing the judges with the annotators…", max_entries=4)
def _alttest_prepared(_store, path: str, dataset: str, alignment: str | None, by: str | None, stamp: tuple) -> dict:
    """What the test reads and compares item by item, for every epsilon and step-up procedure (a change of
    either on the page costs only the t-tests)."""
    return {reading: geval.alttest.prepare(_store, dataset, alignment=alignment, reading=reading, baseline=True, by=by)
            for reading in geval.alttest.READINGS}


@st.cache_data(show_spinner="Simulating studies of this size…", max_entries=32)
def _alttest_plan(_store, path: str, dataset: str, aspect: str, combo: tuple | None, epsilon: float,
                  alignment: str | None, by: str | None, reading: str, fdr: str, stamp: tuple):
    return _alttest_plan_basis(_store, path, dataset, aspect, combo, reading, stamp).plan(epsilon, alignment, by=by,
                                                                                        fdr=fdr)


@kept(show_spinner="Reading the labels the simulation starts from…", max_entries=4)
def _alttest_plan_basis(_store, path: str, dataset: str, aspect: str, combo: tuple | None, reading: str, stamp: tuple):
    """What the plan reads of the store, for every epsilon, alignment and test (`geval.alttest.plan_basis`)."""
    return geval.alttest.plan_basis(_store, dataset, aspect, combo, reading)


def tune_budget(store: geval.Store, dataset: str, judge, human: str, start: geval.Template | None, others: bool,
                few_shot: bool, ensemble: bool, share: float, seed: int) -> "geval.tuning.search.TuneBudget":
    """geval.tune.budget with the Tune page's variants (`others`, `few_shot`, `ensemble`: tried or not), kept per
    settings: what it counts depends on the dataset's items and the templates asked, not on what is stored; timed at
    the judge's pace as measured now (a run since may have measured it)."""
    return _tune_budget(store, str(store.path), dataset, judge, repr(sorted(judge.settings.items())), human, start,
                        start.version if start is not None else None, others, few_shot, ensemble, share, seed,
                        store.dataset_loaded(dataset)).paced(store, judge)


@st.cache_data(show_spinner="Counting the judge calls the search needs…", max_entries=16)
def _tune_budget(_store, path: str, dataset: str, _judge, judge: str, human: str, _start, start: str | None,
                 others: bool, few_shot: bool, ensemble: bool, share: float, seed: int, loaded):
    return geval.tune.budget(_store, dataset, _judge, human, _start, None if others else [], share, seed,
                             None if few_shot else (), ensemble)


def labeled_dataset(store: geval.Store, dataset: str) -> geval.Dataset | None:
    """The stored `dataset` with your labels as its human scores (`Store.dataset(side="you")`), None when nothing is
    labeled: made again only when the labels change (`Store.human_stamp`), not on every edit of a template."""
    return _labeled_dataset(store, str(store.path), dataset, store.human_stamp(dataset))


@kept(max_entries=2)
def _labeled_dataset(_store, path: str, dataset: str, stamp: tuple) -> geval.Dataset | None:
    return _store.dataset(dataset, side="you") if len(_store.labels(dataset)) else None
