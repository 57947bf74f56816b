"""geval.analysis.held_out: every prompt search is logged when it starts, and every table that
reads a combination leaves out the groups a search chose its template version on (a one-aspect
template from prompts/ keeps its own name, so its name cannot tell), and says which it keeps."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from helpers import make_items, scripted

import geval
from geval.analysis.held_out import content_key, held_out, searched_versions
from geval.data.dataset import Dataset
from geval.judging.templates import Aspect, Template
from geval.tuning.search import tune

ITEMS = make_items(60, dataset="tc", per_group=3)  # 20 dialogues
HUMAN = {item.response: item.human_mean("Natural") for item in ITEMS}
PLAIN, COT = Template.load("topicalchat-naturalness"), Template.load("topicalchat-naturalness-cot")


def cot_follows_people(prompt: str, aspect: Aspect) -> dict[int, float]:
    """The chain-of-thought template (its prompt holds generated steps) scores as people do; the plain one is noise."""
    response = re.findall(r"Response:\n(response \d+)", prompt)[-1]
    if "Assign a score." in prompt:
        return {round(HUMAN[response]): 1.0}
    return {int(np.random.default_rng(int(response.split()[1])).integers(1, 4)): 1.0}


@pytest.fixture
def searched(store):
    """Both templates scored on every dialogue first (as an analyst would), then a search of them."""
    store.save_dataset(Dataset("tc", "tc.json", "table", ITEMS))
    judge = scripted(cot_follows_people)
    for template in (PLAIN, COT):
        geval.score(store, ITEMS, template, judge, "tc")
    result = tune(store, "tc", judge, "Natural", budget=2000, start=PLAIN, others=[COT], few_shot=(), ensemble=False,
                  seed=1)
    assert result.winner == "topicalchat-naturalness-cot" and result.winner_template.version == COT.version
    return store, result


def test_every_search_is_logged_with_its_candidates_groups_and_ending(searched):
    store, result = searched
    [entry] = store.search_log("tc")
    assert (entry["human"], entry["status"], entry["tested"], entry["winner"]) == ("Natural", "finished", 1,
                                                                                 result.winner)
    assert entry["tune_groups"] == result.tune_groups and entry["test_groups"] == result.test_groups
    assert {c["version"] for c in entry["candidates"]} == {PLAIN.version, COT.version}  # by version, whatever the name
    assert entry["rounds"] >= 1 and entry["settings"]["budget"] == 2000 and entry["finished"] >= entry["started"]
    tuned = searched_versions(store, "tc")
    assert tuned[COT.version].chosen == set(result.tune_groups) and not tuned[COT.version].tried
    assert tuned[PLAIN.version].tried == set(result.tune_groups) and not tuned[PLAIN.version].chosen


def test_a_search_that_fails_is_logged_as_failed_with_its_reason(store):
    store.save_dataset(Dataset("tc", "tc.json", "table", ITEMS))
    with pytest.raises(geval.GevalError, match="does not cover one round"):
        tune(store, "tc", scripted(cot_follows_people), "Natural", budget=5, start=PLAIN, others=[COT], few_shot=())
    [entry] = store.search_log("tc")
    assert entry["status"] == "failed" and "does not cover one round" in entry["reason"] and entry["rounds"] == 0
    assert searched_versions(store, "tc") == {}  # it finished no round: it chose on nothing


def test_the_leaderboard_reads_a_searched_winner_from_prompts_only_outside_its_tune_groups(searched):
    store, result = searched
    board = geval.leaderboard(store, "tc", baselines=(), ceiling=False)
    rows = board.rows.set_index("row")
    cot = next(label for label in rows.index if "naturalness-cot" in label)
    plain = next(label for label in rows.index if "naturalness@" in label or "naturalness ·" in label)
    assert "read without the 10 tune groups of the prompt search(es) that chose it (30 items left out)" \
        in rows.loc[cot, "note"]
    assert "includes the 10 tune groups of prompt search(es) that tried it without choosing it" \
        in rows.loc[plain, "note"]
    cells = board.cells[(board.cells["metric"] == "pearson") & (board.cells["level"] == "item")].set_index("row")
    assert cells.loc[cot, "n"] == 30 and cells.loc[plain, "n"] == 60
    tune_ids = {i.id for i in ITEMS if i.group in set(result.tune_groups)}
    kept, _ = held_out(ITEMS, [COT.version], searched_versions(store, "tc"))
    assert {i.id for i in kept} == {i.id for i in ITEMS} - tune_ids


def test_a_comparison_with_the_winner_says_the_items_a_search_left_out_whatever_its_interval(searched):
    """Compare read the start against the winner on the 30 items outside the winner's tune groups and said so only
    when it had no interval, as if that were why (the page showed neither: 30 of 60 items gone unsaid)."""
    from geval.analysis.comparison import compare

    store, result = searched
    combos = store.combos("tc").set_index("template_version")["signature"]
    found = compare(store, "tc", (PLAIN.version, combos[PLAIN.version]), (COT.version, combos[COT.version]), "Natural")
    assert found.n_items == 30 and found.note == ""
    said = "read without the 10 tune groups of the prompt search(es) that chose it (30 items left out)"
    assert said in found.searched
    assert geval.reporting.verdict(found, "plain", "cot", "Natural").endswith(f" Prompt searches: {found.searched}.")


def test_the_report_reads_it_without_its_tune_groups_and_lists_every_search_on_the_split(searched):
    store, result = searched
    again = tune(store, "tc", scripted(cot_follows_people), "Natural", budget=2000, start=PLAIN, others=[COT],
                 few_shot=(), ensemble=False, seed=1)  # the same split again: a second search on it
    assert again.calls == 0
    text = geval.reporting.report(store, "tc", baselines=(), figures=False, ceiling=False).markdown()
    agreement = text[text.index("## Agreement with people"):text.index("## Template versions and judges compared")]
    cot_rows = [line for line in agreement.splitlines() if "naturalness-cot" in line and "| item |" in line]
    assert cot_rows and all("| 30 |" in line and "tune groups of the prompt search(es) that chose it" in line
                            for line in cot_rows)
    assert re.search(r"^## A\d+\. Every prompt search run on this dataset$", text, re.MULTILINE)  # at the end
    searches = f"2 searches from {PLAIN.name} on Natural, over 1 split; this is the"  # named readably
    assert f"{searches} 1st" in text and f"{searches} 2nd" in text
    with pytest.raises(geval.GevalError, match="does not cover one round"):  # refused before any call
        tune(store, "tc", scripted(cot_follows_people), "Natural", budget=5, start=PLAIN, others=[COT], few_shot=(),
             seed=1)
    text = geval.reporting.report(store, "tc", baselines=(), figures=False, ceiling=False).markdown()
    assert f"3 searches from {PLAIN.name} on Natural, over 1 split (2 scored on its test groups); this is the 3rd" \
        in text
    judged = text[text.index("## What was judged"):text.index("## Agreement with people")]
    assert any("naturalness-cot" in line and "read without the 10 tune groups" in line for line in judged.splitlines())


# --- held out whatever it is called: labels, another seed, a renamed copy, a sample of the file -----------


def _labels_as_people(store, dataset: str = "tc") -> None:
    """The user's labels as the human side: every item labeled as the people's mean, rounded."""
    for item in store.items(dataset):
        store.save_label(item.id, "Natural", round(HUMAN[item.response]))
    store.set_human_side(dataset, "you")


def test_a_with_labels_as_the_human_side_the_learning_curve_and_progress_line_leave_out_the_tune_groups(store):
    """(a) The labels section, the learning curve and the Label page's progress line read the judge as every table
    does: without the groups a search chose its template on (the review: `agree` read 30 of 60 items while the
    learning curve read the judge on all 60 labels, r = 1.000, and the progress line said 'now 1.00')."""
    from geval.decisions.labeling import curve, features, progress_line

    store.save_dataset(Dataset("tc", "tc.json", "table", ITEMS))
    _labels_as_people(store)
    judge = scripted(cot_follows_people)
    for template in (PLAIN, COT):
        geval.score(store, ITEMS, template, judge, "tc")
    result = tune(store, "tc", judge, "Natural", budget=2000, start=PLAIN, others=[COT], few_shot=(), ensemble=False,
                  seed=1)
    assert result.winner_template.version == COT.version
    tuned = {i.id for i in ITEMS if i.group in set(result.tune_groups)}
    assert len(geval.agree(store, "tc", (COT.version, None)).query("level == 'item'")["n"].unique()) == 1
    assert geval.agree(store, "tc", (COT.version, None)).query("level == 'item'")["n"].iloc[0] == 60 - len(tuned)

    found = features(store, "tc", "Natural", (COT.version, None), baselines=())
    assert found.judge_scores()[list(tuned)].isna().all() and found.judge_scores().notna().sum() == 60 - len(tuned)
    labels = pd.Series({i.id: float(round(HUMAN[i.response])) for i in ITEMS})
    line = progress_line(found, labels, "Natural")
    assert line.startswith(f"60 labeled ({60 - len(tuned)} where the judge is read: read without the 10 tune groups")
    learned = curve(store, "tc", "Natural", (COT.version, None), baselines=())
    assert learned.points["labels"].max() == 60 - len(tuned)
    assert any("read without the 10 tune groups" in note for note in learned.notes)
    report = geval.reporting.report(store, "tc", baselines=(), figures=False, ceiling=False).markdown()
    section = report[report.index("## Your labels"):]
    section = section[:section.index("\n## ")]
    appendix = re.search(r"appendix (A\d+), at the end", section).group(1)  # the curve, point by point
    section = report[report.index(f"## {appendix}. "):].split("\n## ")[0]
    assert f"| {60 - len(tuned)} |" in section and "| 60 |" not in section


def test_b_a_second_seed_read_on_groups_the_first_chose_on_says_so_and_both_are_counted(searched):
    """(b) Searches are counted per dataset and template over every split, and a winner read on test groups where
    another search (another seed) chose the same template says so; tables leave out both searches' tune groups."""
    store, first = searched
    second = tune(store, "tc", scripted(cot_follows_people), "Natural", budget=2000, start=PLAIN, others=[COT],
                  few_shot=(), ensemble=False, seed=2)
    assert second.winner_template.version == COT.version and second.tune_groups != first.tune_groups
    overlap = set(first.tune_groups) & set(second.test_groups)
    assert overlap
    text = geval.reporting.report(store, "tc", baselines=(), figures=False, ceiling=False).markdown()
    counted = f"2 searches from {PLAIN.name} on Natural, over 2 splits; this is the"  # named readably
    assert f"{counted} 1st" in text and f"{counted} 2nd" in text
    searches = text[text.index("## Prompt searches"):]
    searches = searches[:searches.index("\n## ")]
    rows = [line for line in searches.splitlines() if line.startswith("| Natural |")]
    assert len(rows) == 2
    assert rows[0].endswith("| yes |") == (not set(second.tune_groups) & set(first.test_groups))
    assert rows[1].endswith(f"| no: another search chose this template on {len(overlap)} of its test groups, so there "
                            "it was picked for agreeing with these people |")
    chosen = set(first.tune_groups) | set(second.tune_groups)
    n = geval.agree(store, "tc", (COT.version, None)).query("level == 'item'")["n"].iloc[0]
    assert n == sum(i.group not in chosen for i in ITEMS)


def test_b_tunes_own_printout_says_when_another_search_chose_its_winner_on_its_test_groups(searched):
    """(b) `geval tune`'s printout (and the Tune page's notes) read the second seed's winner on test groups where the
    first seed chose the same template, and said nothing of it (the report does)."""
    store, first = searched
    assert not any("not held out" in note for note in first.notes)
    second = tune(store, "tc", scripted(cot_follows_people), "Natural", budget=2000, start=PLAIN, others=[COT],
                  few_shot=(), ensemble=False, seed=2)
    overlap = set(first.tune_groups) & set(second.test_groups)
    assert second.winner_template.version == COT.version and overlap
    said = (f"not held out on {len(overlap)} of the {len(second.test_groups)} test groups: another prompt search "
            "(another seed or split) chose this template on them, so there it was picked for agreeing with these "
            "people; the report says so, and reads the searches together without them")
    assert said in second.notes and said in second.summary()


@pytest.mark.parametrize("how", ["renamed", "comment"])
def test_c_a_renamed_copy_of_the_winner_or_one_with_a_comment_line_is_the_winner(searched, how):
    """(c) A template version whose prompts are a searched candidate's (the judgment cache serves it: the same call
    keys) is that candidate: read without the tune groups it was chosen on, its notes say so (the review: read on
    all items with no note, r = 1.000)."""
    store, result = searched
    text = COT.text.replace('name = "topicalchat-naturalness-cot"', 'name = "my-naturalness"') if how == "renamed" \
        else COT.text.replace("+++\n", "+++\n# my edit: the same prompt\n", 1)
    copy = Template.parse(text)
    assert copy.version != COT.version
    done = geval.score(store, ITEMS, copy, scripted(cot_follows_people), "tc")
    assert done.cached == len(ITEMS)  # the same prompts: every call served from the cache
    table = geval.agree(store, "tc", (copy.version, None)).query("level == 'item'")
    assert set(table["n"]) == {60 - 3 * len(result.tune_groups)}
    assert all(f"its prompts are those of 1 searched template version(s) ({COT.version}): read as that version"
               in note for note in table["note"])
    board = geval.leaderboard(store, "tc", baselines=(), ceiling=False)
    row = next(label for label in board.rows["row"] if copy.name in label)
    assert "read without the 10 tune groups" in board.rows.set_index("row").loc[row, "note"]


def test_d_a_search_on_a_sample_holds_for_its_full_file_matched_by_content(store):
    """(d) Items are matched by content, not by dataset name: a search on a sample of the file chose its winner on
    groups that the full file, stored under another name, holds too; the full file reads it without them."""
    full = make_items(60, dataset="tc_full", per_group=3)
    sample = make_items(30, dataset="tc_sample", per_group=3)  # the first 10 dialogues, under another name
    assert {i.id for i in full}.isdisjoint(i.id for i in sample)
    store.save_dataset(Dataset("tc_full", "tc_full.json", "table", full))
    store.save_dataset(Dataset("tc_sample", "tc_sample.json", "table", sample))
    judge = scripted(cot_follows_people)
    for template in (PLAIN, COT):
        geval.score(store, full, template, judge, "tc_full")
    result = tune(store, "tc_sample", judge, "Natural", budget=2000, start=PLAIN, others=[COT], few_shot=(),
                  ensemble=False, seed=1)
    assert result.winner_template.version == COT.version
    tuned = searched_versions(store, "tc_full")[COT.version]
    assert tuned.chosen == set(result.tune_groups)  # the sample's groups are the full file's g0-g9
    table = geval.agree(store, "tc_full", (COT.version, None)).query("level == 'item'")
    assert set(table["n"]) == {60 - 3 * len(result.tune_groups)}
    assert searched_versions(store, "tc_full")[PLAIN.version].tried == set(result.tune_groups)


def test_e_the_same_dialogues_from_the_users_own_csv_without_a_system_column_are_matched_by_the_calls(searched,
                                                                                                     tmp_path):
    """(e) Loaded from the user's own CSV without a `system` column, the same dialogues get other content keys (and
    other group names); the winner's judgments are served from the cache, so the calls are the search's: it is read
    without its tune groups there too (the review: read on every item with no note)."""
    import csv

    store, result = searched
    path = tmp_path / "mine.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["context", "fact", "response", "dialogue", "natural"])
        for item in ITEMS:
            writer.writerow(["\n".join(turn.render() for turn in item.context), item.grounding, item.response,
                             f"dialogue {item.group}", list(item.human["Natural"])])
    mine = geval.load_dataset(path, mapping=["response=response", "context=context", "grounding=fact",
                                             "group=dialogue", "score:Natural=natural"], store=store)
    assert not set(map(content_key, mine.items)) & set(map(content_key, ITEMS))  # other content keys
    done = geval.score(store, mine.items, COT, scripted(cot_follows_people), "mine")
    assert done.cached == len(ITEMS) and done.calls == 0  # the same prompts: the search's calls
    tune_here = {f"dialogue {group}" for group in result.tune_groups}
    assert searched_versions(store, "mine")[COT.version].chosen == tune_here
    table = geval.agree(store, "mine", (COT.version, None)).query("level == 'item'")
    assert set(table["n"]) == {60 - 3 * len(result.tune_groups)}
    assert all("read without the 10 tune groups of the prompt search(es) that chose it" in note
               for note in table["note"])


def test_f_the_winner_edited_by_one_sentence_and_saved_from_it_is_read_as_the_winner(searched):
    """(f) A new version whose text was edited from the winner's (saved with its parent, as the Prompts page's editor
    saves it) asks other prompts, so the cache does not tell; its lineage does: read without the tune groups, through
    every edit (the review: read on every group with no note)."""
    store, result = searched
    edited = Template.parse(COT.text.replace("on one metric.", "on one metric. Be strict.", 1))
    again = Template.parse(edited.text.replace("Be strict.", "Be fair.", 1))
    assert len({COT.version, edited.version, again.version}) == 3
    store.save_template(edited, comment="one sentence more", parent=COT.version)
    store.save_template(again, parent=edited.version)
    assert store.template_parents() == {edited.version: COT.version, again.version: edited.version}
    for version in (edited, again):
        assert geval.score(store, ITEMS, version, scripted(cot_follows_people), "tc").calls == len(ITEMS)  # new calls
        table = geval.agree(store, "tc", (version.version, None)).query("level == 'item'")
        assert set(table["n"]) == {60 - 3 * len(result.tune_groups)}
        assert all(f"saved as an edit of 1 searched template version(s) ({COT.version}): read as that version; read "
                   "without the 10 tune groups" in note for note in table["note"])
    store.delete_template_version(edited.version)  # the edit between goes: the lineage stays
    assert store.template_parents() == {again.version: COT.version}
    unrelated = Template.parse(PLAIN.text.replace("+++\n", "+++\n# unrelated\n", 1).replace(
        'name = "topicalchat-naturalness"', 'name = "mine"'))
    store.save_template(unrelated, parent="")
    assert unrelated.version not in searched_versions(store, "tc")
