"""The bottom line (issue 42, item 2): the judge a lead is shown first is the one worth most labels (the
newest imported was the default, and a lead reads a default as a recommendation), never a constant; one
sentence per aspect says what it saves, whether it may replace an annotator and where the orders differ;
the report, `geval systems` and `geval alttest` open on it. The tests assert the rule (the highest figure
of the labels-saved entry point wins), not which judge wins on a dataset today."""

from __future__ import annotations

import copy
import math
import re

import pandas as pd
import pytest
from helpers import run_cli

import geval
from geval.data.columns import columns
from geval.decisions.alttest import AltTest, Annotator
from geval.decisions.systems import SystemMeans
from geval.reporting import bottom_line
from geval.reporting.bottom_line import TOGETHER, sentence, short_names, worth_most
from tests.test_systems import _personachat


def _worth(saved: dict[str, float]) -> pd.DataFrame:
    """A `SystemMeans.worth` of judges "<label>: k" with these shares saved."""
    return pd.DataFrame({"judge": [f"{label}: k" if label != TOGETHER else label for label in saved],
                         "combo": [label if label != TOGETHER else "" for label in saved],
                         "saved": list(saved.values())})


def test_the_default_is_the_judge_with_the_highest_figure_never_a_constant_nor_judges_fitted_together():
    worth = _worth({"newest": -0.02, "best": 0.11, "next": 0.10, TOGETHER: 0.20, "unread": math.nan})
    assert worth_most(worth) == "best: k"
    assert worth_most(worth, among=["newest", "next"]) == "next: k"  # only those a page has chosen
    every_one_below = _worth({"weak": -0.06, "constant": 0.0, "weaker": -0.19})
    assert worth_most(every_one_below) == "constant: k"  # what a constant would win ...
    assert worth_most(every_one_below, constant={"constant: k"}) == "weak: k"  # ... and never does
    assert worth_most(_worth({"unread": math.nan}), among=None) is None
    assert worth_most(_worth({"a": 0.1}), among=[]) is None


def test_a_tie_goes_to_the_first_judge_given_whatever_the_order_of_the_others():
    assert worth_most(_worth({"a": 0.05, "b": 0.08, "c": 0.08})) == "b: k"
    assert worth_most(_worth({"c": 0.08, "a": 0.05, "b": 0.08})) == "c: k"
    assert len({worth_most(_worth({"b": 0.08, "c": 0.08})) for _ in range(5)}) == 1


def _test(judge: str, beaten: int, passed: bool | None, advantage: float, epsilon: float = 0.2) -> AltTest:
    """An alternative annotator test of `judge` on "coherence" against three annotators."""
    annotators = [Annotator(f"a{k}", 100, advantage, 1 - advantage, 0.01, rejected=k < beaten) for k in range(3)]
    return AltTest(epsilon, "neg-rmse", annotators, 100, 0, judge=judge, aspect="coherence",
                   missing=[] if passed is not None else ["fewer than 30 items per annotator"])


def _figures(rows: dict[str, tuple]) -> pd.DataFrame:
    """`bottom_line.figures` of judges by label: (pearson, within, saved, test, constant), the share saved with an
    interval that holds it well above 0 (half of it, at its low end)."""
    frame = pd.DataFrame({"combo": list(rows), "pearson": [r[0] for r in rows.values()],
                          "within": [r[1] for r in rows.values()], "constant": [r[4] for r in rows.values()]},
                         index=[f"{label}: coherence" for label in rows])
    return bottom_line.figures("coherence", frame, {label: r[2] if isinstance(r[2], tuple) else (r[2], r[2] / 2)
                                                 for label, r in rows.items()},
                               {(label, "Coherence"): r[3] for label, r in rows.items() if r[3] is not None})


def test_where_every_item_is_labeled_no_judge_is_worth_most_and_the_closest_to_people_is_read_instead():
    """Every judge saves exactly 0 when every item is labeled: the first of them led, however poorly it agreed."""
    assert worth_most(_worth({"poor": 0.0, "good": 0.0})) is None
    assert worth_most(_worth({"poor": 0.0, "good": 0.01})) == "good: k"
    judges = pd.DataFrame({"combo": ["poor", "good", "flat"], "pearson": [0.3, 0.6, math.nan],
                           "within": [0.2, 0.5, math.nan], "constant": [False, False, True]},
                          index=["poor: k", "good: k", "flat: k"])
    assert bottom_line.closest(judges) == "good: k"
    assert bottom_line.closest(judges, among=["poor"]) == "poor: k"
    no_systems = judges.assign(within=math.nan)  # then over the items
    assert bottom_line.closest(no_systems.assign(pearson=[0.7, 0.6, math.nan])) == "poor: k"
    assert bottom_line.closest(judges[judges["constant"]]) is None


def test_the_sentence_names_the_judge_what_it_saves_whether_it_replaces_and_where_the_orders_differ():
    rows = {"judge-a": (0.55, 0.43, 0.11, _test("judge-a", 2, True, 0.75), False),
            "judge-b": (0.49, 0.39, 0.10, _test("judge-b", 1, False, 0.70), False),
            "always-3": (math.nan, math.nan, 0.0, None, True)}
    frame = _figures(rows)
    default = bottom_line.default_of(frame)
    assert default == "judge-a: coherence"
    said = sentence("coherence", frame, default, 20)
    assert said.startswith("coherence: judge-a is worth most labels (+11% of those each system's mean needs at 20 "
                           "per system); it may replace an annotator (beats 2 of 3 annotators at epsilon 0.2")
    assert "Pearson and the advantage probability put it first too" in said and said.count(".") >= 1
    # the orders differ: Pearson leads with another judge, and the lead saves more from its agreement within systems
    rows["judge-b"] = (0.60, 0.30, 0.10, _test("judge-b", 1, False, 0.80), False)
    said = sentence("coherence", _figures(rows), default, 20)
    assert "by Pearson judge-b leads (0.60 against 0.55), but labels saved follow the agreement within systems " \
           "(0.43 against 0.30), which is what corrects a system's mean" in said
    assert "by advantage probability judge-b leads (0.80 against 0.75), which rewards the commonest score" in said
    rows["judge-b"] = (0.554, 0.30, 0.10, _test("judge-b", 1, False, 0.752), False)  # ahead, but not as shown
    said = sentence("coherence", _figures(rows), default, 20)
    assert "leads" not in said and "Pearson and the advantage probability put it first too" in said
    rows["judge-b"] = (0.60, 0.30, 0.10, _test("judge-b", 1, False, 0.80), False)
    rows["judge-a"] = (0.55, 0.43, 0.11, _test("judge-a", 0, None, math.nan), False)  # the lead has no verdict
    said = sentence("coherence", _figures(rows), default, 20)
    assert "by advantage probability judge-b leads (0.80 where it has none), which rewards" in said and "nan" not in said
    # where no judge saves any, and the test cannot decide
    rows = {"judge-a": (0.2, 0.1, -0.03, _test("judge-a", 0, None, 0.5), False)}
    said = sentence("coherence", _figures(rows), "judge-a: coherence", 10)
    assert said.startswith("coherence: no judge saves labels at 10 per system (the best, judge-a, -3%: the labels alone")
    assert "no verdict on whether it may replace an annotator (fewer than 30 items per annotator)" in said


def test_two_pearsons_on_different_numbers_of_items_are_not_set_side_by_side_as_a_comparison():
    """A judge scored on 30 items "led" one scored on all 60 by Pearson (0.14 against -0.13), where on the 30 both
    scored the two were 0.14 and -0.04: the sentence now says what each rests on."""
    rows = {"judge-a": (-0.13, 0.11, 0.0, _test("judge-a", 0, False, 0.70), False),
            "judge-b": (0.14, -0.10, -0.01, _test("judge-b", 0, False, 0.59), False)}
    frame = _figures(rows).assign(items=[60, 30], groups=[10, 10])
    said = sentence("coherence", frame, "judge-a: coherence", 5)
    assert "by Pearson judge-b leads (0.14 on 30 items against -0.13 on 60: not the same items, so not yet a " \
           "comparison)" in said
    said = sentence("coherence", frame.assign(items=[60, 60]), "judge-a: coherence", 5)
    assert "by Pearson judge-b leads (0.14 against -0.13)" in said


def test_a_judge_of_a_few_groups_does_not_lead_one_of_many_by_a_higher_pearson():
    """A judge of 8 items in 2 dialogues led the report's sentence (Pearson 0.60) over one of every item (0.40 on
    10 dialogues); a judge is set beside the others by its correlation where it is read on MIN_GROUPS groups."""
    judges = pd.DataFrame({"combo": ["few", "many"], "pearson": [0.60, 0.40], "within": [0.55, 0.35],
                           "groups": [2, 10], "constant": [False, False]}, index=["few: k", "many: k"])
    assert bottom_line.closest(judges) == "many: k"
    assert sentence("coherence", judges.assign(saved=math.nan, test=None, advantage=math.nan), None, 20).startswith(
        "coherence: many agrees best with people (Pearson 0.40")
    assert bottom_line.closest(judges.assign(groups=[2, 3])) == "few: k"  # none read on enough: the highest
    worth = judges.assign(saved=[0.10, 0.30], test=None, advantage=math.nan)
    said = sentence("coherence", worth, "many: k", 20)  # worth most labels: no Pearson of 2 dialogues set against it
    assert said.startswith("coherence: many is worth most labels") and "few" not in said, said
    assert "by Pearson few leads" in sentence("coherence", worth.assign(groups=[10, 10]), "many: k", 20)


def test_one_judge_on_a_few_items_is_not_said_to_agree_best_and_its_pearson_says_what_it_rests_on():
    """One judge scored 5 items of one dialogue: it agrees with people at a Pearson of 5 items, said so, not "best"
    (there is no other) and not bare (a new user read 0.80 as a finding)."""
    judges = pd.DataFrame({"combo": ["only"], "pearson": [0.80], "within": [0.70], "groups": [1], "items": [5],
                           "constant": [False]}, index=["only: k"])
    said = sentence("Natural", judges.assign(saved=math.nan, test=None, advantage=math.nan), None, 20)
    assert said.startswith("Natural: only agrees with people (Pearson 0.80 on 5 items of 1 dialogue or document: "
                           "too few for an interval (it needs 10), not yet to rely on; the labels it saves are not "
                           "read"), said
    many = judges.assign(groups=[12], items=[60], saved=math.nan, test=None, advantage=math.nan)
    assert sentence("Natural", many, None, 20).startswith("Natural: only agrees with people (Pearson 0.80; the labels")


def test_a_judge_whose_pearson_is_not_above_0_is_not_said_to_agree_with_people():
    """The closest of two judges, at Pearson -0.21, "agrees best with people" (length beat it at 0.62)."""
    judges = pd.DataFrame({"combo": ["stub", "early"], "pearson": [-0.21, -0.40], "within": [-0.2, -0.3],
                           "groups": [10, 10], "items": [40, 40], "constant": [False, False]},
                          index=["stub: k", "early: k"]).assign(saved=math.nan, test=None, advantage=math.nan)
    said = sentence("helpful", judges, None, 10)
    assert said.startswith("helpful: no judge here agrees with people (the closest, stub: Pearson -0.21; the labels "
                           "it saves are not read here)"), said
    said = sentence("helpful", judges.iloc[:1], None, 10)
    assert said.startswith("helpful: stub does not agree with people (Pearson -0.21; the labels it saves are not read "
                           "here)")
    said = sentence("helpful", judges.iloc[:1], None, 10, why_not="every item is labeled")  # the page's reason
    assert "(Pearson -0.21; the labels it saves are not read here: every item is labeled)" in said, said
    said = sentence("helpful", judges.assign(pearson=[0.0, -0.4]).iloc[:1], None, 10)
    assert said.startswith("helpful: stub does not agree with people (Pearson 0.00;"), said
    assert sentence("helpful", judges.assign(pearson=[0.3, 0.1]), None, 10).startswith(
        "helpful: stub agrees best with people (Pearson 0.30;")


def _system_means(labeled: int, apart: list[bool]) -> SystemMeans:
    """A `SystemMeans` of three systems of 10 items, `labeled` each, with the pairs `apart` told apart together."""
    pairs = [("A", "B"), ("A", "C"), ("B", "C")]
    differences = pd.DataFrame({"a": [a for a, _ in pairs], "b": [b for _, b in pairs], "difference": [0.3] * 3,
                                "low": [0.1] * 3, "high": [0.5] * 3,
                                "simultaneous_low": [0.05 if told else -0.1 for told in apart],
                                "simultaneous_high": [0.55] * 3})
    table = pd.DataFrame({"system": ["A", "B", "C"], "items": [10] * 3, "labeled": [labeled] * 3})
    return SystemMeans("helpful", (1, 5), "stub: helpful", table, differences, pd.DataFrame(), pd.DataFrame(), False)


def test_the_systems_line_does_not_say_others_cannot_be_told_apart_when_every_pair_differs_nor_hide_every_item_labeled():
    """"6 of 6 pairs of systems differ …; the others cannot be told apart", on 10 items a system all labeled."""
    said = bottom_line.systems_line(_system_means(10, [True, True, True]))
    assert said == ("helpful: all 3 pairs of systems differ (every item labeled: the people's own means on these "
                    "items, not a sample's estimate) with stub and 10 labels per system: A above B, A above C, "
                    "B above C."), said
    said = bottom_line.systems_line(_system_means(5, [True, False, True]))
    assert said == ("helpful: 2 of 3 pairs of systems differ for all pairs together with stub and 5 labels per "
                    "system: A above B, B above C; the others cannot be told apart."), said
    said = bottom_line.systems_line(_system_means(5, [False, False, False]))  # the pairs alone, named: the page's
    assert said == ("helpful: no two of the 3 systems can be told apart for all 3 pairs together with stub and 5 "
                    "labels per system (3 of 3 pairs differ, each pair alone: A above B, A above C, B above C)."), said


def test_an_aspect_no_judge_here_scores_says_so_not_that_its_judges_have_no_correlation():
    """A report of some judges only (the Agreement page's choice) may hold none that scores an aspect."""
    rows = {"judge-a": (0.55, 0.43, 0.11, None, False)}
    none = _figures(rows).iloc[:0]
    assert sentence("coherence", none, None, 20) == ("coherence: no judge here scores it (score it, or choose a "
                                                      "judge that does).")
    flat = _figures({"judge-a": (math.nan, math.nan, math.nan, None, False)})
    assert sentence("coherence", flat, None, 20).startswith("coherence: no judge here has a correlation with people")


def test_a_saving_whose_interval_holds_0_says_it_is_not_told_apart_from_the_labels_alone():
    """"worth most labels (+2% ...)" was read as a finding where its interval ran below 0 (31 [29, 32] labels' worth
    against 30 given)."""
    rows = {"judge-a": (0.55, 0.43, (0.02, -0.03), None, False), "judge-b": (0.50, 0.40, (0.01, -0.05), None, False)}
    said = sentence("coherence", _figures(rows), "judge-a: coherence", 30)
    assert said.startswith("coherence: judge-a is worth most labels (+2% of those each system's mean needs at 30 per "
                           "system; its 95% interval holds 0: not told apart from the labels alone)"), said
    clear = {"judge-a": (0.55, 0.43, (0.20, 0.05), None, False)}
    assert "interval holds 0" not in sentence("coherence", _figures(clear), "judge-a: coherence", 30)
    # no interval (fewer labeled groups than it needs): said so, not read as a finding (the only judge of 9 labels
    # read "worth most labels (+16% ...)" while the table beside it said "no interval")
    unsure = sentence("coherence", _figures({"judge-a": (0.55, 0.43, (0.16, math.nan), None, False)}),
                      "judge-a: coherence", 9, systems=False)
    assert unsure.startswith("coherence: judge-a is worth most labels (+16% of those the dataset's mean needs at 9 "
                             "labels; no interval: 10 labeled groups needed, not yet to rely on)"), unsure


def test_a_constant_that_passes_the_test_too_makes_a_pass_say_little():
    rows = {"judge-a": (0.55, 0.43, 0.11, _test("judge-a", 3, True, 0.9), False)}
    constant = _test("always 5", 3, True, 0.9)
    said = sentence("coherence", _figures(rows), "judge-a: coherence", 20, constant_test=constant)
    assert "it passes the test to replace an annotator (beats 3 of 3" in said and "but so does a constant" in said


def test_an_imported_judge_is_named_in_a_sentence_by_its_own_name_where_that_tells_it_apart():
    named = short_names(["gpt-4o (imported from a.json)", "mistral (imported from a.json)",
                         "gemini (imported from a.json)", "gemini (imported from b.json)", "t@123 · embedded: q"])
    assert named("gpt-4o (imported from a.json)") == "gpt-4o"
    assert named("gemini (imported from b.json)") == "gemini (imported from b.json)"  # two of the name: the file
    assert named("t@123 · embedded: q") == "t@123 · embedded: q"


#: The constant judge's column.
CONSTANT = {"always-2 (imported from always-2.csv): natural"}


@pytest.fixture(scope="module")
def three_judges(tmp_path_factory):
    """A close judge, a noisy one and a constant; then, the newest (the old default), a copy of whichever of
    the first two the labels-saved figure puts last, under the name "late"."""
    folder = tmp_path_factory.mktemp("bottom")
    store, items = _personachat(folder, {"close": 0.3, "noisy": 3.0})  # the people's Natural plus noise of this sd
    (folder / "always-2.csv").write_text("item_id,Natural\n" + "".join(f"{i.id},2\n" for i in items))
    geval.alttest.import_judge(store, "personachat_usr_sample", folder / "always-2.csv", "always-2")
    worth = geval.labeling.system_means(store, "personachat_usr_sample", "Natural", per_system=5,
                                        design="documents").worth
    last = min((j for j in worth["judge"] if j.startswith(("close", "noisy"))),
               key=dict(zip(worth["judge"], worth["saved"])).get)
    (folder / "late.csv").write_text((folder / f"{last.split(' ')[0]}.csv").read_text())
    geval.alttest.import_judge(store, "personachat_usr_sample", folder / "late.csv", "late")
    yield folder, store, items
    store.close()


def test_the_systems_estimate_reads_the_judge_worth_most_labels_not_the_newest(three_judges):
    _, store, items = three_judges
    judges = bottom_line.judges_on(geval.labeling.features(store, "personachat_usr_sample", "Natural", baselines=(),
                                                           items=items), items, "Natural")
    assert set(judges.index[judges["constant"]]) == CONSTANT
    newest = geval.labeling.system_means(store, "personachat_usr_sample", "Natural", per_system=5, design="documents")
    assert newest.judge.startswith("late")  # what every place opened on
    expected = worth_most(newest.worth, CONSTANT)
    assert expected != newest.judge and expected.startswith(("close", "noisy"))
    read = bottom_line.default_means(store, "personachat_usr_sample", "Natural", judges, 5, items=items)
    assert read.judge == expected


def test_an_aspect_no_chosen_judge_scores_has_no_systems_line_read_with_another(three_judges):
    """The report of the page's choice said "Maintains Context: no judge here scores it", then "1 of 15 pairs of
    systems differ ... with topicalchat-coherence", a judge not chosen: the systems are read with none there."""
    _, store, items = three_judges
    aspects, _ = bottom_line.read(store, "personachat_usr_sample", items, among=["a judge of another aspect"])
    natural = next(a for a in aspects if a.aspect == "Natural")
    assert natural.result is None and natural.error == bottom_line.NONE_HERE
    blocks = bottom_line.section("what", aspects, [], None)
    said = " ".join(str(getattr(b, "text", "")) + " ".join(getattr(b, "lines", ())) for b in blocks)
    assert "Natural: no judge here scores it" in said and "pairs of systems" not in said


def _lookup_built(index: pd.Index) -> bool:
    """Whether pandas has built the index's lookup table (its engine's map of every id: 32 MB at a million ids,
    kept as long as the index, the items' for the session)."""
    engine = index._cache.get("_engine")
    return engine is not None and engine.is_mapping_populated


@pytest.mark.parametrize("read", ["judges_on", "system_means"])
def test_the_judges_scores_are_read_by_place_with_no_lookup_table_of_the_items_ids(three_judges, read):
    """Both read the judges' scores by the items' places (issue 47.1): a join or a mask by id built the items'
    index's lookup table, held with the items' columns."""
    _, store, items = three_judges
    fresh = [copy.copy(item) for item in items]  # columns of their own, nothing built on them yet
    if read == "judges_on":
        found = geval.labeling.features(store, "personachat_usr_sample", "Natural", baselines=(), items=fresh)
        figures = bottom_line.judges_on(found, fresh, "Natural")
        assert set(figures.index[figures["constant"]]) == CONSTANT
    else:
        geval.labeling.system_means(store, "personachat_usr_sample", "Natural", per_system=5, design="documents",
                                    items=fresh)
    assert not _lookup_built(columns(fresh).index)


def test_geval_systems_and_alttest_open_on_it_and_say_so(three_judges):
    folder, store, _ = three_judges
    done = run_cli("systems", "personachat_usr_sample", "--labels", "5", "--store", str(folder / "s.sqlite"))
    assert done.returncode == 0, done.stderr
    header = next(line for line in done.stdout.splitlines() if " · Natural (1-3): " in line)
    worth = geval.labeling.system_means(store, "personachat_usr_sample", "Natural", per_system=5,
                                        design="documents").worth
    assert header.endswith(f"combined with {worth_most(worth, CONSTANT)} (the judge worth most labels here: --judge "
                           "picks another)")
    best = worth_most(worth, CONSTANT).split(" (imported")[0]
    line = next(line for line in done.stdout.splitlines() if line.startswith("Bottom line: Natural: "))
    assert re.match(rf"Bottom line: Natural: ({best} is worth most labels|no judge saves labels at 5 per system "
                    rf"\(the best, {best},)", line), line
    tested = run_cli("alttest", "personachat_usr_sample", "--brief", "--store", str(folder / "s.sqlite"))
    assert tested.returncode == 0, tested.stderr
    said = tested.stdout[tested.stdout.index("Bottom line:"):]
    assert re.search(r"^  Natural: \S+ is worth most labels|^  Natural: no judge saves labels", said, re.MULTILINE)


def test_geval_systems_names_the_only_judge_so(tmp_path):
    """One judge: the header said "the judge closest to people (the highest Pearson within systems ...)" of it."""
    store, _ = _personachat(tmp_path, {"close": 0.3})
    store.close()
    done = run_cli("systems", "personachat_usr_sample", "--labels", "5", "--store", str(tmp_path / "s.sqlite"))
    assert done.returncode == 0, done.stderr
    header = next(line for line in done.stdout.splitlines() if " · Natural (1-3): " in line)
    assert header.endswith("(the only judge compared with Natural)"), header


def test_the_report_opens_on_the_bottom_line_and_its_systems_read_that_judge(three_judges):
    _, store, _ = three_judges
    made = geval.reporting.report(store, "personachat_usr_sample", baselines=[], figures=False, n_boot=50,
                                  per_system=5, alttest_epsilon=0.1)
    markdown = made.markdown()
    opening = markdown[:markdown.index("## Summary")]
    assert "## Bottom line" in opening and "(the alternative annotator test, epsilon 0.1)" in opening
    worth = geval.labeling.system_means(store, "personachat_usr_sample", "Natural", per_system=5,
                                        design="documents").worth
    best = worth_most(worth, CONSTANT).split(" (imported")[0]
    assert re.search(rf"^- Natural: ({best} is worth most|no judge saves labels at 5 per system \(the best, {best},)",
                     opening, re.MULTILINE)
    assert re.search(r"^- Natural: (\d+ of 10 pairs of systems differ|no two of the 5 systems can be told apart)",
                     opening, re.MULTILINE)  # which systems differ
    systems = markdown[markdown.index("## Systems as people would score them"):]
    assert f"Each aspect's estimate reads the judge worth most labels there, as the bottom line says (the most " \
           f"recently scored where no judge's worth could be read): Natural: {best} (imported" in systems


def test_the_sentence_names_whom_the_judge_is_compared_with():
    """Your labels as the human side: "agrees with your labels", not "with people", who never scored the items."""
    frame = _figures({"judge-a": (0.55, 0.43, math.nan, None, False)})
    assert sentence("coherence", frame, None, 20).startswith("coherence: judge-a agrees with people (Pearson 0.55")
    mine = sentence("coherence", frame, None, 20, who="your labels")
    assert mine.startswith("coherence: judge-a agrees with your labels (Pearson 0.55"), mine
    against = sentence("coherence", _figures({"judge-a": (-0.2, -0.1, math.nan, None, False)}), None, 20,
                       who="your labels")
    assert against.startswith("coherence: judge-a does not agree with your labels"), against
