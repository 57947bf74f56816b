"""Systems as people would score them (`geval.labeling.system_means`) as the Agreement page shows
them: the aspect and judge, the forest plot of each system's three estimates, a sentence per
comparison, the ranking, the judges by the labels they save; and the Label page's line of how many
more labels this system's mean needs for ±0.10. Cached until a judge gets new judgments or the
human side changes."""

from __future__ import annotations

import pandas as pd
import streamlit as st

import geval
from studio import cached, state
from studio.text import plain

TOGETHER = "all judges together"


def section(store: geval.Store, dataset: geval.Dataset, combos: pd.DataFrame) -> None:
    """The Agreement page's section "Systems as people would score them"."""
    st.subheader("Systems as people would score them")
    st.caption("The mean people would give each system, from people's scores of a few items and the judge's score of "
               "every item (prediction-powered inference), beside the people's labels alone and the judge's own mean "
               "(biased by an unknown amount: no interval). 95% intervals valid at any number of labels, however "
               "skewed the scores (betting intervals for a bounded mean, sampled without replacement).")
    aspects = [a for a in dataset.aspects if a.lower() in _compared(store, dataset.name)]
    if not aspects:
        st.info("No judge here is compared with a human aspect: score one, or import one, to estimate the systems.")
        return
    left, middle, right = st.columns([2, 3, 2])
    state.keep_valid("systems_aspect", aspects)
    aspect = left.selectbox("Aspect", aspects, key="systems_aspect")
    found = cached.label_features(store, dataset.name, aspect, combos, None)
    judges = [found.judge] + [r for r in found.rows if r != found.judge]
    state.keep_valid("systems_judge", [*judges, TOGETHER])
    judge = middle.selectbox("Combined with", [*judges, TOGETHER] if len(judges) > 1 else judges, key="systems_judge")
    complete = all(item.human.get(aspect) for item in dataset.items)
    per_system = right.number_input("Labels per system (drawn from the dataset's scores)", 5, 200, 20,
                                    key="systems_labels", disabled=not complete,
                                    help="People scored every item here: this reads what this many labels per "
                                         "system, a document at a time, would give, the truth beside.") \
        if complete else None
    by_label = combos.set_index("label")
    combo = next((r for r in found.rows if r == judge), None)
    pair = None
    if combo is not None:
        label = combo.rsplit(": ", 1)[0]
        pair = cached.pair(by_label.loc[label]) if label in by_label.index else None
    try:
        result = _means(store, dataset.name, aspect, pair, judge == TOGETHER, per_system, combos)
    except geval.GevalError as exc:
        st.info(plain(str(exc)), icon=":material/info:")
        return
    for note in result.notes:
        st.caption(plain(note))
    st.plotly_chart(geval.reporting.systems_forest(result), key="systems_forest")
    st.dataframe(geval.reporting.systems_table(result), hide_index=True, key="systems_table")
    if len(result.table) > 1:
        with st.container(key="systems_sentences"):
            for line in result.sentences():
                st.markdown(f"- {plain(line)}")
        ranking, worth = st.columns([2, 3])
        ranking.caption("Ranks each system may hold, for all pairs together:")
        ranking.dataframe(geval.reporting.ranking_table(result), hide_index=True, key="systems_ranking")
    else:
        worth = st.container()
    worth.caption("The judges by the labels they are worth here: the labels alone that would give the combined "
                  "interval's width [95% over groups], beside the alternative annotator test's advantage probability.")
    advantage = _advantage(store, dataset.name, combos)
    worth.dataframe(geval.reporting.worth_table(result, advantage), hide_index=True, key="systems_worth")


def _compared(store: geval.Store, dataset: str) -> set[str]:
    combos = store.combos(dataset)
    items = store.items(dataset)
    names = list(dict.fromkeys(a for item in items for a in item.human))
    if not names or combos.empty:
        return set()
    found = cached.label_features(store, dataset, names[0], combos, None)
    return {h.lower() for h in found.compared.values()}


def _advantage(store: geval.Store, dataset: str, combos: pd.DataFrame) -> dict:
    """The advantage probability of each judge and aspect, as the section above computed it (its epsilon)."""
    from studio import alttest

    try:
        results = cached.alttest(store, dataset, combos, alttest.epsilon(store, dataset), None)["mode"]
    except geval.GevalError:
        return {}
    return {(r.judge, r.aspect): r.advantage_probability for r in results}


def _means(store: geval.Store, dataset: str, aspect: str, combo: tuple | None, together: bool,
           per_system: int | None, combos: pd.DataFrame):
    return _cached_means(store, str(store.path), dataset, aspect, combo, together,
                         int(per_system) if per_system else None,
                         (cached.stamps(combos), store.human_stamp(dataset)))


@st.cache_data(show_spinner="Estimating each system's mean…", max_entries=16)
def _cached_means(_store, path: str, dataset: str, aspect: str, combo: tuple | None, together: bool,
                  per_system: int | None, stamp: tuple):
    return geval.labeling.system_means(_store, dataset, aspect, combo, together, per_system, "documents")


def label_line(store: geval.Store, dataset: str, aspect: str, combos: pd.DataFrame, combo: pd.Series | None,
               system: str) -> None:
    """The Label page's line: this system's combined interval from the labels so far and about how
    many more labels bring it to ±0.10, or how many it needs first."""
    try:
        result = _means(store, dataset, aspect, cached.pair(combo) if combo is not None else None, False, None, combos)
    except geval.GevalError as exc:
        st.caption(f"This system's mean as people would score it: {plain(str(exc))}")
        return
    rows = result.table[result.table["system"] == system]
    if rows.empty:
        st.caption(f"This system's mean as people would score it needs {geval.labeling.MIN_LABELS} labels of it "
                   f"({plain(system or 'the dataset')}).")
        return
    row = rows.iloc[0]
    more = geval.labeling.more_labels(row)
    where = plain(system) if system else "the dataset"
    said = "all its items are labeled" if more is None else ("±0.10 reached" if more == 0 else
                                                            f"about {more} more labels for ±{geval.labeling.TARGET:.2f}")
    st.caption(f"{where}'s mean as people would score it ({plain(aspect)}): {row['combined']:.2f} "
               f"[{row['combined_low']:.2f}, {row['combined_high']:.2f}] with the judge, "
               f"[{row['people_low']:.2f}, {row['people_high']:.2f}] from your labels alone; {said}.")
