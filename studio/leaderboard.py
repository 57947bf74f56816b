"""The Agreement page's leaderboard (`geval.leaderboard`): judges beside baseline metrics and the people
themselves, computed when asked; on a dataset labeled with categories alone, why there is none."""

from __future__ import annotations

import pandas as pd
import streamlit as st

import geval
from studio import cached
from studio.text import plain

#: The leaderboard's baselines until others are chosen (the report uses the same; `geval report`'s default too).
DEFAULT_BASELINES = geval.OPTIONS.fast_baselines
BASELINES = "agree_lb_baselines"  # the session key of the baselines chosen


def baselines() -> tuple[str, ...]:
    """The baselines chosen in this session (the report's too)."""
    return tuple(st.session_state.get(BASELINES, DEFAULT_BASELINES))


def section(store: geval.Store, dataset: str, combos: pd.DataFrame, variant: str, n_boot: int,
            labels_only: list[str]) -> None:
    """The leaderboard's heading, its choices and, once "Compute" is on, its tables; `labels_only`: the dataset's
    aspects when every one is labeled with categories (`geval.reporting.labels_only`), said instead."""
    st.subheader("Leaderboard")
    if labels_only:  # nothing to correlate: said, not offered and then refused
        st.info(plain(f"Every human aspect here is labeled with categories ({', '.join(labels_only)}): a "
                      "leaderboard correlates scores, so there is none. Each judge's accuracy is in the table above, "
                      "how it errs label by label below, and whether it can replace an annotator in its own section."))
        return
    st.caption("Judges beside baseline metrics (ROUGE-L, BLEU, chrF against the grounding or context, response "
               "length, an embedding similarity, BERTScore, the model's likelihood gain from the context) and the "
               "people themselves (one annotator against the others): each cell is the dataset protocol's correlation "
               "with its 95% interval; – where a row has none (an aspect its judge does not score, the people's "
               "average).")
    left, right = st.columns([3, 2])
    chosen = left.multiselect(
        "Baselines", list(geval.OPTIONS.baselines), default=list(DEFAULT_BASELINES), key=BASELINES,
        help="'embedding' and 'bertscore' run a model on every response and grounding once, 'pmi' reads every "
             "response after its conversation with the GGUF model (slow the first time; cached in the store).")
    combined = right.toggle("Ensemble and held-out rows", key="agree_lb_combined",
                            help="The mean of the judge rows and of each pair of them (no human labels); each judge "
                                 "calibrated, each judge and then every judge together combined with the baselines, "
                                 "fitted on other folds' groups (these rows use human labels, as their notes say).")
    if not right.toggle("Compute", key="agree_lb", help="Baselines and bootstrap take a while on large datasets."):
        st.caption("The leaderboard is made when Compute is on: the judges beside the baselines, ranked.")
        return
    try:
        board = cached.leaderboard(store, dataset, combos, tuple(chosen), variant, n_boot, combined=combined)
    except geval.GevalError as exc:
        st.error(str(exc))
        return
    for line in board.fallback:  # the dataset's own protocol cannot be computed: the levels that can, said
        st.info(plain(line))
    st.dataframe(board.wide(supervised=False).drop(columns=["signature"]), hide_index=True, key="agree_leaderboard")
    best = board.best_of()
    if best is not None:
        st.caption(f"Rows that use the human labels (fitted on other folds' groups): beside the judge's, not the "
                   f"judge; **{plain(best[0])}** is the best of {best[1]}. Their intervals leave out refitting.")
        st.dataframe(board.wide(supervised=True).drop(columns=["signature"]), hide_index=True,
                     key="agree_leaderboard_fitted")
    versus, fitted = board.versus(), board.versus(supervised=True)
    if not versus.empty:
        st.caption(f"Each judge row minus **{plain(versus['against'].iloc[0])}** on the items both scored: the "
                   "difference [95% paired interval over groups] and its p-value. Positive: the row agrees "
                   "better with people. Judge rows only; `caveat` says what a row is beyond the judge alone.")
        st.dataframe(versus.drop(columns="against"), hide_index=True, key="agree_versus")
    if not fitted.empty:
        st.caption(f"The rows that use the human labels minus **{plain(fitted['against'].iloc[0])}**, apart: "
                   f"not the judge; the best is the best of {best[1] if best else len(fitted)}, and the "
                   "intervals treat the fitted predictions as fixed (no refit), so they are too narrow.")
        st.dataframe(fitted.drop(columns="against"), hide_index=True, key="agree_versus_fitted")
    for line in board.skipped:
        st.warning(plain(line))
    with st.expander("Leaderboard signatures"):
        for row_label, signature in zip(board.rows["row"], board.rows["signature"]):
            if signature:
                st.text(f"{row_label}\n{signature}")
    st.download_button("Leaderboard as CSV", board.cells.to_csv(index=False),
                       file_name=f"leaderboard-{dataset}.csv", mime="text/csv", key="agree_lb_csv",
                       icon=":material/download:")
