"""Inspect: the items where judge and people disagree most, one at a time, with the dialogue,
every score, the exact prompt, the raw answer, and a flag and note to keep."""

import json

import pandas as pd
import streamlit as st

import geval
from studio import cached, imports, pairwise, state
from studio import combos as scored
from studio.text import plain, with_code

ORDERS = {"Largest disagreement first": False, "Smallest disagreement first": True}
#: The filters of the items listed: kept in the session for one dataset, set afresh for another or an item opened here.
FILTERS = ("inspect_systems", "inspect_range", "inspect_labels", "inspect_unscored", "inspect_flagged")


def step(order: list[str], delta: int) -> None:
    """Previous / Next: move the current item (the jump box's value) within `order`."""
    current = st.session_state.get("inspect_jump")
    index = order.index(current) if current in order else 0
    st.session_state["inspect_jump"] = order[max(0, min(len(order) - 1, index + delta))]


def save_note(item_id: str, beside: str) -> None:
    """Save note, as a callback: before the page draws again, so that Jump to marks a new flag at once."""
    try:
        state.store().set_note(item_id, st.session_state[f"inspect_flag_{item_id}"],
                               st.session_state[f"inspect_note_{item_id}"], beside=beside)
    except geval.GevalError as exc:
        st.session_state["inspect_saved"] = ("error", str(exc))
    else:
        st.session_state["inspect_saved"] = ("success", "Saved.")


st.title("Inspect")
store = state.store()
dataset = state.require_dataset()

combos = scored.require_scored(store, dataset)

scored.choose("inspect_combo", combos, lambda offered: scored.opening(store, offered, dataset.name))  # as Agreement
scored.variants_toggle(combos)
label = st.selectbox("Template version and judge", scored.menu(combos, st.session_state.get("inspect_combo")),
                     key="inspect_combo", format_func=scored.describe(combos), persist_state="session")
combo = combos.set_index("label").loc[label]
if combo["ok"] == 0:
    st.warning(scored.nothing_scored(store, dataset.name, combo))
try:
    frame = cached.disagreements(store, dataset.name, combo)
except geval.GevalError as exc:
    st.error(str(exc))
    st.stop()
st.caption(f"Signature (the code, judge and settings that made these scores): `{combo['signature']}`")

parts = frame["aspect"].str.contains("#", regex=False)  # a checklist's questions, a batch's or a pair's orders
aspects = list(dict.fromkeys([*frame.loc[~parts, "aspect_name"], *frame.loc[parts, "aspect_name"]]))  # aspects first
state.keep_valid("inspect_aspect", aspects)
aspect = st.selectbox("Aspect", aspects, key="inspect_aspect", persist_state="session")
rows = frame[frame["aspect_name"] == aspect]
human = rows["human"].dropna().iloc[0] if rows["human"].notna().any() else None
if human is None:  # no human score or label yet, or none of the name the template asks for: which, and what to do
    humans = list(dict.fromkeys(a for item in store.items(dataset.name) for a in item.human))
    try:
        why = geval.labeling.no_human_because(store.template(combo["template_version"]), rows["aspect"].iloc[0],
                                              humans, dataset.name)
    except geval.GevalError:  # a part of an aspect (a checklist question, an order): compared with no one
        why = f"{aspect} is a part of an aspect, compared with no human aspect"
    st.warning(with_code(f"Items are in dataset order: {why}."))

low, high = float(rows["scale_min"].iloc[0]), float(rows["scale_max"].iloc[0])
categories = store.categories(dataset.name)
words = geval.reporting.aspect_words(categories, human) if human is not None else ()  # labels, never means


def in_words(aspect: str, score: float) -> str:
    """A person's score as they gave it: a categorical aspect's label by its word (pass, not 1)."""
    return geval.reporting.category_word(score, geval.reporting.aspect_words(categories, aspect))


def people_mean(item, aspect: str) -> str:
    """People's mean on `aspect`, for the table: a number; of a label of two words, the share of the second ("67%
    pass"); of three categories or more, "–" (their codes have no mean)."""
    labels = geval.reporting.aspect_words(categories, aspect)
    mean = item.human_mean(aspect)
    if len(labels) == 2 and pd.notna(mean):
        return f"{mean:.0%} {labels[1]}"
    return "–" if len(labels) > 2 else geval.reporting.number(mean, 2)


def label_index(judge_01: pd.Series) -> pd.Series:
    """The judge's nearest category on a categorical aspect, by index (halves up, as the statistics read it),
    from `disagreements`' judge_01."""
    return geval.labeling.as_labels(judge_01, (0.0, 1.0), len(words))


def judged(row) -> str:
    """The judge's score, or on a categorical aspect its nearest category in words (`disagreements`' judge_01)."""
    if not words:
        return geval.reporting.number(row["score"], 2)
    return in_words(human, label_index(pd.Series([row["judge_01"]])).iloc[0]) if pd.notna(row["judge_01"]) else "–"


systems = sorted((s for s in rows["system"].unique() if s), key=geval.reporting.natural_key)  # M2, M10
if st.session_state.get("inspect_filtered", dataset.name) != dataset.name:  # another dataset's would hide items
    for key in FILTERS:                                                       # unsaid (a link's are kept: the first)
        st.session_state.pop(key, None)
st.session_state["inspect_filtered"] = dataset.name
target = st.session_state.pop("inspect_item", None)
if target is not None:
    if target in set(rows["item_id"]):  # opened from another page: show it whatever the filters were
        for key in FILTERS:
            st.session_state.pop(key, None)
        st.session_state["inspect_jump"] = st.session_state["inspect_place"] = target
    else:
        st.warning(f"Item {target} has no {aspect} judgment with this template version and judge.")

left, middle, right = st.columns([2, 2, 1])
with left:
    state.keep_valid("inspect_systems", systems)
    chosen = st.multiselect("Systems (none chosen: all)", systems, key="inspect_systems", persist_state="session")
with middle:
    if words:  # the judge's labels, never a range of their codes
        state.keep_valid("inspect_labels", list(words))
        labels_shown = st.multiselect("The judge's label (none chosen: all)", list(words), key="inspect_labels",
                                      persist_state="session")
        score_range = (low, high)
    else:
        score_range = st.slider("Judge score", low, high, step=0.05, persist_state="session",
                                key=state.start_at("inspect_range", (low, high),  # another scale's: the whole one
                                                   lambda held: low <= held[0] <= held[1] <= high))
with right:
    order_name = st.radio("Order", list(ORDERS), key="inspect_order", persist_state="session")
    unscored = st.checkbox("Unscored too", True, key="inspect_unscored", persist_state="session",
                           help="Also this judge's judgments without a score, whatever the score filter: answers it "
                                "gave no usable score in, and calls that failed. Items it was never asked about are "
                                "not listed: score them on the Score page.")
    flagged_only = st.checkbox("Flagged only", False, key="inspect_flagged", persist_state="session",
                               help="The items you flagged (under Your note); ⚑ marks them in Jump to.")

notes = store.notes()
flagged = {item for item, (flag, _) in notes.items() if flag}
shown = rows
if chosen:
    shown = shown[shown["system"].isin(chosen)]
in_range = shown["score"].between(score_range[0] - 1e-9, score_range[1] + 1e-9)
if words and labels_shown:
    in_range &= label_index(shown["judge_01"]).isin([words.index(label) for label in labels_shown])
shown = shown[in_range | (shown["score"].isna() if unscored else False)]
if flagged_only:
    shown = shown[shown["item_id"].isin(flagged)]
if human is not None:
    shown = shown.sort_values("disagreement", ascending=ORDERS[order_name], na_position="last", kind="stable")
order = list(shown["item_id"])
if not order:
    st.info("No item is flagged here yet: flag one under Your note, or clear Flagged only." if flagged_only and
            not flagged & set(rows["item_id"]) else "No item matches these filters.")
    st.stop()
place = st.session_state.get("inspect_jump")
if place not in order:  # e.g. back from another page, which drops widget values
    place = st.session_state.get("inspect_place")
    place = place if place in order else order[0]
st.session_state["inspect_jump"] = place  # set even when kept: the browser shows the label it holds, and the item's
                                          # place and scores in it change with the order, the aspect and the judge
position = order.index(st.session_state["inspect_jump"])

by_id = shown.set_index("item_id")
places = {item: index for index, item in enumerate(order, start=1)}
nav = st.columns([1, 1, 1, 5], vertical_alignment="bottom")
nav[0].button("Previous", key="inspect_previous", on_click=step, args=(order, -1), disabled=position == 0,
              icon=":material/arrow_back:")
nav[1].button("Next", key="inspect_next", on_click=step, args=(order, 1), disabled=position == len(order) - 1,
              icon=":material/arrow_forward:")
nav[2].markdown(f"**{position + 1} of {len(order)}**")
nav[3].selectbox(
    "Jump to", order, key="inspect_jump",
    format_func=lambda i: f"{places[i]}. {'⚑ ' if i in flagged else ''}{i} · {by_id.at[i, 'system'] or 'no system'} · "
                          f"judge {judged(by_id.loc[i])} · {'disagreement' if words else '|difference|'} "
                          f"{geval.reporting.number(by_id.at[i, 'disagreement'], 2)}",
)
item_id = st.session_state["inspect_place"] = st.session_state["inspect_jump"]
row = by_id.loc[item_id]
origin = imports.provenance(store, dataset.name, combo, item_id, row["aspect"])  # None: a judge the app asked
try:
    item = store.item(item_id)
except geval.GevalError as exc:
    st.error(str(exc))
    st.stop()

st.divider()
st.text(f"item {item.id} · {item.level} · system: {item.system or '–'} · group: {item.group or '–'}")
asked_in_orders = item.pair is not None and pairwise.is_pairwise(store, combo)  # both orders, side by side below
if item.pair is not None:
    pairwise.sides(item)
text_column, score_column = st.columns([3, 2], gap="large")
with text_column:  # what was judged first, beside the scores; a long dialogue scrolls in its own box
    if item.response and item.pair is None:
        st.subheader({"summary": "Summary", "dialogue": "Last turn"}.get(item.level, "Response"))
        with st.container(border=True):
            st.text(item.response)
    if item.grounding:
        kind = {"summary": "Document"}.get(item.level, "Grounding (fact or persona)")
        with st.expander(kind, expanded=item.level == "summary" and not item.context):
            st.text(item.grounding)
    if item.context:
        judged_whole = item.level == "dialogue" and not item.response
        st.subheader("Dialogue (judged as a whole)" if judged_whole else "Dialogue so far")
        turns = len(item.context)
        if turns > 6:
            st.caption(f"{turns} turns; the box opens on the last ones: scroll up for the earlier ones.")
        with st.container(height="content" if turns <= 6 else 480, border=turns > 6, key="inspect_dialogue",
                          autoscroll=turns > 6):
            for number_, turn in enumerate(item.context, start=1):
                with st.chat_message(turn.speaker or f"turn {number_}"):
                    st.text(turn.text)

compared = geval.labeling.COMPARED_WITH[store.human_side(dataset.name)]  # people, your labels, or both
who = compared[:1].upper() + compared[1:]  # the human side's metric: "Your labels" where the judge is compared with yours
with score_column:
    st.subheader("Scores")
    if words:  # labels, never means: the judge's nearest category against the people's majority
        a, b = st.columns(2)  # wide enough for a label's word in full ("model_a")
        a.metric("Judge", judged(row))
        b.metric(who, in_words(human, row["human_score"]) if pd.notna(row["human_score"]) else "tied",
                 help=f"The majority label of {compared} on {human} (\"tied\" where there is none).")
        st.caption(f"Disagreement {geval.reporting.number(row['disagreement'], 2)}: 0 where the judge's label is the "
                   "people's majority, 1 where it is another (a side against a tie: 0.5).")
    else:
        a, b, c = st.columns(3)
        a.metric(f"Judge ({low:g}-{high:g})", geval.reporting.number(row["score"], 2))
    if human is not None:
        scores = item.human.get(human, ())
        if not words:
            b.metric(who, geval.reporting.number(item.human_mean(human), 2), help=f"The mean of {compared} on {human}.")
            c.metric("|diff.| (0-1)", geval.reporting.number(row["disagreement"], 2),  # its column's width, whole
                     help="|difference|: the judge's score and the people's mean, each put on 0-1 by its own scale "
                          f"(the judge's {low:g}-{high:g}; the people's as declared, or as seen in the dataset), then "
                          "subtracted: 0 where they agree, 1 at opposite ends.")
            c.caption(f"{geval.reporting.number(row['disagreement'] * (high - low), 2)} on the judge's "  # as the two
                      f"{low:g}-{high:g}")  # figures beside it read: 0.26 of a 1-3 scale is a gap of 0.51
        st.text(f"{human}, every annotator: {', '.join(in_words(human, s) for s in scores) or 'none'}")
    if item.human:  # every aspect people scored, every annotator by name (a static table: no column hidden)
        ratings = {k: item.ratings(k) for k in item.human}
        names = list(dict.fromkeys(name for scores in ratings.values() for name in scores))
        # an aspect of one unnamed column beside named annotators: its one score as its mean ("fail", not "0% pass"),
        # not an annotator "#1" of a column of its own
        one = {k for k, v in ratings.items() if list(v) == ["#1"]} if len(names) > 1 and \
            [name for name in names if name.startswith("#")] == ["#1"] else set()
        names = [name for name in names if not (one and name == "#1")]
        st.table(pd.DataFrame(
            [{"aspect": k, "mean": in_words(k, v["#1"]) if k in one else people_mean(item, k),
              **{name: (in_words(k, v[name]) if name in v else "–") for name in names}}
             for k, v in ratings.items()]
        ).set_index("aspect"))
        if len(names) > 1 and all(name.startswith("#") for name in names):
            st.caption(f"People's scores: {names[0]} to {names[-1]} are the annotators, by position.")
    if pd.notna(row["coverage"]):
        st.caption(f"Coverage: {row['coverage']:.1%} of the judge's probability fell on the scores of the scale "
                   "(the distribution is renormalized over them).")
    if row["parsed"]:
        st.caption(f"Sampled: {row['parsed']} (the score is the mean over the parsed ones).")
    if row["status"] != "ok":
        st.warning(f"This judgment is {row['status']}: no score, left out of the statistics. The reason:")
        st.code(row["reason"] or "(none recorded)", language=None, wrap_lines=True)
    distribution = {int(k): p for k, p in json.loads(row["distribution"] or "{}").items()}
    if distribution and origin is None:
        st.caption(f"The judge's distribution over its labels (its label, {judged(row)}: the nearest to its score, "
                   f"{geval.reporting.number(row['score'], 2)})" if words else
                   "The judge's score distribution (the score is its weighted mean)")
        st.plotly_chart(geval.reporting.judge_distribution_figure(distribution, int(low), int(high), row["score"],
                                                                  words), key="inspect_distribution",
                        config={"displayModeBar": False})

    st.subheader("Your note")
    flag, note = notes.get(item_id, (False, ""))
    # saved as soon as changed too: a note typed, then Next clicked without "Save note", was lost
    st.checkbox("Flag this item", flag, key=f"inspect_flag_{item_id}", on_change=save_note, args=(item_id, combo["id"]))
    st.text_area("Note", note, key=f"inspect_note_{item_id}", height=90, on_change=save_note,
                 args=(item_id, combo["id"]), help="Saved when you leave the box (or press Ctrl+Enter), as Save note "
                                                   "does.")
    st.button("Save note", key="inspect_save", icon=":material/save:", on_click=save_note, args=(item_id, combo["id"]))
    if "inspect_saved" in st.session_state:
        kind, said = st.session_state.pop("inspect_saved")
        (st.error if kind == "error" else st.success)(said)
    if item_id in notes:
        saved_flag, saved_note = notes[item_id]
        beside = store.notes_beside().get(item_id)
        labels = dict(zip(combos["id"], combos["label"]))
        where = ("" if beside in (None, combo["id"]) else
                 f" · written beside {plain(labels.get(beside, 'a template version and judge no longer scored here'))}")
        st.caption("Saved" + (" · flagged" if saved_flag else "") + where)
        if saved_note:
            st.text(saved_note)

if origin is not None:
    st.info(plain(origin), icon=":material/upload_file:")
elif asked_in_orders:
    pairwise.orders(store, frame, item)
else:
    with st.expander("The exact prompt sent to the judge", expanded=False):
        if isinstance(row["prompt"], str):
            st.code(row["prompt"], language=None, wrap_lines=True)
        else:
            st.text("No prompt recorded: the judgment failed before a call was made (see the reason above).")
    with st.expander("The model's raw output", expanded=row["status"] != "ok"):
        raw = row["raw"]
        answers = json.loads(raw) if isinstance(raw, str) and raw else []
        if not answers:
            st.text("No answer recorded.")
        for index, answer in enumerate(answers, start=1):
            if len(answers) > 1:
                st.caption(f"Answer {index} of {len(answers)}")
            if str(answer).strip():
                st.code(str(answer), language=None, wrap_lines=True)
            else:
                st.text(f"(an empty answer: {answer!r})")

listed = set(rows["item_id"])
flagged_here = {i: n for i, n in notes.items() if i in listed}
if flagged_here:
    with st.expander(f"Notes on the items judged here ({len(flagged_here)})"):
        st.dataframe(pd.DataFrame([{"item": i, "flagged": f, "note": n} for i, (f, n) in flagged_here.items()]),
                     hide_index=True)
