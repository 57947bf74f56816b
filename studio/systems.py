"""Systems as people would score them (`geval.labeling.system_means`) as the Agreement page shows
them: the aspect and judge, the forest plot of each system's three estimates, a sentence per
comparison, the ranking, the judges by the labels they save; and the Label page's line of how many
more labels this system's mean needs for ±0.10. Cached until a judge gets new judgments or the
human side changes."""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd
import streamlit as st

import geval
from studio import cached, pass_rates, state
from studio.text import plain

TOGETHER = "all judges together"


def section(store: geval.Store, dataset: geval.Dataset, combos: pd.DataFrame, chosen: list[str] | None = None) -> None:
    """The Agreement page's section "Systems as people would score them"; its judge follows the first
    of the combinations `chosen` above it that is compared with the aspect, until one is picked here."""
    who, whose = geval.labeling.SCORERS[store.human_side(dataset.name)]  # your labels: the mean you would give
    st.subheader(f"Systems as {who} would score them")
    st.caption(f"The mean {who} would give each system, from {whose} of a few items and the judge's score of "
               f"every item (prediction-powered inference), beside {whose} alone and the judge's own mean "
               "(biased by an unknown amount: no interval). 95% intervals for these labels, however skewed the "
               "scores (Student's t with a label added at each end of the scale, sampled without replacement: "
               "docs/statistics.md); the Label page's line, which follows each new label, uses intervals valid at "
               "any number of labels (betting).")
    aspects, left_out = _estimable(store, dataset.name, combos)
    rated = pass_rates.aspects(store, dataset, combos)  # pass/fail aspects: each system's rate instead of a mean
    for line in left_out:
        if not any(line.startswith(f"{aspect} is categorical") for aspect in rated):
            st.caption(plain(f"Left out: {line}."))
    if not aspects and not left_out and not rated:
        st.info("No judge here is compared with a human aspect: score one, or import one, to estimate the systems.")
    if aspects:
        per_system = _means_part(store, dataset, combos, aspects, chosen or [])
    elif rated:  # pass/fail alone: the rates' own "Labels per system"
        per_system = _labels_input(st.columns([2, 3, 2])[0], store.items(dataset.name), rated[0])
    else:
        return
    pass_rates.section(store, dataset, combos, rated, per_system)  # at the one "Labels per system", as the report


def _means_part(store: geval.Store, dataset: geval.Dataset, combos: pd.DataFrame, aspects: list[str],
                chosen: list[str]) -> int | None:
    """The systems' means of a numeric aspect picked among `aspects`, with its judge and "Labels per system"
    (returned: the labels per system drawn, None where the labels given are read)."""
    left, middle, right = st.columns([2, 3, 2])
    state.keep_valid("systems_aspect", aspects)
    aspect = left.selectbox("Aspect", aspects, key="systems_aspect")
    found = cached.label_features(store, dataset.name, aspect, combos, None)
    judges = [found.judge] + [r for r in found.rows if r != found.judge]
    options = [*judges, TOGETHER] if len(judges) > 1 else judges
    per_system = _labels_input(right, store.items(dataset.name), aspect)
    preferred, why = worth_most(store, dataset, aspect, combos, chosen, per_system)
    state.follow("systems_judge", preferred, options)
    names = geval.reporting.judge_names(store, dataset.name)
    judge = middle.selectbox("Combined with", options, key="systems_judge",
                             format_func=lambda j: j if j == TOGETHER else names(found.sources[j][0]),
                             help="Each judge compared with the aspect; the judges' table below is worth all of them.")
    by_label = combos.set_index("label")
    pair = None  # the first judge: read without a combination, as `worth_most` read it (the same means, kept)
    if judge not in (TOGETHER, found.judge):
        label = found.sources[judge][0]
        pair = cached.pair(by_label.loc[label]) if label in by_label.index else None
    st.caption(plain(f"The combined estimate reads {judge}, " + (why if judge == preferred else "picked here") + "."))
    try:
        result = _means(store, dataset.name, aspect, pair, judge == TOGETHER, per_system, combos)
    except geval.GevalError as exc:
        st.info(plain(str(exc)), icon=":material/info:")
        return per_system
    for note in result.notes:
        st.caption(plain(note))
    if line := bottom_line(store, dataset, aspect, combos, per_system):
        st.info(plain(f"Bottom line on {line}"), icon=":material/flag:")
    st.plotly_chart(geval.reporting.systems_forest(result), key="systems_forest")
    st.dataframe(geval.reporting.systems_table(result), hide_index=True, key="systems_table")
    if len(result.table) > 1:
        st.caption(plain(result.pairs_line()))
        with st.container(key="systems_sentences"):
            for line in result.sentences():
                st.markdown(f"- {plain(line)}")
        ranking = st.columns([2, 3])[0]  # the judges' table below it, whole: an imported judge's name is long
        ranking.caption(plain(f"{geval.reporting.systems_line(result, names)} Ranks each system may hold, for all "
                              "pairs together (wider than a sentence's interval for one pair):"))
        ranking.dataframe(geval.reporting.ranking_table(result), hide_index=True, key="systems_ranking")
    worth = st.container()  # the page's width: every column of the judges' table in view
    worth.caption(plain(f"The judges by the labels they are worth here: {geval.reporting.worth_words(result)} "
                        "[95% over groups], beside their Pearson with people within systems and the alternative "
                        "annotator test's advantage probability."))
    advantage = _advantage(store, dataset.name, combos)
    worth.dataframe(geval.reporting.worth_table(result, advantage, names), hide_index=True, key="systems_worth",
                    column_config={"judge": st.column_config.TextColumn(width="large", pinned=True),
                                   "judge in full": st.column_config.TextColumn(width="large")})
    if line := geval.reporting.saved_line(result):
        worth.caption(plain(line))
    return per_system


def worth_most(store: geval.Store, dataset: geval.Dataset, aspect: str, combos: pd.DataFrame, chosen: list[str],
               per_system: int | None) -> tuple[str, str]:
    """The judge the section opens on, and why: the one worth most labels on the aspect
    (`geval.reporting.bottom_line.worth_most`) of the combinations `chosen` above that are compared with it,
    else of every judge; the one closest to people (`geval.reporting.bottom_line.closest`) when no judge's
    worth can be read (too few labels, every item labeled), the newest when not even that can; the only judge
    compared with the aspect said to be that."""
    found = cached.label_features(store, dataset.name, aspect, combos, None)
    judges = [found.judge] + [r for r in found.rows if r != found.judge]
    if len(judges) == 1:  # "worth most ... of those chosen above", or "closest to people" at a Pearson of -0.43,
        return judges[0], f"the only judge compared with {aspect}"  # said of the only one
    compared = [label for label in chosen if any(found.sources.get(j, ("",))[0] == label for j in judges)]
    each = _judges_on(store, dataset.name, aspect, combos)  # with the labels
    try:
        result = _means(store, dataset.name, aspect, None, False, per_system, combos)
    except geval.GevalError:
        result = None
    best = None if result is None else geval.reporting.bottom_line.worth_most(
        result.worth, set(each.index[each["constant"]]), compared or None)
    if best is None:  # the simple reference instead
        closest = geval.reporting.bottom_line.closest(each)
        if closest is None:
            return judges[0], f"the most recently scored judge compared with {aspect} (no judge's worth or " \
                              "correlation can be read yet)"
        return closest, (f"the judge closest to people on {aspect} (the highest Pearson within systems; no judge's "
                         "worth can be read here)")
    return best, f"the judge worth most labels on {aspect}" + (" of those chosen above" if compared else "")


def opens_on(store: geval.Store, dataset: geval.Dataset, combos: pd.DataFrame,
             chosen: list[str]) -> tuple[str, str, str] | None:
    """The judge worth most labels (`worth_most`) on the aspect this section shows (its first, until one is
    picked), for the page's other parts to open on: (its combination's label, the aspect, why); None
    without an aspect whose systems' means can be read."""
    aspects, _ = _estimable(store, dataset.name, combos)
    if not aspects:
        return None
    aspect = st.session_state.get("systems_aspect") if st.session_state.get("systems_aspect") in aspects else aspects[0]
    per_system = geval.labeling.labels_to_draw(store.items(dataset.name), aspect,  # the human side's scores: labels too
                                               st.session_state.get("systems_labels"))
    column, why = worth_most(store, dataset, aspect, combos, chosen, per_system)
    found = cached.label_features(store, dataset.name, aspect, combos, None)
    return found.sources.get(column, (column,))[0], aspect, why


def bottom_line(store: geval.Store, dataset: geval.Dataset, aspect: str, combos: pd.DataFrame,
                per_system: int | None) -> str:
    """The aspect's bottom line (`geval.reporting.bottom_line.sentence`), as the report opens with it:
    the judge worth most labels of every one, what it saves, whether it may replace an annotator (the test as
    chosen above), where Pearson and the advantage probability differ; "" when the systems' means cannot be
    read."""
    from studio import alttest

    bottom = geval.reporting.bottom_line
    try:
        result = _means(store, dataset.name, aspect, None, False, per_system, combos)
        tests = cached.alttest(store, dataset.name, combos, *alttest.choices(store, dataset.name))["mode"]
    except geval.GevalError:
        return ""
    frame = bottom.figures(aspect, _judges_on(store, dataset.name, aspect, combos), bottom.saved_by(result),
                           {(t.judge, t.aspect): t for t in tests if not t.baseline})
    constant = next((t for t in tests if t.baseline and t.aspect.lower() == aspect.lower()), None)
    labels = result.table["labeled"].median() if len(result.table) else None
    return bottom.sentence(aspect, frame, bottom.default_of(frame), labels, bottom.short_names(frame["combo"]),
                           constant, "every item is labeled, so there is nothing for a judge to save"
                           if result.every_item_labeled else "",
                           systems=bottom.has_systems(result),
                           who=geval.labeling.COMPARED_WITH[store.human_side(dataset.name)])


def _labels_input(column, items: list, aspect: str) -> int | None:
    """Where people scored every item of the aspect: how many labels per system to draw from their
    scores (by default half the smallest system's items, at least 5); else None (the labels given)."""
    sizes = geval.labeling.drawn_from(items, aspect)
    if sizes is None:
        return None
    most = max(max(sizes), geval.labeling.MIN_LABELS)
    per = " per system" if len(sizes) > 1 else ""  # a file without systems: labels of the whole dataset
    return column.number_input(
        f"Labels{per} (drawn from the dataset's scores)", geval.labeling.MIN_LABELS, most,
        key=state.start_at("systems_labels", geval.labeling.default_labels(sizes), lambda held: held <= most),
        help=f"People scored every item here: this reads what this many labels{per} would give, the people's "
             f"mean over every item beside it (the line below says how they are drawn). At {most} every item is "
             "labeled: the people's own mean, no estimate.")


@st.cache_data(show_spinner=False, max_entries=16)
def _cached_estimable(_store, path: str, dataset: str, stamp: tuple) -> tuple[list[str], list[str]]:
    return geval.labeling.estimable_aspects(_store, dataset)


def _estimable(store: geval.Store, dataset: str, combos: pd.DataFrame) -> tuple[list[str], list[str]]:
    return _cached_estimable(store, str(store.path), dataset, (cached.stamps(combos), store.human_stamp(dataset)))


def _judges_on(store: geval.Store, dataset: str, aspect: str, combos: pd.DataFrame) -> pd.DataFrame:
    """`geval.reporting.bottom_line.judges_on` of the aspect, with the labels: read once for the section,
    the judge it opens on and the bottom line."""
    return _cached_judges_on(store, str(store.path), dataset, aspect, (cached.stamps(combos), store.human_stamp(dataset)),
                             combos)


@st.cache_data(show_spinner=False, max_entries=16)
def _cached_judges_on(_store, path: str, dataset: str, aspect: str, stamp: tuple, _combos: pd.DataFrame) -> pd.DataFrame:
    found = cached.label_features(_store, dataset, aspect, _combos, None)
    return geval.reporting.bottom_line.judges_on(found, _store.items(dataset), aspect)


def _advantage(store: geval.Store, dataset: str, combos: pd.DataFrame) -> dict:
    """The advantage probability of each judge and aspect, as the section above computed it (its epsilon)."""
    from studio import alttest

    try:
        results = cached.alttest(store, dataset, combos, alttest.epsilon(store, dataset), None)["mode"]
    except geval.GevalError:
        return {}
    return {(r.judge, r.aspect): r.advantage_probability for r in results}


def _means(store: geval.Store, dataset: str, aspect: str, combo: tuple | None, together: bool,
           per_system: int | None, combos: pd.DataFrame, anytime: bool = False):
    return _cached_means(store, str(store.path), dataset, aspect, combo, together,
                         int(per_system) if per_system else None,
                         (cached.stamps(combos), store.human_stamp(dataset)), anytime)


@st.cache_data(show_spinner="Estimating each system's mean…", max_entries=16)
def _cached_means(_store, path: str, dataset: str, aspect: str, combo: tuple | None, together: bool,
                  per_system: int | None, stamp: tuple, anytime: bool = False):
    return geval.labeling.system_means(_store, dataset, aspect, combo, together, per_system, "documents",
                                       anytime=anytime)


def label_lines(store: geval.Store, dataset: str, aspect: str, combos: pd.DataFrame, combo: pd.Series | None,
                systems: Iterable[str]) -> dict[str, str]:
    """The Label page's line for each of `systems` (plain text, shown beside an item of it): the system's
    combined interval from the labels so far, whose labels they are, and about how many more labels
    bring it to ±0.10, or how many it needs first."""
    counted = geval.reporting.positive(geval.reporting.aspect_words(store.categories(dataset), aspect))  # a rate
    what = _estimated(geval.labeling.SCORERS[store.human_side(dataset)][0], counted)  # your labels: as you would
    try:
        result = _means(store, dataset, aspect, cached.pair(combo) if combo is not None else None, False, None, combos,
                        anytime=True)  # the line follows each new label: valid however many come
    except geval.GevalError as exc:
        return {system: f"{_whose(system)} {what}: {exc}" for system in systems}
    return {system: _label_line(result, aspect, system, what, counted) for system in systems}


def _whose(system: str) -> str:
    """Whose estimate a line gives: "This system's", or of a dataset without systems "The dataset's"."""
    return "This system's" if system else "The dataset's"


def _estimated(who: str, counted: str | None) -> str:
    """What a system's line estimates: "mean as people would score it", "pass rate as you would give it"."""
    return f"{counted} rate as {who} would give it" if counted else f"mean as {who} would score it"


def _label_line(result: geval.labeling.SystemMeans, aspect: str, system: str, what: str,
                counted: str | None = None) -> str:
    """A system's line of `what` it estimates (`_estimated`); on a pass/fail aspect (`counted`: the word its rate
    counts), its rate in percent."""
    shown = (lambda v: f"{v:.0%}") if counted else (lambda v: f"{v:.2f}")
    rows = result.table[result.table["system"] == system]
    if rows.empty:
        named = f" ({system})" if system else ""
        return f"{_whose(system)} {what} needs {geval.labeling.MIN_LABELS} labels of it{named}."
    row = rows.iloc[0]
    where = system or "the dataset"
    if row["labeled"] >= row["items"]:
        return (f"{where}'s {what} ({aspect}): {shown(row['people'])}, from "
                f"{result.source} on every one of its {row['items']} items: their own {'rate' if counted else 'mean'}, "
                "not an estimate.")
    more = geval.labeling.more_labels(row)
    target = f"{geval.labeling.TARGET:.0%}" if counted else f"{geval.labeling.TARGET:.2f}"
    said = f"±{target} reached" if more == 0 else f"about {more} more labels for ±{target}"
    return (f"{where}'s {what} ({aspect}): {shown(row['combined'])} "
            f"[{shown(row['combined_low'])}, {shown(row['combined_high'])}] with the judge, "
            f"[{shown(row['people_low'])}, {shown(row['people_high'])}] from {result.source} alone "
            f"({row['labeled']} of its {row['items']} items); {said}.")
