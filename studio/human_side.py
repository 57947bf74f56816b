"""What the judge is compared with (the dataset's human side: the people, your labels, or
both) and how many labels buy how much agreement, as the Agreement and Label pages show them."""

from __future__ import annotations

import pandas as pd
import streamlit as st

import geval
from studio import cached
from studio.text import plain


def line(store: geval.Store, dataset: str, labeled: pd.DataFrame) -> str:
    """"Compared with: your labels (Natural: 12 items labeled)"."""
    side = store.human_side(dataset)
    counted = "; ".join(f"{row.aspect}: {geval.reporting.counted(row.items, 'item')} labeled by {row.annotators}"
                        for row in labeled.itertuples())
    return f"Compared with: {geval.labeling.HUMAN_SIDES[side]}" + (f" ({counted})" if counted else "")


#: What is said when every item has one annotator's score on the human side.
ONE_ANNOTATOR = ("One annotator per item: there is no estimate of how reliable these scores are (how much people "
                 "agree with each other needs two or more annotators on the same items), so there is no human "
                 "ceiling to read the judge's agreement against.")


def choose(store: geval.Store, dataset: geval.Dataset, labeled: pd.DataFrame) -> str:
    """The line saying what the judge is compared with; when the dataset has human scores of its
    own and labels too, the choice (kept in the store: every page, the CLI and the report follow it).
    With no human score at all, a pointer to the Label page, and the page stops. Returns what the
    judge is compared with, for a heading: "your labels", "one annotator" or "people"."""
    if dataset.aspects and len(labeled):
        st.session_state["agree_side"] = store.human_side(dataset.name)
        st.radio("Compared with", list(geval.labeling.HUMAN_SIDES), format_func=geval.labeling.HUMAN_SIDES.get,
                 horizontal=True, key="agree_side", on_change=_keep, args=(store, dataset.name),
                 help="Kept with the dataset in the store: Inspect, Compare, Tune, the leaderboard, the report and "
                      "`python -m geval agree` read people the same way.")
    st.caption(plain(line(store, dataset.name, labeled)))
    most = geval.labeling.most_scores(store.items(dataset.name))  # read from the items' columns, kept with them
    if most is None:
        st.info(f"{dataset.name} has no human score to compare the judge with yet: label items yourself, or import "
                "labels on the Data page (or with `python -m geval labels import`).")
        st.page_link("views/7_label.py", label="Go to Label", icon=":material/label:")
        st.stop()
    if most == 1:
        st.caption(ONE_ANNOTATOR)
    return "your labels" if store.human_side(dataset.name) == "you" else "one annotator" if most == 1 else "people"


def _keep(store: geval.Store, dataset: str) -> None:
    store.set_human_side(dataset, st.session_state["agree_side"])


def curves(store: geval.Store, dataset: geval.Dataset, combos: pd.DataFrame, labeled: pd.DataFrame,
           combo: pd.Series | None, key: str = "agree") -> None:
    """"How many labels buy how much": for an aspect with enough labels, the judge alone and the
    combination fitted on the labels against the number of labels (nothing without labels)."""
    if labeled.empty:
        return
    st.subheader("How many labels buy how much")
    enough = list(labeled.loc[labeled["items"] >= geval.labeling.MIN_FIT, "aspect"])
    if not enough:
        st.caption(f"With {geval.labeling.MIN_FIT} labels of an aspect, the agreement of the judge alone and of a "
                   "combination of every judge score and baseline fitted on your labels shows here, against the "
                   "number of labels.")
        return
    aspect = st.selectbox("Labeled aspect", enough, key=f"{key}_curve_aspect") if len(enough) > 1 else enough[0]
    show_curve(store, dataset.name, aspect, combos, combo, key=key)


def show_curve(store: geval.Store, dataset: str, aspect: str, combos: pd.DataFrame, combo: pd.Series | None,
               annotator: str | None = None, key: str = "agree") -> None:
    """One aspect's learning curve: the figure, its table and its notes (a warning when there is none)."""
    try:
        learned = cached.learning_curve(store, dataset, aspect, combos[combos["ok"] > 0], combo, annotator)
    except geval.GevalError as exc:
        st.warning(plain(str(exc)))
        return
    st.caption(plain(geval.reporting.curve_caption(learned)))
    st.plotly_chart(geval.reporting.learning_curve_figure(learned), key=f"{key}_curve")
    st.dataframe(geval.reporting.curve_table(learned), hide_index=True, key=f"{key}_curve_table")


def declare_named(store: geval.Store, dataset: str, aspects: list, mine: dict) -> str:
    """The Label page's aspects named with their scales (`geval.labeling.LabelAspect`): once one has a
    label, its scale is declared as the one people were asked on, where the dataset declares none for it
    yet (judges on another scale are then mapped onto it). What was declared, or why not, in words ("" when
    nothing changed)."""
    declared = {aspect.lower() for aspect in [*store.scales(dataset), *store.categories(dataset)]}  # categories:
    wanted = {a.name: (float(a.min), float(a.max)) for a in aspects  # labels, no scale to declare
              if a.name.lower() not in declared and len(mine.get(a.name, ())) > 0}
    if not wanted:
        return ""
    try:
        store.declare_scales(dataset, wanted)
    except geval.GevalError as exc:
        return f"The scale of your labels is not declared as the people's: {exc}."
    return ("Declared as the scale people were asked on: " + ", ".join(f"{name} {low:g}-{high:g}" for name, (low, high)
                                                                       in wanted.items())
            + " (judges on another scale are mapped onto it; the Data page changes it).")
