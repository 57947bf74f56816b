"""Pass rates (`geval.labeling.pass_rates`) as the Agreement page shows them, in the systems'
section: on each aspect people label pass/fail (yes/no, true/false), each system's rate from the
judge on every item and people's labels on a few, and the judge's true-positive and true-negative
rates. Cached until a judge gets new judgments or the human side changes."""

from __future__ import annotations

import pandas as pd
import streamlit as st

import geval
from studio import cached
from studio.text import plain


def aspects(store: geval.Store, dataset: geval.Dataset, combos: pd.DataFrame) -> list[str]:
    """The aspects people label pass/fail (`geval.labeling.pass_aspects`), read once per judgments' change."""
    return _aspects(store, str(store.path), dataset.name, _stamp(store, dataset, combos))


def section(store: geval.Store, dataset: geval.Dataset, combos: pd.DataFrame, rated: list[str],
            per_system: int | None) -> None:
    """Each pass/fail aspect's (`rated`) systems' rates, or why there are none; where people labeled every
    item, `per_system` labels drawn from theirs (the section's "Labels per system"; None: the default)."""
    stamp = _stamp(store, dataset, combos)
    items = store.items(dataset.name)  # the human side's: your labels where chosen, not the file's own labels
    for aspect in rated:
        drawn = geval.labeling.labels_to_draw(items, aspect, per_system)  # labeled on every item: drawn from them
        try:
            found = _rates(store, str(store.path), dataset.name, aspect, drawn, stamp)
        except geval.GevalError as exc:
            st.info(plain(f"{aspect}: {exc}"), icon=":material/info:")
            continue
        st.markdown(f"**{plain(found.title())}**")
        st.caption(plain(found.source_line()))  # the intervals' method as made (it said betting beside Student's t)
        for note in found.means.notes:
            st.caption(plain(note))
        st.dataframe(found.table(), hide_index=True, key=f"pass_rates_{aspect}")
        st.caption(plain(found.judge_line()))


def _stamp(store: geval.Store, dataset: geval.Dataset, combos: pd.DataFrame) -> tuple:
    return cached.stamps(combos), store.human_stamp(dataset.name)


@st.cache_data(show_spinner=False, max_entries=16)
def _aspects(_store, path: str, dataset: str, stamp: tuple) -> list[str]:
    return geval.labeling.pass_aspects(_store, dataset)


@st.cache_data(show_spinner="Estimating each system's pass rate…", max_entries=16)
def _rates(_store, path: str, dataset: str, aspect: str, per_system: int | None, stamp: tuple):
    return geval.labeling.pass_rates(_store, dataset, aspect, per_system=per_system)
