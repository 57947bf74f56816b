"""Can the judge replace an annotator? The alternative annotator test (`geval.alttest`) as the
Agreement page shows it (its settings, the judges ranked by advantage probability, one judge's
annotators with the verdict and the plan beside it) and the Label page's planning line."""

from __future__ import annotations

import math

import pandas as pd
import streamlit as st

import geval
from studio import cached, state
from studio.text import plain

EPSILON = "alttest_epsilon"  # the session key of the epsilon chosen (the Label page's plan reads it too)
WHO = {"experts": "experts", "skilled": "skilled annotators", "crowd": "crowd workers"}
BY_ASPECT = "by the aspect"
READ_AS = {"mode": "its most probable score", "rounded": "its mean, rounded", "continuous": "its mean"}
BY_DATA = "by the data"
#: The t-test's unit as the page offers it (`geval.alttest.BY`; by the data: groups where the items have them).
TAKEN = {BY_DATA: "groups, if any", "groups": "groups", "items": "items (the paper's)"}
#: The step-up procedures across annotators as the page offers them (`geval.alttest.FDR`), the paper's first.
FDRS = {"by": "Benjamini-Yekutieli (the paper's)", "bh": "Benjamini-Hochberg (a departure from the paper)"}
#: How each outcome is drawn: passed, not passed, no verdict (what the paper's conditions lack).
OUTCOME = {True: st.success, False: st.info, None: st.warning}

#: Whose scores the test reads, by the human side in force (`Store.human_side`).
ANNOTATORS_OF = {"people": "the dataset's own annotators", "you": "your labels, each annotator apart",
                 "both": "the dataset's annotators and yours"}
NEEDS_TWO = ("How many items the test needs is known once two annotators have scored the same items (their agreement "
             "is what the simulation starts from).")
#: The plan's box where the verdict beside it has said why the pass says little (`geval.alttest.caveat`).
SAID_ABOVE = ("No plan for more items: this judge passes already, and more items would only make the test surer of a "
              "pass that a constant or random labels get as well (the verdict above).")


def epsilon(store: geval.Store, dataset: str) -> float:
    """The epsilon chosen on the Agreement page in this session, else that of the dataset's kind of
    annotators (`geval.alttest.annotators_of`; skilled where the data does not say)."""
    default = geval.alttest.EPSILONS[geval.alttest.annotators_of(store, dataset) or "skilled"]
    return float(st.session_state.get(EPSILON, default))


def choices(store: geval.Store, dataset: str) -> tuple[float, str | None, str | None]:
    """The test as chosen on the Agreement page in this session: its epsilon (`epsilon`), alignment and
    t-test unit (None: by the aspect, by the data), for the report and the bottom line to read it so too."""
    alignment, by = st.session_state.get("alttest_alignment"), st.session_state.get("alttest_by")
    return (epsilon(store, dataset), None if alignment in (None, BY_ASPECT) else alignment,
            None if by in (None, BY_DATA) else by)


def _annotators_chosen() -> None:
    st.session_state[EPSILON] = geval.alttest.EPSILONS[st.session_state["alttest_who"]]


def section(store: geval.Store, dataset: str, combos: pd.DataFrame,
            opens_on: tuple[str, str, str] | None = None, own_scores: bool = True) -> None:
    """The Agreement page's section: the settings, every judge of `dataset` ranked, then one judge and
    aspect in detail (its verdict, each annotator's line, the plan, its signature), opened on `opens_on`
    (the judge's label, the aspect, why: the judge worth most labels) until another is picked. `own_scores`:
    whether the dataset's file gave human scores (your labels can then join them as one more annotator)."""
    st.subheader("Can the judge replace an annotator?")
    st.caption("The alternative annotator test (Calderon, Reichart & Dror, ACL 2025): each annotator is left out in "
               "turn, and item by item the judge and the left-out person are compared by how well each represents "
               "the remaining annotators. The judge beats an annotator when a one-sided t-test says the person's "
               f"advantage is below epsilon (Benjamini-Yekutieli across annotators, q = {geval.alttest.Q:g}, unless "
               "chosen otherwise below); it "
               "passes when it beats at least half of them (winning rate ≥ .50). The advantage probability (how "
               "often the judge is at least as good as a person) ranks judges. Every judge scored or imported on "
               "this dataset is tested, except a prompt search's variants, beside a judge that always gives one "
               "label (each label of the scale is tried; the best is shown).")
    if (geval.labeling.most_scores(store.items(dataset)) or 0) < 2:  # no one to leave out: said, no settings drawn
        both = geval.labeling.HUMAN_SIDES["both"]
        mine = own_scores and store.human_side(dataset) != "both" and len(geval.labeling.counts(store, dataset))
        st.info("Each item here has one annotator's score: the test compares the judge with each annotator against "
                "the others, so it needs two annotators or more on the same items (the paper recommends three). "
                + (f"You have labeled items here: choose \"{both}\" under Compared with, above, to test the judge "
                   "against the people and you." if mine else
                   "Import another annotator's labels on the Data page, or label items yourself on the Label page "
                   f"and choose \"{both}\" under Compared with."))
        return
    known = geval.alttest.annotators_of(store, dataset)
    state.keep_valid("alttest_who", list(geval.alttest.EPSILONS), known or "skilled")  # a link's, not offered
    st.session_state.setdefault("alttest_who", known or "skilled")
    state.start_at(EPSILON, geval.alttest.EPSILONS[st.session_state["alttest_who"]], lambda held: 0 <= held <= 1)
    who, margin, align, read, unit = st.columns([3, 2, 3, 3, 3])
    kept = {"persist_state": "session"}  # the Label page's plan reads the epsilon chosen here
    who.selectbox("The annotators are", list(geval.alttest.EPSILONS), key="alttest_who", on_change=_annotators_chosen,
                  format_func=lambda k: f"{k} (ε {geval.alttest.EPSILONS[k]:g})", **kept,  # whole in its column
                  help="Sets epsilon as the paper advises: a judge is granted a larger margin the more a person "
                       "costs (experts .2, skilled annotators .15, crowd workers .1).")
    chosen_epsilon = margin.number_input("Epsilon", 0.0, 1.0, step=0.01, format="%.2f", key=EPSILON, **kept,
                                         help="The cost-benefit margin: how much better than the judge a person "
                                              "must be for the judge to lose to them.")
    alignment = align.selectbox("Alignment", [BY_ASPECT, *geval.alttest.ALIGNMENTS], key="alttest_alignment", **kept,
                                format_func=lambda a: "by the aspect" if a == BY_ASPECT else a,
                                help="By the aspect: accuracy for categories, neg-rmse for scores. "
                                     + "; ".join(f"{k}: {v}" for k, v in geval.alttest.ALIGNMENTS.items()) + ".")
    reading = read.selectbox("The judge read as", list(geval.alttest.READINGS), key="alttest_reading", **kept,
                             format_func=READ_AS.get,
                             help="; ".join(f"{READ_AS[k]}: {v}" for k, v in geval.alttest.READINGS.items()) + ".")
    by = unit.selectbox("Each annotator's t-test over", list(TAKEN), key="alttest_by", format_func=TAKEN.get, **kept,
                        help="The responses of one dialogue, the summaries of one document are not independent: over "
                             "groups (dialogues, documents), the t-test's standard error is taken over the annotator's "
                             f"groups (cluster-robust; {geval.alttest.MIN_GROUPS} groups or more). Groups, if any: over "
                             "groups where some group holds two of the items, else over items. Over items, as the "
                             "paper does, its p-values are optimistic on grouped data.")
    alignment, by = None if alignment == BY_ASPECT else alignment, None if by == BY_DATA else by
    fdr = st.columns([4, 8])[0].selectbox("Across annotators", list(FDRS), key="alttest_fdr", format_func=FDRS.get, **kept,
                       help="The step-up procedure that decides which annotators the judge beats, at q = "
                            f"{geval.alttest.Q:g}. Benjamini-Yekutieli is the paper's: valid however the annotators' "
                            "tests depend on each other (they share the judge and each other's labels). "
                            "Benjamini-Hochberg is a departure from the paper: it assumes they depend positively, and "
                            "passes good judges more often (docs/statistics.md); every verdict says which was used.")
    st.caption("By default the judge is read on the annotators' own scale, as its most probable score: G-EVAL's "
               "score is a probability-weighted mean, a continuous value, while people give whole scores and often "
               "agree exactly, and a tie counts for both sides. Its advantage probability read the other ways "
               "stands beside it (a judge imported from a file is read as imported).")
    chosen_who, paper = st.session_state["alttest_who"], geval.alttest.EPSILONS
    if known and chosen_who != known:
        st.caption(f"{dataset}'s annotators are {WHO[known]}: the paper's epsilon for them is {paper[known]:g}.")
    if line := epsilon_line(chosen_epsilon, chosen_who):
        st.caption(line)
    try:
        results = cached.alttest(store, dataset, combos, chosen_epsilon, alignment, by, fdr)
    except geval.GevalError as exc:
        st.error(plain(str(exc)))
        return
    if not results[reading]:
        st.info("No judge here is compared with a human aspect that has annotators: nothing to test.")
        return
    used = list(dict.fromkeys(r.how for r in results[reading] if not r.baseline))
    st.caption("Which test: " + "; ".join(map(plain, used)) + (" (each annotator's t-test over its groups: the items "
                                                              "of one are not independent)."
                                                              if any(h.startswith("groups") for h in used) else "."))
    ranked = ranking(results, reading)
    shown = ranked.drop(columns=["verdict"])
    for column in [c for c in shown.columns if c.startswith(("winning rate", "advantage probability"))]:
        shown[column] = [geval.reporting.number(v, 2) for v in shown[column]]
    first = ["judge", "aspect", "passed", "winning rate", "advantage probability"]  # the verdict in view at 1400 px
    st.dataframe(shown, hide_index=True, key="alttest_summary",  # an imported judge's name is long: whole at 1400 px
                 column_order=[*first, *(c for c in shown.columns if c not in first)],
                 column_config={"judge": st.column_config.TextColumn(width="large", pinned=True)})
    if line := same_items_line(results[reading]):
        st.caption(plain(line))
    detail(store, dataset, combos, results[reading], ranked, chosen_epsilon, alignment, reading, fdr, opens_on)


def epsilon_line(chosen: float, who: str) -> str:
    """What the epsilon in force is, beside the kind of annotators chosen ("" when it is theirs, as the
    paper advises): once, "experts (ε 0.2)" stood beside an Epsilon of 0.15 and neither said which held."""
    paper = geval.alttest.EPSILONS
    if round(chosen, 4) == paper[who]:
        return ""
    whose = next((kind for kind, value in paper.items() if round(chosen, 4) == value), None)
    return (f"The test uses epsilon {chosen:g}, " + (f"the paper's for {WHO[whose]}" if whose else "your own") +
            f", not the {paper[who]:g} it advises for {WHO[who]}" +
            ("" if whose else f" (it advises {min(paper.values()):g} to {max(paper.values()):g})") +
            ": a larger epsilon lets the judge lose to a person by more and still beat them.")


def same_items_line(results: list) -> str:
    """How many items the judges of each aspect are tested on, when an aspect has two judges or more
    ("" otherwise): the items every one of them scored (and two annotators scored), so that they rank
    on the same items; a judge that scored more is tested on these only."""
    judges: dict[str, list] = {}
    for r in results:
        if not r.baseline and not r.alone:
            judges.setdefault(r.aspect, []).append(r)
    shared = [f"{len(rs)} judges of {aspect} on the {max(r.items for r in rs)} items all of them scored"
              for aspect, rs in judges.items() if len(rs) > 1]
    alone = [f"{r.judge} on its own {r.items}" for r in results if r.alone]
    return (("Judges are compared on the same items: " + "; ".join(shared) + " (and at least two annotators "
             "scored); a judge that scored more items is tested on these only." if shared else "")
            + (f" Read alone, too few items to be set beside the others: {'; '.join(alone)}." if alone else "")).strip()


def ranking(results: dict, reading: str) -> pd.DataFrame:
    """`geval.alttest.summary` of the `reading` chosen, ranked by advantage probability, with each
    judge's advantage probability read the other ways beside it (none for an imported judge)."""
    table = geval.alttest.summary(results[reading])
    for other in geval.alttest.READINGS:
        if other == reading:
            continue
        by_key = {(r.judge, r.aspect): r for r in results[other]}
        table[f"advantage probability, read as {READ_AS[other]}"] = [
            math.nan if read in (*geval.alttest.STORED, "a constant") else by_key[(judge, aspect)].advantage_probability
            for judge, aspect, read in zip(table["judge"], table["aspect"], table["reading"])]
    return table.drop(columns=["epsilon"])


def detail(store: geval.Store, dataset: str, combos: pd.DataFrame, results: list, ranked: pd.DataFrame,
           chosen_epsilon: float, alignment: str | None, reading: str = "mode", fdr: str = "by",
           opens_on: tuple[str, str, str] | None = None) -> None:
    """One judge and aspect: the verdict in one sentence, each annotator's line, the plan beside it (the
    judge read as the verdict reads it; never a refusal beneath a pass: `geval.alttest.plan_line`); opened
    on `opens_on` (the judge worth most labels: its label, the aspect, why), else on the highest advantage
    probability."""
    by_name = {f"{r.judge} · {r.aspect}": r for r in results if not r.baseline}  # the constant: in the table only
    names = [name for name in (f"{judge} · {aspect}" for judge, aspect in zip(ranked["judge"], ranked["aspect"]))
             if name in by_name]  # best first
    opened = next((name for name in names if opens_on and by_name[name].judge == opens_on[0]
                   and by_name[name].aspect.lower() == opens_on[1].lower()), None)
    state.follow("alttest_pick", opened, names)  # one not offered (another dataset's, a link's): the one opened on
    state.keep_valid("alttest_pick", names)
    little = {name for name in names if geval.alttest.says_little(by_name[name], results)}  # first by advantage,
    result = by_name[st.selectbox("Judge and aspect", names, key="alttest_pick",  # their pass says little: named so
                                  format_func=lambda n: f"{n} (passes, as a constant does)" if n in little else n)
                     if len(names) > 1 else names[0]]
    if opened and st.session_state.get("alttest_pick", names[0]) == opened:
        st.caption(plain(f"Opened on {opened}: {opens_on[2]} (the systems' section below reads it too); pick "
                         "another above."))
    drawn = st.warning if geval.alttest.says_little(result, results) else OUTCOME[result.passed]  # a constant passes
    drawn(plain(geval.alttest.full_verdict(result, results)), icon=":material/balance:")  # too: in caution
    annotators, plan = st.columns([3, 2])
    table = result.table()
    for column in ("judge wins", "person wins"):
        table[column] = [geval.reporting.number(v, 2) for v in table[column]]
    table["p"] = [geval.reporting.format_p(p) for p in table["p"]]
    annotators.dataframe(table, hide_index=True, key="alttest_annotators")
    positions = [a.name for a in result.annotators if a.name.startswith("#")]
    annotators.caption("Per annotator: the items compared (those with another annotator and a judge score), the share "
                       "of them on which the judge's (the person's) alignment with the other annotators is at least "
                       "the other's (a tie counts for both), the one-sided p-value, and whether the judge beats the "
                       f"annotator after Benjamini-Yekutieli: the test finds the person's share above the judge's by "
                       f"less than epsilon ({chosen_epsilon:g}), so a judge may beat a person who wins more often."
                       + (f" {', '.join(positions)} are positions, not people: the k-th score of each item (the file "
                          "does not name its annotators, so #3 of one item may be another person than #3 of the next)."
                          if positions else ""))
    by_label = combos.set_index("label")
    combo = by_label.loc[result.judge] if result.judge in by_label.index else None
    if combo is not None:  # under the table, on one line: beside the plan it broke at "summeval-|coherence", "1-|5"
        annotators.caption("Judge signature:")
        annotators.code(combo["signature"], language=None, wrap_lines=False)
    with plan:
        planned = cached.alttest_plan(store, dataset, result.aspect, combos, combo, chosen_epsilon,
                                      alignment if alignment != "rank" else None, result.by, reading, fdr)
        if planned is None:
            st.info(NEEDS_TWO, icon=":material/groups:")
        else:
            line = geval.alttest.plan_line(result, results, planned)
            said = line == geval.alttest.caveat(result, results)  # the verdict above says it already, in full
            st.info(plain(SAID_ABOVE if said else line), icon=":material/groups:")
            if alignment == "rank":
                st.caption("The plan simulates neg-rmse: rank alignment is not simulated, so this count is for "
                           "neg-rmse, an estimate for rank.")


def planning_line(store: geval.Store, dataset: str, aspect: str, combos: pd.DataFrame, combo: pd.Series | None) -> None:
    """The Label page's line: how many items give the test an 80% chance with annotators agreeing as
    these do, or what it needs first (a second annotator's labels on the same items)."""
    side = ANNOTATORS_OF[store.human_side(dataset)]
    planned = cached.alttest_plan(store, dataset, aspect, combos, combo, epsilon(store, dataset),
                                  reading=st.session_state.get("alttest_reading", "mode"),
                                  fdr=st.session_state.get("alttest_fdr", "by"))  # as the Agreement page reads it
    if planned is None:
        st.caption(f"Can the judge replace an annotator? The alternative annotator test needs a second annotator's "
                   f"labels of {plain(aspect)} on the same items: label them under another name (Annotator, in "
                   "\"What to label, and in which order\"), or import a colleague's labels on the Data page.")
        return
    sentence = planned.sentence()
    st.caption(f"Can the judge replace an annotator? The alternative annotator test on {side}: "
               + plain(sentence[:1].lower() + sentence[1:]) + " The test itself: the Agreement page.")
