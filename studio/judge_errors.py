"""How the judge errs (`geval.reporting.how_it_errs`) as the Agreement page shows it, for the
template version, judge and aspect chosen for its plots: the sentences, the confusion matrix and each
label's precision and recall for labels, the Bland-Altman plot and the use of the scale for scores,
the other tables folded. Cached until the combination gets new judgments or the human side changes."""

from __future__ import annotations

import pandas as pd
import streamlit as st

import geval
from studio import cached
from studio.text import plain


def section(store: geval.Store, dataset: str, combo: pd.Series, variant: str, aspect: str, human: str,
            per_item: bool = True) -> None:
    """The section "How the judge errs" of `combo`'s `aspect` (its name) against `human`, named first (the judge
    and aspect picked under Item by item; `combo`: its row of `Store.combos` by label); `per_item` False: the
    Bland-Altman plot as bubbles, one per place sized by its items."""
    errs = geval.reporting.how_it_errs
    st.subheader("How the judge errs")
    st.markdown(f"**{plain(combo.name)}** on {plain(aspect)}: the judge and aspect picked under Item by item, above.")
    st.caption(errs.INTRO)
    try:
        found = _read(store, str(store.path), dataset, cached.pair(combo), variant,
                      (cached.stamp(combo), store.human_stamp(dataset)))
    except geval.GevalError as exc:  # too few items with both scores: said, not a failure
        st.info(plain(str(exc)))
        return
    one = next((f for f in found if f.aspect == aspect and f.human == human), None)
    if one is None:
        st.info(plain(f"{aspect} is not compared with {human} here: nothing to read."))
        return
    st.markdown("\n".join(f"- {plain(line)}" for line in errs.lines(one)))
    named = errs.tables(one)
    if one.labels is not None:
        figure, table = st.columns(2)
        figure.plotly_chart(errs.confusion_figure(one.labels, f"{aspect}: the judge against {one.against}", one.against),
                            key="errs_confusion")
        # short tables as tables: their cells wrap ("0.800 (no interval: undefined when some group is left out)")
        # where a data grid's cut them at the column's edge
        table.table(named["kappa"], hide_index=True)
        st.table(named["per label"], hide_index=True)
        st.caption(f"Per label, against {one.against}: precision (of the judge's answers of it, the share the "
                   "majority gave too), recall (of the majority's, the share the judge found), F1; 95% intervals over "
                   "groups.")
    if one.scores is not None:
        left, right = st.columns(2)
        left.plotly_chart(errs.bland_altman_figure(one.scores, f"{aspect}: Bland-Altman", per_item),
                          key="errs_bland_altman")
        if "scale use" in named:
            right.plotly_chart(errs.scale_use_figure(one.scores, f"{aspect}: use of the scale"), key="errs_scale_use")
    others = [name for name in named if name not in ("per label", "kappa")]
    if not others:
        return
    with st.expander(f"The other tables: {', '.join(others)}"):  # those there are, named
        for name in others:
            st.caption(name[:1].upper() + name[1:])
            st.dataframe(named[name], hide_index=True, key=f"errs_{name.replace(' ', '_')}")


@cached.kept(show_spinner="Reading how the judge errs…", max_entries=16)
def _read(_store, path: str, dataset: str, combo: tuple, variant: str, stamp: tuple) -> list:
    return geval.reporting.how_it_errs.read(_store, dataset, combo, variant)
