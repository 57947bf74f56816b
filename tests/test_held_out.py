"""geval.analysis.held_out: every prompt search is logged when it starts, and every table that
reads a combination leaves out the groups a search chose its template version on (a one-aspect
template from prompts/ keeps its own name, so its name cannot tell), and says which it keeps."""

from __future__ import annotations

import re

import numpy as np
import pytest
from helpers import make_items, scripted

import geval
from geval.analysis.held_out import held_out, searched_versions
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
    assert "2 searches on this split; this is the 1st" in text and "2 searches on this split; this is the 2nd" in text
    with pytest.raises(geval.GevalError, match="does not cover one round"):  # refused before any call
        tune(store, "tc", scripted(cot_follows_people), "Natural", budget=5, start=PLAIN, others=[COT], few_shot=(),
             seed=1)
    text = geval.reporting.report(store, "tc", baselines=(), figures=False, ceiling=False).markdown()
    assert "3 searches on this split (2 scored on its test groups); this is the 3rd" in text
    judged = text[text.index("## What was judged"):text.index("## Agreement with people")]
    assert any("naturalness-cot" in line and "read without the 10 tune groups" in line for line in judged.splitlines())
