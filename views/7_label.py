"""Label: your own scores, one item at a time and all by keyboard, saved the moment you give
them; blind to the judge and the dataset until then; which item next; how many labels buy how
much agreement."""

import streamlit as st

import geval
from studio import alttest, cached, context, fitting, human_side, state, systems
from studio import labeling as session_of
from studio.text import plain

FROM = ("A template's aspects", "Aspects I name")
#: The widgets' first values, set in the session (where a link's values go) rather than given to the widgets.
DEFAULTS = {"label_aspects": "Overall 1-5", "label_annotator": geval.labeling.DEFAULT_ANNOTATOR, "label_blind": True}
RECENT_TURNS = 3  # the last turns shown in full; the earlier ones scroll in a box above them

st.title("Label")
store = state.store()
dataset = state.require_dataset()
st.caption("Score the items yourself: a digit rates, Enter or → goes on once the item is labeled, ← goes back, "
           "s skips, u undoes. Each label is saved the moment you give it, with the seconds it took. The judge and "
           "the dataset's scores stay hidden until your label is saved.")

# --- what to label, and in which order ----------------------------------------------------------
combos = store.combos(dataset.name)
if len(combos):
    context.remember_combos(dataset.name, combos)  # a link's judge, by id
combos = combos[combos["ok"] > 0]
for name, default in DEFAULTS.items():  # a link sets them too: a widget given a default as well is warned of
    st.session_state.setdefault(name, default)
with st.expander("What to label, and in which order", expanded=store.labels(dataset.name).empty):
    left, right = st.columns(2)
    source = left.radio("Aspects", FROM, key="label_from", horizontal=True, persist_state="session")
    template = None
    editor = state.template()  # only the templates that fit these items: their aspects are the ones a judge can score
    offered = [*filter(None, [editor]), *geval.Template.known()]
    known = {t.label: t for t in geval.Template.fitting(dataset.items, offered)}
    scorable = {label.name.lower() for t in known.values() for label in geval.labeling.template_aspects(t)}
    if source == FROM[0]:
        if not known:
            st.warning(f"No template in prompts/, nor the editor's, fits {dataset.name}'s items: no judge could score "
                       "an aspect labeled here. Name your own aspects (\"Aspects I name\"), and write a template that "
                       "fits these items on the Prompts page.")
            st.stop()
        state.keep_valid("label_template", list(known))
        if "label_template" not in st.session_state:  # the one last used on this dataset, else the editor's, ...
            st.session_state["label_template"] = fitting.opening(store, dataset, known, editor)
        chosen = left.selectbox("Template", list(known), key="label_template", persist_state="session",
                                help="Its aspects, named as the human aspect each is compared with, on its scales.")
        template = known[chosen]
        aspects = geval.labeling.template_aspects(template, dataset.aspects)
    else:
        text = left.text_input("Aspects and scales", key="label_aspects", persist_state="session",
                               help="Comma-separated, each with its scale: Naturalness 1-3, Overall 1-5 (0-9).")
        try:
            aspects = geval.labeling.parse_aspects(text)
        except geval.GevalError as exc:
            st.error(str(exc))
            st.stop()
        unscorable = [a.name for a in aspects if a.name.lower() not in scorable]
        if unscorable:
            left.caption(f"No template that fits these items scores {', '.join(map(plain, unscorable))}: the judge can "
                         "be compared with these labels once one does (its aspect's human = \"...\" names it).")
    annotator = left.text_input("Annotator", key="label_annotator",
                                persist_state="session").strip() or geval.labeling.DEFAULT_ANNOTATOR
    how = right.selectbox("Which item next", list(geval.labeling.ORDERS), key="label_order",
                          format_func=geval.labeling.ORDERS.get, persist_state="session")
    seed = right.number_input("Seed", 0, 10**6, key="label_seed", persist_state="session")
    state.keep_valid("label_judge", list(combos["label"]))  # another dataset's, or no longer scored
    judge_label = right.selectbox("Judge (shown after your label; orders the items)", list(combos["label"]),
                                  key="label_judge", persist_state="session") if len(combos) else None
    blind = right.toggle("Blind: the scores stay hidden until your label is saved", key="label_blind",
                         persist_state="session")
combo = combos.set_index("label").loc[judge_label] if judge_label else None

items = [item for item in dataset.items if template is None or not template.level or item.level == template.level]
if not items:
    st.warning(f"{dataset.name} has no item at the {template.level} level {template.label} asks for.")
    st.stop()
ids = [item.id for item in items]


def labeled() -> tuple[dict, set]:
    """The annotator's labels of each aspect by item, and the items with every aspect labeled."""
    labels = store.labels(dataset.name, annotator)
    by_aspect = {a.name: labels[labels["aspect"].str.lower() == a.name.lower()].set_index("item_id")["score"]
                 for a in aspects}
    return by_aspect, {i for i in ids if all(i in by_aspect[a.name].index for a in aspects)}


mine, done = labeled()
if source == FROM[1]:  # aspects named with their scales: once labeled, the scale people were asked on
    if said := human_side.declare_named(store, dataset.name, aspects, mine):
        left.caption(plain(said))
first = aspects[0]
try:  # each aspect's judge (for what is shown once labeled); the first's orders the items
    judged_by = {a.name: cached.label_features(store, dataset.name, a.name, combos, combo,
                                               geval.labeling.FAST if how == "informative" and a == first else ())
                 for a in aspects}
except geval.GevalError as exc:
    st.error(plain(str(exc)))
    st.stop()
found = judged_by[first.name]

# --- which item -----------------------------------------------------------------------------------
said = ""
judge = found.judge_scores() if found.judge else None
spread = geval.labeling.informativeness(found, mine[first.name], int(seed)) if how == "informative" else None
if how == "informative" and spread is None:
    how, said = ("stratified", "Most informative needs two judge rows compared with this aspect, or a judge and "
                               f"{geval.labeling.MIN_FIT} labels: the judge's strata decide until then.")
if how == "uncertain":
    try:
        spread = geval.labeling.uncertainty(store, dataset.name, first.name, cached.pair(combo) if combo is not None else None)
    except geval.GevalError:
        spread = None
    if spread is None:
        how, said = "random", ("Where a label buys most needs the judge's own uncertainty (a G-EVAL judge's distribution "
                               "over scores); this judge gives none: the order is seeded random.")
if how == "stratified" and judge is None:
    how, said = "random", "No judge has scored this dataset on this aspect: the order is seeded random."
order = geval.labeling.order(ids, how, int(seed), judge, spread)
s = session_of.session(dataset.name, annotator)
s.upcoming = [i for i in order if i not in done]
if s.current not in set(ids):
    session_of.show(s, next((i for i in s.upcoming if i not in s.skipped), None))
if session_of.take_keys(s, aspects):  # the keys typed since the last run, each on the item it was typed on
    mine, done = labeled()
st.info(geval.labeling.progress_line(found, mine[first.name], first.name), icon=":material/label:")
if line := session_of.others_line(store, dataset.name, first.name, annotator):
    st.caption(plain(line))
alttest.planning_line(store, dataset.name, first.name, combos, combo)
# Lines that come and go sit in containers drawn every time: what follows keeps its place on the page,
# so that its buttons stay mounted while the page redraws and a key pressed meanwhile is heard.
with st.container(key="label_notes"):
    if said:
        st.caption(said)
    if s.note and s.current is not None:
        st.caption(s.note)
    if refused := session_of.refusals(s):  # until the user labels again or dismisses it
        st.warning(refused, icon=":material/keyboard:")
        st.button("Dismiss", key="label_refusals_dismiss", on_click=session_of.dismiss, args=(s,))
if s.current is None:
    session_of.keyboard(s, "")  # ← still goes back
    st.success(f"All {len(ids)} items are labeled" + (f" or skipped ({len(s.skipped)} skipped: a new session offers "
                                                     "them again)." if s.skipped else "."))
    if s.history:
        st.button("Back ←", key="label_back", on_click=session_of.back, args=(s, None))
    st.stop()
item = next(i for i in items if i.id == s.current)
systems.label_line(store, dataset.name, first.name, combos, combo, item.system)

# --- the item -------------------------------------------------------------------------------------
place = order.index(item.id) + 1
session_of.keyboard(s, f"item {item.id} · {place} of {len(ids)} in this order · {len(done)} labeled · "
                       f"group {item.group or '–'}")
text_column, label_column = st.columns([3, 2], gap="large")
with text_column:
    if item.context:
        earlier, recent = item.context[:-RECENT_TURNS], item.context[-RECENT_TURNS:]
        if earlier:
            st.caption(f"{len(earlier)} earlier turns (the box opens on the last ones: scroll up for the first):")
            with st.container(height=150, border=True, key="label_earlier", autoscroll=True):
                for turn in earlier:
                    st.text(turn.render())
        st.caption("The last turns:")
        for turn in recent:
            st.markdown(f"**{plain(turn.speaker or 'turn')}**: {plain(turn.text)}")
    if item.response:
        st.caption({"summary": "The summary:"}.get(item.level, "The response:"))
        with st.container(border=True, key="label_response"):
            st.markdown(f"**{plain(item.response)}**")
    if item.grounding:
        st.caption({"summary": "The document:"}.get(item.level, "The grounding (fact or persona):"))
        with st.container(height=160 if len(item.grounding) > 400 else "content", border=True, key="label_grounding"):
            st.text(item.grounding)

with label_column:
    current = next((a for a in aspects if item.id not in mine[a.name].index), None)
    names = tuple(a.name for a in aspects)
    for aspect in aspects:
        given = mine[aspect.name].get(item.id)
        st.markdown(f"**{plain(aspect.name)}** ({aspect.min}-{aspect.max})"
                    + (" ← the keys rate this" if aspect == current else ""))
        session_of.scale_buttons(s, item.id, aspect, given)
        shown = st.container(key=f"label_{aspect.name}_shown")
        if given is not None or not blind:
            its = judged_by[aspect.name]
            judged = its.table[its.judge].get(item.id) if its.judge else None
            own = next((h for h in dataset.aspects if h.lower() == aspect.name.lower()), None)
            parts = [f"{annotator} {given:g}" if given is not None else "not labeled yet"]
            if judged is not None:
                parts.append(f"judge {geval.reporting.number(judged, 2)} ({its.scale[0]}-{its.scale[1]})")
            if own and item.human.get(own):
                parts.append(f"people {geval.reporting.number(item.human_mean(own), 2)}")
            shown.caption(" · ".join(parts))
    with st.container(horizontal=True, key="label_nav"):
        session_of.nav_buttons(s, item.id, names, labeled=current is None)

# --- how many labels buy how much -----------------------------------------------------------------
with st.expander("How many labels buy how much", expanded=False):
    if len(mine[first.name]) < geval.labeling.MIN_FIT or found.judge is None:
        st.caption(f"With {geval.labeling.MIN_FIT} labels of {first.name} and a judge that scored it, this shows "
                   "the agreement of the judge alone and of a combination of every judge score and baseline "
                   "fitted on your labels, against the number of labels.")
    else:
        human_side.show_curve(store, dataset.name, first.name, combos, combo, annotator, key="label")
