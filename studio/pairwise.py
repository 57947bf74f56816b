"""Pairwise judging as the pages show it: on Data, pairs made of a dataset's responses to one context; on Agreement, each pairwise judge's position consistency,
first-position preference and tie rate, then one judge's agreement with people beside the people's
with each other and each model's win rate from the judge and the people (`geval.reporting.pairwise`,
cached until a judge gets new judgments or the human side changes); on Inspect, a pair's two sides
and both orders' prompts and answers side by side."""

from __future__ import annotations

import json

import pandas as pd
import streamlit as st

import geval
from studio import cached, state
from studio.text import plain

#: What a pairwise judge answers, in the order of the stored distribution: the side shown first, the second, a tie.
ANSWERS = ("A", "B", "tie")


def is_pairwise(store: geval.Store, combo: pd.Series) -> bool:
    """Whether `combo` is a pairwise template's judge."""
    return store.template(combo["template_version"]).kind == "pairwise"


def section(store: geval.Store, dataset: str, combos: pd.DataFrame, chosen: list[str]) -> None:
    """Agreement's section on the pairwise judges among `chosen` (nothing when there is none)."""
    by_label = combos.set_index("label")
    wanted = [label for label in chosen if is_pairwise(store, by_label.loc[label])]
    if not wanted:
        return
    said = geval.reporting.pairwise
    st.subheader(f"Pairwise: position bias, agreement with {geval.labeling.COMPARED_WITH[store.human_side(dataset)]}, "
                 "win rates")
    st.caption(said.INTRO)
    try:
        found = _read(store, str(store.path), dataset, tuple(cached.pair(by_label.loc[label]) for label in wanted),
                      (cached.stamps(by_label.loc[wanted].reset_index()), store.human_stamp(dataset)))
    except geval.GevalError as exc:
        st.info(plain(str(exc)))
        return
    if not found:
        st.info("No pair is judged in both orders yet: score the pairs with a pairwise template.")
        return
    st.dataframe(said.position_table(found), hide_index=True, key="pairwise_positions")
    names = [one.judge for one in found]
    one = found[names.index(st.selectbox("Pairwise judge", names, key="pairwise_judge"))] if len(found) > 1 \
        else found[0]
    st.markdown("\n".join(f"- {plain(line)}" for line in said.lines(one)))
    agreement = said.agreement_table(one)
    if not agreement.empty:
        rows = (f"the judge against each annotator, their mean and {one.against} (pairs whose majority is tied "
                "left out), then each pair of annotators and their mean" if len(one.annotators) > 1 else
                f"the judge against {one.against}, the one annotator")  # (whose row, their mean's and majority's alike)
        st.caption(f"Agreement with {one.who}: {rows}; 95% intervals over the {one.unit}.")
        st.dataframe(agreement, hide_index=True, key="pairwise_agreement")
    if not one.wins.empty:
        st.plotly_chart(said.wins_figure(one), key="pairwise_wins_figure")
        st.dataframe(said.wins_table(one), hide_index=True, key="pairwise_wins")


@st.cache_data(show_spinner="Reading the pairwise judges…", max_entries=16)
def _read(_store, path: str, dataset: str, combos: tuple, stamp: tuple) -> list:
    found = []
    for combo in combos:
        try:
            found.append(geval.reporting.pairwise.read(_store, dataset, combo))
        except geval.GevalError:  # nothing judged in both orders yet
            continue
    return found


def make_pairs(store: geval.Store, dataset: geval.Dataset) -> None:
    """Data's section that makes pairs of `dataset`'s responses to one context (`geval.Dataset.pairs`),
    stores them as a dataset of their own and opens it; nothing for a dataset of pairs, or one with a
    response per context."""
    if any(item.pair is not None for item in dataset.items) or len(dataset.items) == len(
            {(item.group, item.context, item.grounding) for item in dataset.items}):
        return
    with st.expander("Pairs of its responses, to judge which is better"):
        st.caption("Each pair of responses to one context (or a few drawn per context) becomes an item: a pairwise "
                   "template (e.g. dialogue-pairwise) asks the judge which is better, in both orders. Each annotator "
                   "prefers the response they scored higher on the aspect chosen (equal scores: a tie).")
        left, middle, right = st.columns(3)
        aspects = dataset.aspects
        default = next((k for k, a in enumerate(aspects) if a.lower() == "overall"), 0)
        aspect = left.selectbox("Preference from", aspects, index=default, key="data_pairs_aspect") \
            if aspects else None
        per_context = middle.number_input("Pairs per context (0: every pair)", 0, 100, 0, key="data_pairs_per")
        name = right.text_input("Name", f"{dataset.name}-pairs", key="data_pairs_name")
        if st.button("Make the pairs and open them", key="data_pairs_make", icon=":material/compare_arrows:"):
            try:
                pairs = dataset.pairs(aspect, int(per_context) or None, name=name.strip() or None)
                said = pairs.replacing(store)
                if said:
                    raise geval.GevalError(f"{said}; give the pairs another name")
                store.save_dataset(pairs)
                state.load_dataset(pairs.name)
            except geval.GevalError as exc:
                st.error(plain(str(exc)))
            else:
                st.rerun()


def sides(item) -> None:
    """A pair's two responses side by side, each with its model and, where its conversation is its
    own (MT-Bench's second turn), that conversation."""
    pair = item.pair
    fields = item.fields()
    own = bool(pair.turns_a or pair.turns_b)
    if fields["context"] and not item.context:  # what both were asked (the page shows a dialogue's context below)
        st.subheader("What both answer")
        with st.container(border=True, key="inspect_pair_question"):
            st.text(fields["context"])
    for column, letter, system in zip(st.columns(2, gap="medium"), ("a", "b"), (pair.system_a, pair.system_b)):
        with column:
            st.subheader(f"Response {letter.upper()}" + (f" · {system}" if system else ""))
            with st.container(border=True, key=f"inspect_pair_{letter}"):
                st.text(getattr(pair, f"response_{letter}"))
            if own:
                with st.expander(f"Its conversation ({system or letter.upper()})"):
                    st.text(fields[f"conversation_{letter}"])


def orders(store: geval.Store, frame: pd.DataFrame, item) -> None:
    """Both orders of a pair as the judge was asked them, side by side: what each order showed as A
    and B, the judge's answer and its probabilities (in the pair's terms too), the raw answer and the
    exact prompt; above them, the judgment the two make together and each annotator's preference."""
    pair = item.pair
    rows = frame[frame["item_id"] == item.id]
    parts = rows[rows["aspect"].str.contains("#order", regex=False)]
    combined = rows[~rows["aspect"].str.contains("#", regex=False)]
    named = {0: pair.system_a or "response A", 1: pair.system_b or "response B", 2: "tie"}
    st.subheader("Both orders")
    if not combined.empty:
        row = combined.iloc[0]
        distribution = _distribution(row["distribution"])
        if row["status"] == "ok" and distribution:
            verdict = named[int(row["score"])]
            st.markdown(plain(f"The judgment (both orders averaged, order 2 swapped back): {verdict}. "
                              + ", ".join(f"{named[s]} {distribution.get(s, 0.0):.0%}" for s in named) + "."))
        else:
            st.warning(plain(f"No judgment: {row['reason'] or row['status']}"))
        people = _people(store, item, row.get("human"))
        if people:
            st.markdown(plain(people))
    shown = {1: (pair.system_a or "response A", pair.system_b or "response B"),
             2: (pair.system_b or "response B", pair.system_a or "response A")}
    winners = [_winner(parts, order, shown[order]) for order in (1, 2)]
    if all(winners):
        st.caption(plain("Both orders name the same winner." if winners[0] == winners[1] else
                         f"The orders disagree: order 1 names {winners[0]}, order 2 {winners[1]} (the answer moved "
                         "with the order)."))
    for column, order in zip(st.columns(2, gap="medium"), (1, 2)):
        found = parts[parts["aspect"].str.endswith(f"#order{order}")]
        with column, st.container(border=True, key=f"inspect_order_{order}"):
            first, second = shown[order]
            st.markdown(f"**Order {order}**" + (" (as given)" if order == 1 else " (swapped)"))
            st.caption(plain(f"A = {first}, B = {second}"))
            if found.empty:
                st.text("Not asked yet.")
                continue
            row = found.iloc[0]
            distribution = _distribution(row["distribution"])
            if row["status"] == "ok" and distribution:
                best = max(distribution, key=distribution.get)
                winner = f" ({(first, second)[best]})" if best < 2 else ""
                st.markdown(plain(f"Answer: {ANSWERS[best]}{winner}; "
                                  + ", ".join(f"{ANSWERS[s]} {distribution.get(s, 0.0):.0%}" for s in range(3))))
            else:
                st.warning(plain(f"This order's answer is {row['status']}: {row['reason'] or 'no reason recorded'}"))
            raw = json.loads(row["raw"]) if isinstance(row.get("raw"), str) and row["raw"] else []
            st.caption("The model's raw output")
            st.code("\n".join(map(str, raw)) or "(no answer recorded)", language=None, wrap_lines=True)
            with st.expander(f"The exact prompt of order {order}"):
                st.code(row["prompt"] if isinstance(row.get("prompt"), str) else "(no prompt recorded)",
                        language=None, wrap_lines=True)


def _winner(parts: pd.DataFrame, order: int, shown: tuple[str, str]) -> str:
    """What order `order`'s answer names, in the pair's terms (a model, "a tie"); "" when it has none."""
    found = parts[parts["aspect"].str.endswith(f"#order{order}") & (parts["status"] == "ok")]
    distribution = _distribution(found["distribution"].iloc[0]) if len(found) else {}
    if not distribution:
        return ""
    best = max(distribution, key=distribution.get)
    return shown[best] if best < 2 else "a tie"


def _people(store: geval.Store, item, human: object) -> str:
    """Each annotator's preference of the pair in words ("People: author_0 prefers gpt-4; author_4 says
    tie."), "" when the pair has none."""
    categories = store.categories(item.dataset).get(human, ()) if isinstance(human, str) else ()
    words = {"model_a": f"prefers {item.pair.system_a or 'response A'}",
             "model_b": f"prefers {item.pair.system_b or 'response B'}", "tie": "says tie"}
    said = [f"{who} {words.get(categories[int(value)], categories[int(value)])}"
            for who, value in item.ratings(human).items()] if categories else []
    return "People: " + "; ".join(said) + "." if said else ""


def _distribution(text: str | None) -> dict[int, float]:
    return {int(s): float(p) for s, p in json.loads(text or "{}").items()}
