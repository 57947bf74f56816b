"""Agreement: how well each scored template version and judge agrees with people, in numbers
and plots, and how it errs (kappa, confusion, offset, scale use, length); whether one version beats
another on the same items; CSV and a standalone report."""

from collections import Counter

import streamlit as st

import geval
from studio import alttest, cached, human_side, judge_errors, leaderboard, pairwise, state, systems
from studio import combos as scored
from studio.text import plain, with_code


def build_report(dataset: geval.Dataset, pairs: list, tables: dict, levels: tuple, n_boot: int, metric: str,
                 variant: str, baselines: tuple, goals: bool, test: tuple, compared: tuple | None) -> bytes:
    """The report (`geval.reporting.report_page`, the page `geval report --html` writes; read back when the store
    is unchanged since it was made with these choices) as one HTML file, its steps shown while it is built; `test`: the choices of the sections below (`report_choices`); `compared`: Compare's
    A and B."""
    epsilon, alignment, by, per_system = test
    with st.status("Building the report…", expanded=True) as status:
        page = geval.reporting.report_page(store, dataset, combos=pairs, tables=tables, levels=levels, n_boot=n_boot,
                                           metric=metric, variants=(variant,), baselines=baselines, goals=goals,
                                           alttest_epsilon=epsilon, alttest_alignment=alignment, alttest_by=by,
                                           per_system=per_system, compared=compared,
                                           on_progress=status.write).encode("utf-8")
        status.update(label=f"Report built ({len(page) / 1e6:.1f} MB, one file)", state="complete", expanded=False)
    return page


def report_choices(dataset: geval.Dataset) -> tuple:
    """What the report takes from the sections below as they are set in this session: the alternative annotator
    test's epsilon, alignment and t-test unit (None: by the aspect, by the data), and the labels per system
    the systems' means are read at (None: the default)."""
    return (*alttest.choices(store, dataset.name), st.session_state.get("systems_labels"))


st.title("Agreement")
store = state.store()
dataset = state.require_dataset()
combos = scored.require_scored(store, dataset)
by_label = combos.set_index("label")
labels = list(by_label.index)

state.keep_valid("agree_combos", labels)
scored.variants_toggle(combos)
opened = None if "agree_combos" in st.session_state else scored.default_chosen(store, combos, dataset.name)
chosen = st.multiselect("Template versions and judges", scored.menu(combos, st.session_state.get("agree_combos")),
                        default=opened,
                        key="agree_combos", format_func=scored.describe(combos),
                        persist_state="session")
left, middle, right = st.columns([2, 1, 1])
levels = left.multiselect("Levels", list(geval.OPTIONS.levels), default=list(geval.OPTIONS.levels),
                          key="agree_levels", persist_state="session")
labels_only = geval.reporting.labels_only(store, dataset.name)  # pass/fail and the like alone: nothing to correlate
if labels_only:
    metric = middle.selectbox("Metric for the plots", ["accuracy"], key="agree_metric_labels", disabled=True,
                              help=f"Every human aspect here is labeled with categories "
                                   f"({', '.join(labels_only)}): each judge is read by accuracy against the "
                                   "majority label, never correlated.")
else:
    metrics = [*geval.OPTIONS.metrics, *(["accuracy"] if store.categories(dataset.name) else [])]
    state.keep_valid("agree_metric", metrics)
    metric = middle.selectbox("Metric for the plots", metrics, key="agree_metric", persist_state="session",
                              help="A correlation, for aspects scored with numbers; accuracy, for those labeled with "
                                   "categories (pass/fail, a preference), read against the people's majority.")
n_boot = right.number_input("Bootstrap resamples", 100, 10000, 1000, 100, key="agree_boot", persist_state="session",
                            help="Resamples of groups (dialogues, documents) for the system level's 95% intervals "
                                 "(item and group level: the jackknife over groups).")
readable = {v for label in chosen or [] for v in geval.OPTIONS.variants_of(by_label.loc[label, "signature_json"])}
variants = [v for v in geval.OPTIONS.variants if v in readable or v == "wmean"]
state.keep_valid("agree_variant", variants)
variant = st.radio("Score variant", variants, format_func=lambda v: geval.OPTIONS.variants[v], horizontal=True,
                   key="agree_variant", help="Read from the stored distributions, without asking the model again. "
                                             "The mean of sampled answers is offered when a judge chosen above "
                                             "sampled them (an OpenAI-compatible judge in mode samples or auto); "
                                             "an imported judge's score is the same in the other two.")
if not chosen or not levels:
    st.info("Choose at least one template version and judge, and one level.")
    st.stop()
others = scored.hidden(store, combos, chosen)
if others:
    st.caption(plain(f"Not shown, though compared with the same human aspects: {', '.join(others)}. Add them above to "
                     "compare them here and in the report."))
nobody = scored.compared_with_nobody(store, combos, dataset.name)
unmatched = [label for label in nobody if label not in chosen]
if unmatched:
    st.caption(plain(f"Not shown, compared with no aspect people scored here: {', '.join(unmatched)}. Choose one above "
                     "to see why and what to do."))
labeled = geval.labeling.counts(store, dataset.name)
compared_with = human_side.choose(store, dataset, labeled)
side = store.human_side(dataset.name)  # "people", "you" or "both": named in titles and captions

tables, pairs, unsampled = {}, {}, []
for label in chosen:
    row = by_label.loc[label]
    if row["ok"] == 0:  # listed, never drawn: there is nothing to correlate
        st.warning(scored.nothing_scored(store, dataset.name, row))
        continue
    if variant not in geval.OPTIONS.variants_of(row["signature_json"]):
        unsampled.append(label)
        continue
    try:
        tables[label] = cached.agreement(store, dataset.name, row, variant, tuple(levels), int(n_boot))
        pairs[label] = cached.pair(row)
    except geval.GevalError as exc:  # orange where nothing failed: people scored nothing this judge is compared with
        (st.warning if label in nobody else st.error)(with_code(f"{label}: {exc}"))
if unsampled:
    st.caption(plain(f"Not read as the mean of sampled answers: {', '.join(unsampled)} (no sampled answers stored: "
                     "choose another score variant to see them)."))
if not tables:
    st.stop()

stacked = geval.reporting.stack_tables(tables)
categorical = set(stacked["metric"]) == {"accuracy"}  # labels only: read by accuracy, nothing correlated
st.subheader(f"{'Agreement' if categorical else 'Correlation'} with {compared_with}")
st.caption("95% intervals over whole groups (dialogues, documents): the jackknife with Student's t (system level: a "
           "bootstrap; an accuracy: Wilson's, on the items' number weighed by their groups' design effect). Below 10 "
           "groups, or at the system level 10 systems, no interval is given. Unscored and failed judgments are left "
           "out; 'unscored' counts them.")
shown = geval.reporting.display_table(stacked)
if len(tables) == 1 and "combo" in shown:  # one template version and judge: named above, not on every row
    shown = shown.drop(columns="combo")
elif "combo" in shown:  # readable names (template, the version's comment, judge), the hash beside them
    shown.insert(1, "version", shown["combo"].map(by_label["template_version"]))
    shown["combo"] = shown["combo"].map(scored.readable(combos))
st.dataframe(shown, hide_index=True, key="agree_table", column_config={  # a long label never pushes the note out
    "combo": st.column_config.TextColumn("template (version comment) · judge", width=260, pinned=True,
                                         help="Each version's hash is in the next column; the menus above name "
                                              "both."),
    "version": st.column_config.TextColumn("version", width=110, help="The template version's hash."),
    "value [95% CI]": st.column_config.TextColumn(width=235),  # whole: "0.615 (no interval: 8 systems)"
    "note": st.column_config.TextColumn(width="large")})
where = [c for c in ("combo", "aspect", "level") if c in shown]
noted = shown[shown["note"] != ""].groupby([*where, "note"], sort=False)["metric"].agg(", ".join).reset_index()
if len(noted):  # a cell shows a note's first words only; the metrics of a row that share a note, said once
    with st.expander(f"The table's notes in full ({len(noted)})"):
        st.markdown("\n".join(f"- {plain(' · '.join(row[where]))} ({row['metric']}): {plain(row['note'])}"
                               for _, row in noted.iterrows()))
if (stacked["metric"] == "accuracy").any() and set(levels) - {"item"}:
    named = ", ".join(dict.fromkeys(stacked.loc[stacked["metric"] == "accuracy", "human"]))
    st.caption(plain(f"{named}: labeled with categories, read item by item (accuracy against "
                     f"{geval.labeling.MAJORITY_OF[side]}, its interval over whole groups); the group and system levels "
                     "correlate scores, which labels are not."))
thin = stacked[(stacked["level"] == "group") & stacked["value"].isna() & stacked["note"].str.contains("fewer than")]
largest = max(Counter(item.group for item in dataset.items).values(), default=0) if len(thin) else 0
if len(thin) and largest < geval.reporting.MIN_GROUP_ITEMS:  # the file's own groups: nothing to score or label
    st.caption(f"The group level correlates the scores within each dialogue or document, and this dataset's hold "
               f"{geval.reporting.counted(largest, 'item')} at most: it needs {geval.reporting.MIN_GROUP_ITEMS} or "
               "more in a group, so it cannot be read here; the item level can.")
elif len(thin):  # e.g. a random sample of the items, or a few of them labeled: one or two in each group
    short, where = ("labeled", "label whole groups (the Label page)") if side == "you" else \
        ("scored", "score whole groups (the Score page's Items, By group)")
    st.caption(f"The group level correlates the scores within each dialogue or document, and its groups have too few "
               f"{short} items here (the note says how many it needs). A random sample leaves a few in each group: "
               f"{where} instead, {geval.reporting.MIN_GROUPS} or more with at least "
               f"{geval.reporting.MIN_GROUP_ITEMS} items each.")
with st.expander("Judge signatures"):
    for label, (version, signature) in pairs.items():
        st.text(f"{label}\n{signature}")

report_goals = st.checkbox("The project's goals in the report", key="agree_report_goals",
                           help="This project's goals and reference figures for Topical-Chat (the G-EVAL paper, "
                                "seed 000's comparison, the embedded judge's goal), as `geval report --goals` adds "
                                "them; a report for others leaves them out.")
downloads = st.columns([2, 3, 3])  # wide enough for the buttons' labels at a laptop's width
downloads[0].download_button("Numbers as CSV", geval.reporting.agreement_csv(stacked), file_name=f"agreement-{dataset.name}.csv",
                             mime="text/csv", key="agree_csv", icon=":material/download:")

report_baselines = leaderboard.baselines()
# what the report is made of: a report built for other choices, or before the store changed since (new judgments,
# a label, a note, from this session or any other), is not offered
compare_labels = [st.session_state.get(key) for key in ("agree_a", "agree_b")]  # Compare's A and B, set below
compare_pair = tuple(tuple(by_label.loc[label, ["template_version", "signature"]]) for label in compare_labels) \
    if all(label in by_label.index for label in compare_labels) else None
report_metric = metric if metric in geval.OPTIONS.metrics else "pearson"  # the report reads labels by accuracy itself
report_for = (dataset.name, tuple(pairs[label] for label in tables), tuple(levels), int(n_boot), report_metric, variant,
              report_baselines, report_goals, store.content_version(), report_choices(dataset), compare_pair)
if downloads[1].button("Build the HTML report", key="agree_report_build", icon=":material/description:",
                       help="The report `python -m geval report --html` writes, for the versions chosen above and "
                            "the choices below (the test's epsilon and alignment, the labels per system): its bottom "
                            "line first, then, each folded, what was judged, tables, plots, comparisons with a "
                            "verdict, the leaderboard (with the baselines chosen below), flagged items and notes, "
                            "templates and signatures. One file; plotly.js inline, works offline. Its steps are "
                            "shown while it is built."):
    try:
        st.session_state["agree_report"] = (report_for, build_report(
            dataset, list(report_for[1]), {pairs[label]: table for label, table in tables.items()}, tuple(levels),
            int(n_boot), report_metric, variant, report_baselines, report_goals, report_for[-2], compare_pair))
    except geval.GevalError as exc:
        st.error(str(exc))
built = st.session_state.get("agree_report")
if built is not None and built[0] == report_for:
    downloads[2].download_button("Download the HTML report", built[1], file_name=f"geval-report-{dataset.name}.html",
                                 mime="text/html", key="agree_report_download", icon=":material/download:",
                                 type="primary")

if (stacked["metric"] == metric).any():
    st.plotly_chart(geval.reporting.correlation_bars(stacked, metric, side), key="agree_bars")

opened = systems.opens_on(store, dataset, combos, chosen)  # the judge the sections below open on, the curve too
curve_judge = opened[0] if opened and opened[0] in by_label.index else chosen[0]
human_side.curves(store, dataset, combos, labeled, by_label.loc[curve_judge])

pairwise.section(store, dataset.name, combos, list(tables))  # position bias, agreement with people, win rates

alttest.section(store, dataset.name, combos, opened, bool(dataset.aspects))

systems.section(store, dataset, combos, chosen)

leaderboard.section(store, dataset.name, combos, variant, int(n_boot), labels_only)

st.subheader("Item by item")
# the judge the sections above open on, until one is picked
state.follow("agree_plot_combo", opened[0] if opened and opened[0] in tables else None, list(tables))
plot_label = st.selectbox("Template version and judge", list(tables), key="agree_plot_combo") if len(tables) > 1 \
    else next(iter(tables))
plot_row = by_label.loc[plot_label]
try:
    frame = cached.disagreements(store, dataset.name, plot_row, columns="scores")
except geval.GevalError as exc:
    st.error(str(exc))
    st.stop()
mapped = frame.dropna(subset=["human"]).drop_duplicates("aspect")
if mapped.empty:
    st.info("No judge aspect of this template is compared with a human aspect, so there is nothing to plot.")
else:
    names = list(mapped["aspect_name"])
    state.keep_valid("agree_aspect", names)
    aspect_name = st.selectbox("Aspect", names, key="agree_aspect") if len(names) > 1 else names[0]
    aspect_row = mapped[mapped["aspect_name"] == aspect_name].iloc[0]
    aspect, human = aspect_row["aspect"], aspect_row["human"]
    drawn = geval.reporting.items_drawn(frame, aspect, human)
    words = geval.reporting.aspect_words(store.categories(dataset.name), human)  # labels: named, counted in words
    each = drawn <= geval.reporting.DRAWN_ONE_BY_ONE_MOST or st.toggle(
        f"A point per item ({drawn:,} items)", key="agree_each_item",
        help=f"Above {geval.reporting.DRAWN_ONE_BY_ONE_MOST:,} items the plots draw a bubble per pair of scores: a "
             "point per item makes the page slow, at every change.")
    if each:
        st.caption("Click a point to open the item in Inspect.")
        event = st.plotly_chart(cached.figure(store, dataset.name, plot_row, geval.reporting.scatter_figure, aspect,
                                              human, words=words, side=side),
                                on_select="rerun", selection_mode="points", key="agree_scatter")
        points = event.selection.points if event and event.selection else []
    else:
        st.caption(f"{drawn:,} items: a bubble per pair of scores, sized by its items. Turn on a point per item to see "
                   "each one and open it in Inspect with a click.")
        st.plotly_chart(cached.figure(store, dataset.name, plot_row, geval.reporting.counted_scatter_figure, aspect,
                                      human, words=words, side=side), key="agree_scatter_counted")
        points = []
    if points:
        custom = points[0].get("customdata")
        item_id = custom[0] if isinstance(custom, (list, tuple)) else custom
        if item_id:
            st.session_state["inspect_item"] = item_id
            st.session_state["inspect_combo"] = plot_label
            st.session_state["inspect_aspect"] = aspect_name
            st.switch_page("views/4_inspect.py")
    if words:
        st.plotly_chart(geval.reporting.labels_figure(frame, aspect, human, words, side), key="agree_labels")
    else:
        histogram, distribution = st.columns(2)
        histogram.plotly_chart(cached.figure(store, dataset.name, plot_row, geval.reporting.abs_diff_histogram,
                                             aspect, human), key="agree_absdiff")
        distribution.plotly_chart(cached.figure(store, dataset.name, plot_row, geval.reporting.distribution_figure,
                                                aspect, human), key="agree_distributions")
    judge_errors.section(store, dataset.name, plot_row, variant, aspect_name, human, each)  # kappa, confusion, offset

st.subheader("Compare two versions")
# a combination with nothing scored has nothing to compare; a search's variants only when listed or chosen
labels = [label for label in scored.scored(combos) if label in scored.menu(combos, [*chosen, *(
    st.session_state.get(key) for key in ("agree_a", "agree_b"))])]
if len(labels) < 2:
    st.info("Score the dataset with a second template version or judge to compare two of them on the same items.")
    st.stop()
st.caption("B minus A on the items both scored: the jackknife over groups with Student's t (95% CI, p-value), "
           "each dialogue or document left out in turn.")
# by default two of those chosen above, the judge the sections above open on one of them: the original A, its edit B
scored.follow_chosen(store, combos, list(dict.fromkeys([*(opened[:1] if opened else []), *chosen])), labels)
left, right = st.columns(2)
label_a = left.selectbox("A (the baseline)", labels, key="agree_a",  # "the original" read oddly of two LLMs
                         help="What B is measured against: e.g. a template's first version, or the judge in use.")
label_b = right.selectbox("B (compared with A)", labels, key="agree_b",
                          help="E.g. the template's edit, or another judge.")
if label_a == label_b:
    st.info("Pick two different template versions or judges.")
    st.stop()
row_a, row_b = by_label.loc[label_a], by_label.loc[label_b]
try:  # the human aspects each is compared with, in template order
    humans_a, humans_b = (list(dict.fromkeys(cached.disagreements(store, dataset.name, row, columns="scores")["human"]
                                             .dropna()))
                          for row in (row_a, row_b))
except geval.GevalError as exc:
    st.error(str(exc))
    st.stop()
common = [h for h in humans_a if h in humans_b]
if not common:
    partners = scored.comparable(store, combos, label_b)
    shown = ", ".join(partners[:3]) + (f" and {len(partners) - 3} more" if len(partners) > 3 else "")
    said = (f"A is compared with {', '.join(humans_a) or 'no human aspect'} and B with "
            f"{', '.join(humans_b) or 'no human aspect'}: they share none, so there is nothing to compare. ")
    if not scored.any_comparable(store, combos, labels):
        st.info(plain(said + "No two of the versions and judges scored here compare the same human aspect: score "
                             "a second template version or judge on one of them."))
    else:
        st.info(plain(said + "Pick two versions or judges of templates that score the same aspect"
                      + (f"; B can be compared with {shown}." if partners else ".")))
    st.stop()
left, right = st.columns(2)
state.keep_valid("agree_cmp_human", common)
human = left.selectbox("Human aspect", common, key="agree_cmp_human")
if geval.reporting.aspect_words(store.categories(dataset.name), human):  # labels: by accuracy alone
    cmp_metric = right.selectbox("Metric", ["accuracy"], key="agree_cmp_metric_labels", disabled=True,
                                 help=f"{human} is labeled with categories: each judge's accuracy against "
                                      f"{geval.labeling.MAJORITY_OF[side]}, never a correlation.")
else:
    cmp_metric = right.selectbox("Metric", list(geval.OPTIONS.metrics), key="agree_cmp_metric")
try:
    result = cached.comparison(store, dataset.name, row_a, row_b, human, cmp_metric)
except geval.GevalError as exc:  # too few common items, or a correlation undefined: not a failure
    st.warning(plain(str(exc)))
    st.stop()
cells = st.columns(4)
cells[0].metric(f"A: {cmp_metric}", geval.reporting.number(result.a))
cells[1].metric(f"B: {cmp_metric}", geval.reporting.number(result.b))
cells[2].metric("B − A", geval.reporting.number(result.difference), help="95% paired interval over groups below")
cells[3].metric("p", geval.reporting.format_p(result.p), help="Two-sided: Student's t on the jackknife over groups "
                "(each group left out in turn).")
shown = st.warning if result.n_groups < geval.reporting.MIN_GROUPS else st.info  # too few groups: said, in orange
shown(plain(geval.reporting.verdict(result, label_a, label_b, human)), icon=":material/balance:")
