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


def section(store: geval.Store, dataset: geval.Dataset, combos: pd.DataFrame) -> list[str]:
    """Each pass/fail aspect's systems' rates, or why there are none (nothing when there is no such
    aspect); returns those aspects."""
    stamp = (cached.stamps(combos), store.human_stamp(dataset.name))
    aspects = _aspects(store, str(store.path), dataset.name, stamp)
    items = store.items(dataset.name)  # the human side's: your labels where chosen, not the file's own labels
    for aspect in aspects:
        per_system = geval.labeling.labels_to_draw(items, aspect)  # labeled on every item: labels drawn from them
        try:
            found = _rates(store, str(store.path), dataset.name, aspect, per_system, stamp)
        except geval.GevalError as exc:
            st.info(plain(f"{aspect}: {exc}"), icon=":material/info:")
            continue
        st.markdown(f"**{plain(found.title())}**")
        st.caption(plain(found.source_line()))  # the intervals' method as made (it said betting beside Student's t)
        for note in found.means.notes:
            st.caption(plain(note))
        st.dataframe(found.table(), hide_index=True, key=f"pass_rates_{aspect}")
        st.caption(plain(found.judge_line()))
    return aspects


@st.cache_data(show_spinner=False, max_entries=16)
def _aspects(_store, path: str, dataset: str, stamp: tuple) -> list[str]:
    return geval.labeling.pass_aspects(_store, dataset)


@st.cache_data(show_spinner="Estimating each system's pass rate…", max_entries=16)
def _rates(_store, path: str, dataset: str, aspect: str, per_system: int | None, stamp: tuple):
    return geval.labeling.pass_rates(_store, dataset, aspect, per_system=per_system)
