"""Label: your own scores, one item at a time and all by keyboard, each saved as you give it, on the
item on screen; blind to the judge and the dataset until then; which item next; how many labels buy
how much agreement."""

import streamlit as st

import geval
from studio import alttest, auth, cached, context, fitting, human_side, state, systems
from studio import combos as scored
from studio import labeling as label_unit
from studio.text import plain

FROM = ("A template's aspects", "Aspects I name")
#: The widgets' first values, set in the session (where a link's values go) rather than given to the widgets.
DEFAULTS = {"label_annotator": geval.labeling.DEFAULT_ANNOTATOR, "label_blind": True}

st.title("Label")
store = state.store()
dataset = state.require_dataset()
st.caption("Score the items yourself, one at a time by keyboard: the buttons beside the item name the keys (how it "
           "works: below the item, which comes first on the page).")

# --- what to label, and in which order ----------------------------------------------------------
combos = store.combos(dataset.name)
if len(combos):
    context.remember_combos(dataset.name, combos)  # a link's judge, by id
combos = combos[combos["ok"] > 0]
if (user := auth.current()) is not None:  # a signed-in lead labels under her own name
    st.session_state.setdefault("label_annotator", user.name)
own = geval.labeling.dataset_aspects(dataset)  # "Aspects I name" opens on the people's Overall, else their first
named = next((a for a in own if a.name.lower() == "overall"),
             next(iter(own), geval.labeling.LabelAspect("Overall", 1, 5)))
for name, default in {**DEFAULTS, "label_aspects": f"{named.name} {named.min}-{named.max}"}.items():
    st.session_state.setdefault(name, default)  # a link sets them too: a widget given a default as well is warned of
editor = state.template()  # only the templates that fit these items: their aspects are the ones a judge can score
offered = [*filter(None, [editor]), *geval.Template.known(), *state.saved_templates(store)]  # saved ones too
known = {t.label: t for t in geval.Template.fitting(dataset.items, offered)}
scorable = {name.lower() for t in known.values() for a in t.aspects for name in (a.human, a.name) if name}
if known:
    state.keep_valid("label_template", list(known))
    if "label_template" not in st.session_state:  # the one last used on this dataset, else the editor's, ...
        st.session_state["label_template"] = fitting.opening(store, dataset, known, editor)


def _choices() -> str:
    """What the panel below has chosen, in its folded header: the item to label comes first on the page."""
    named = st.session_state.get("label_from", FROM[0]) == FROM[1] or not known
    aspects = st.session_state["label_aspects"] if named else ", ".join(
        f"{a.name} {a.min}-{a.max}" for a in geval.labeling.template_aspects(known[st.session_state["label_template"]],
                                                                             dataset.aspects))
    order = geval.labeling.ORDERS[st.session_state.get("label_order", next(iter(geval.labeling.ORDERS)))]
    blind = " · blind" if st.session_state["label_blind"] else ""
    return f"{plain(aspects)} · as {plain(st.session_state['label_annotator'])} · {order.split(' (')[0]}{blind}"


with st.expander(f"What to label, and in which order: {_choices()}", key="label_settings_open",
                 expanded=not known and st.session_state.get("label_from", FROM[0]) == FROM[0]):
    left, right = st.columns(2)
    source = left.radio("Aspects", FROM, key="label_from", horizontal=True, persist_state="session")
    template = None
    if source == FROM[0]:
        if not known:
            st.warning(f"No template in prompts/, nor the editor's, fits {dataset.name}'s items: no judge could score "
                       "an aspect labeled here. Name your own aspects (\"Aspects I name\"), and write a template that "
                       "fits these items on the Prompts page.")
            st.stop()
        chosen = left.selectbox("Template", list(known), key="label_template", persist_state="session",
                                help="Its aspects, named as the human aspect each is compared with, on its scales.")
        template = known[chosen]
        # named as the people's or your labels it is compared with, else as the template names it
        aspects = geval.labeling.template_aspects(template, [*dataset.aspects, *store.labels(dataset.name)["aspect"]])
    else:
        text = left.text_input("Aspects and scales", key="label_aspects", persist_state="session",
                               help="Comma-separated, each with its scale: Naturalness 1-3, Overall 1-5 (0-9).")
        try:
            aspects = geval.labeling.parse_aspects(text, store.categories(dataset.name))
        except geval.GevalError as exc:
            st.error(str(exc))
            st.stop()
        unscorable = [a.name for a in aspects if a.name.lower() not in scorable]
        if unscorable:
            unscored = ", ".join(map(plain, unscorable))
            left.caption(f"No template that fits these items scores {unscored}, so no judge can be compared with "
                         "these labels yet: once you have labeled some, the Prompts page drafts one from them (\"No "
                         f"template here judges {unscored}: draft one\").")
    annotator = left.text_input("Annotator", key="label_annotator",
                                persist_state="session").strip() or geval.labeling.DEFAULT_ANNOTATOR
    how = right.selectbox("Which item next", list(geval.labeling.ORDERS), key="label_order",
                          format_func=geval.labeling.ORDERS.get, persist_state="session")
    seed = right.number_input("Seed", 0, 10**6, key="label_seed", persist_state="session")
    mine = scored.comparing(store, combos, [a.name for a in aspects]) if len(combos) else combos
    offered = mine if len(mine) else combos  # the judges of these aspects, when some is
    if len(offered):  # the judge that scored most items (another dataset's, or one no longer scored, is not kept)
        scored.choose("label_judge", offered, scored.covering)
    judge_label = right.selectbox("Judge (shown after your label; orders the items)",
                                  scored.menu(offered, st.session_state.get("label_judge")), key="label_judge",
                                  persist_state="session") if len(offered) else None
    blind = right.toggle("Blind: the scores stay hidden until you label the item", key="label_blind",
                         persist_state="session", help="And a pair's models are not named.")
combo = combos.set_index("label").loc[judge_label] if judge_label else None

items = [item for item in dataset.items if template is None or not template.level or item.level == template.level]
if not items:
    st.warning(f"{dataset.name} has no item at the {template.level} level {template.label} asks for.")
    st.stop()
ids = [item.id for item in items]
first = aspects[0]
try:  # each aspect's judge (for what is shown once labeled); the first's orders the items
    judged_by = {a.name: cached.label_features(store, dataset.name, a.name, combos, combo,
                                               geval.labeling.FAST if how == "informative" and a == first else ())
                 for a in aspects}
except geval.GevalError as exc:
    st.error(plain(str(exc)))
    st.stop()
found = judged_by[first.name]


def labeled() -> tuple[dict, set, list, dict]:
    """The annotator's labels of each aspect by item, the items with every aspect labeled, the items
    labeled, in the order first labeled, and each item's labels with their reasons."""
    labels = store.labels(dataset.name, annotator)
    by_aspect = {a.name: labels[labels["aspect"].str.lower() == a.name.lower()].set_index("item_id")["score"]
                 for a in aspects}
    return by_aspect, {i for i in ids if all(i in by_aspect[a.name].index for a in aspects)}, \
        list(dict.fromkeys(labels["item_id"])), label_unit.given_labels(labels, aspects)


def which_order(mine: dict) -> tuple[list[str], str]:
    """The items in the order chosen (`how`; with the labels given so far, for the orders that learn from
    them), and why another order stands in for it ("" when none does)."""
    judge = found.judge_scores() if found.judge else None
    order_how, said = how, ""
    spread = geval.labeling.informativeness(found, mine[first.name], int(seed)) if how == "informative" else None
    if how == "informative" and spread is None:
        order_how, said = ("stratified", "Most informative needs two judge rows compared with this aspect, or a judge "
                                         f"and {geval.labeling.MIN_FIT} labels: the judge's strata decide until then.")
    if how == "uncertain":
        try:
            judge_pair = cached.pair(combo) if combo is not None else None
            spread = geval.labeling.uncertainty(store, dataset.name, first.name, judge_pair)
        except geval.GevalError:
            spread = None
        if spread is None:
            order_how, said = "random", ("Where a label buys most needs the judge's own uncertainty (a G-EVAL "
                                         "judge's distribution over scores); this judge gives none: the order is "
                                         "seeded random.")
    if order_how == "stratified" and judge is None:
        order_how, said = "random", "No judge has scored this dataset on this aspect: the order is seeded random."
    return geval.labeling.order(ids, order_how, int(seed), judge, spread), said


@st.fragment
def labeling() -> None:
    """What the labeling unit posted since the last run stored, then the unit drawn with the next items
    (a label reruns this part of the page only), then the lines that follow the labels, below it: the item to
    label comes first on the page (above it, they left the response out of view on a laptop's screen)."""
    s = label_unit.session(dataset.name, annotator)
    label_unit.take(s)
    mine, done, given, own = labeled()
    declared = human_side.declare_named(store, dataset.name, aspects, mine) if source == FROM[1] else ""
    order, said = which_order(mine)
    place = {item_id: n for n, item_id in enumerate(order, 1)}
    queue = [i for i in order if i not in done and i not in s.skipped][:label_unit.AHEAD]
    # behind the item on screen: those labeled on every aspect here (one labeled on another aspect alone, or on some
    # of these, is still to label: the unit goes on to no item it holds behind)
    history = [i for i in given if i in place and i in done][-label_unit.BEHIND:]
    by_id = {item.id: item for item in items}
    sent = [by_id[i] for i in dict.fromkeys(history + queue)]
    lines_of = systems.label_lines(store, dataset.name, first.name, combos, combo, {i.system for i in sent})
    categories = store.categories(dataset.name)  # a categorical aspect's digits shown with their words
    unit = label_unit.token(dataset.name, annotator, aspects, how, seed, judge_label, len(ids), blind)  # blind: a
    label_unit.draw(s, unit, aspects, blind, len(ids), len(done), queue, history,  # pair's text is another text
                    [label_unit.payload(item, place[item.id], own.get(item.id, {}), item.id in done,
                                        {a.name: label_unit.shown_once_labeled(item, a.name, judged_by[a.name],
                                                                               dataset.aspects, judge_label,
                                                                               label_unit.words_of(a, categories))
                                         for a in aspects},
                                        lines_of[item.system], blind) for item in sent], categories)
    st.info(geval.labeling.progress_line(found, mine[first.name], first.name,
                                         categories=label_unit.words_of(first, categories)), icon=":material/label:")
    if line := label_unit.others_line(store, dataset.name, first.name, annotator):
        st.caption(plain(line))
    alttest.planning_line(store, dataset.name, first.name, combos, combo)
    if said:
        st.caption(said)
    if declared:  # aspects named with their scales: once labeled, the scale people were asked on
        st.caption(plain(declared))
    if not queue:
        st.success(f"All {len(ids)} items are labeled" + (f" or skipped ({len(s.skipped)} skipped: a new session "
                                                         "offers them again)." if s.skipped else "."))
    with st.expander("How many labels buy how much", key="label_curve_open", on_change="rerun") as curve:
        if curve.open and len(mine[first.name]) >= geval.labeling.MIN_FIT and found.judge is not None:
            human_side.show_curve(store, dataset.name, first.name, combos, combo, annotator, key="label")
        else:  # drawn when opened: a label does not wait for the curve to be fitted again
            st.caption(f"With {geval.labeling.MIN_FIT} labels of {first.name} and a judge that scored it, this shows "
                       "the agreement of the judge alone and of a combination of every judge score and baseline "
                       "fitted on your labels, against the number of labels.")


labeling()
st.caption(f"{label_unit.KEYS_HELP} The next item shows at once; each label goes to the store as you give it, with "
           "the seconds it took, on the item on screen as you pressed its key. Blind (the switch above), the judge's "
           "and the dataset's scores stay hidden until you label the item, and so do the names of the models whose "
           "responses a pair compares.")
