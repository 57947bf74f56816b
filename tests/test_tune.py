"""geval.tuning: the search keeps its test groups unseen, spends no more than its budget, finds
a variant that is better by construction, reports it on the test groups, and resumes."""

from __future__ import annotations

import math
import re
from dataclasses import replace

import numpy as np
import pytest
from helpers import make_items, make_template, scripted

import geval
from geval.data.dataset import Dataset
from geval.judging.templates import Aspect
from geval.reporting import report
from geval.tuning.search import TuneError, searched_together, split_groups, tune
from geval.tuning.variants import only_aspect, with_examples

START = make_template(name="test-naturalness", aspects=(("Naturalness", 1, 3, "Natural"),),
                      body="Context:\n{{context}}\n\nResponse:\n{{response}}\n\n- Naturalness:")
ITEMS = make_items(60, per_group=3)  # 20 groups
HUMAN = {item.response: item.human_mean("Natural") for item in ITEMS}


def judged(prompt: str) -> str:
    """The response a prompt judges: the last one it shows (examples come before it)."""
    return re.findall(r"Response:\n(response \d+)", prompt)[-1]


def good_with_examples(prompt: str, aspect: Aspect) -> dict[int, float]:
    """Noise for the plain template, the human score itself once examples are shown."""
    human = HUMAN[judged(prompt)]
    if "Here are examples" in prompt:
        return {round(human): 1.0}
    rng = np.random.default_rng(int(judged(prompt).split()[1]))
    return {int(rng.integers(1, 4)): 1.0}


def _search_and_test(calls: list[str], test_responses: set[str]) -> tuple[list[str], list[str]]:
    """The search's calls, then those on the test part (winner, its members, start): once the
    first test response is judged, every later call judges one."""
    on_test = [judged(prompt) in test_responses for prompt in calls]
    first = on_test.index(True) if any(on_test) else len(calls)
    assert all(on_test[first:]), "the search judged a test response, or went on after the test part began"
    return calls[:first], calls[first:]


@pytest.fixture
def stored(store):
    store.save_dataset(Dataset("synthetic", "synthetic.csv", "table", ITEMS))
    return store


def test_the_split_is_seeded_by_group_and_leaves_groups_on_both_sides():
    tune_part, test_part = split_groups([f"g{i}" for i in range(10)], 0.5, seed=3)
    assert len(tune_part) == len(test_part) == 5 and not set(tune_part) & set(test_part)
    assert (tune_part, test_part) == split_groups([f"g{i}" for i in range(10)], 0.5, seed=3)
    with pytest.raises(TuneError, match="1 group"):
        split_groups(["g0", "g0"])


def test_variants_are_templates_of_their_own_that_keep_one_aspect():
    both = make_template(name="test-two", aspects=(("Naturalness", 1, 3, "Natural"), ("Coherence", 1, 3)))
    one = only_aspect(both, "coherence")
    assert [a.name for a in one.aspects] == ["Coherence"] and one.name == "test-two~coherence"
    assert one.body.endswith("Form:\n- Coherence:")  # the other aspect's form line goes with it
    shown = with_examples(START, 2)
    assert shown.name == "test-naturalness~k2-stratified" and shown.examples.k == 2
    assert shown.body.index("{{examples}}") < shown.body.index("Context:")


def test_a_search_never_sees_its_test_groups_and_finds_the_better_variant(stored):
    judge = scripted(good_with_examples)
    result = tune(stored, "synthetic", judge, "Natural", budget=2000, start=START, seed=1)
    test_groups = set(result.test_groups)
    test_responses = {i.response for i in ITEMS if i.group in test_groups}
    tune_responses = {i.response for i in ITEMS if i.group in set(result.tune_groups)}
    search_calls, test_calls = _search_and_test(judge.calls, test_responses)
    for prompt in search_calls:  # neither judged nor shown as an example during the search
        assert not set(re.findall(r"response \d+", prompt)) & test_responses
    for prompt in test_calls:  # on the test part, examples still come from the tune part only
        shown = set(re.findall(r"response \d+", prompt)) - {judged(prompt)}
        assert judged(prompt) in test_responses and shown <= tune_responses
    assert "examples" in result.winner and result.winner != result.start
    assert result.test["winner"] > 0.9 and result.test["difference"] > 0.5 and result.test["p"] < 0.05
    assert result.calls == len(judge.calls) <= 2000 and result.tried >= 5
    assert set(result.table["candidate"]) >= {result.start, result.winner}
    assert "winner on the tune groups" in result.summary()
    text = report(stored, "synthetic", baselines=(), figures=False, ceiling=False).markdown()
    assert "## Prompt searches (`geval tune`)" in text
    line = next(line for line in text.splitlines() if f"| {result.winner} |" in line)
    assert f"| 10 / 10 | {result.tried} | {result.calls} | start: test-naturalness |" in line
    assert f"| {result.test['winner']:.3f} [{result.test['low']:.3f}, {result.test['high']:.3f}] |" in line
    assert f"| {result.test['difference']:+.3f} [" in line


def test_a_search_won_by_its_start_reads_so_in_the_report(stored):
    def good_without_examples(prompt: str, aspect: Aspect) -> dict[int, float]:
        noise = good_with_examples(prompt.replace("Here are examples", "Here are no examples"), aspect)
        return noise if "Here are examples" in prompt else {round(HUMAN[judged(prompt)]): 1.0}

    result = tune(stored, "synthetic", scripted(good_without_examples), "Natural", budget=2000, start=START, seed=1,
                  ensemble=False)
    assert result.winner == result.start
    assert result.summary().endswith("winner - start 0 (the winner is the start)")  # not "+0.000 [+0.000, ...
    assert result.test["difference"] == 0 and math.isnan(result.test["p"]) and math.isnan(result.test["diff_low"])
    text = report(stored, "synthetic", baselines=(), figures=False, ceiling=False).markdown()
    searches = text[text.index("## Prompt searches"):]
    line = next(line for line in searches.splitlines() if line.startswith("| Natural |"))
    assert line.endswith("| 0 (the winner is the start) | yes |")  # not "+0.000 [+0.000, +0.000] p 1.000"


def good_without_examples(prompt: str, aspect: Aspect) -> dict[int, float]:
    """The human score for the plain template, noise once examples are shown: the start wins."""
    noise = good_with_examples(prompt.replace("Here are examples", "Here are no examples"), aspect)
    return noise if "Here are examples" in prompt else {round(HUMAN[judged(prompt)]): 1.0}


def test_searches_read_together_say_where_the_start_won_instead_of_a_zero_interval(store):
    items = [replace(item, human={"Natural": item.human["Natural"], "Engaging": (float(1 + k % 2), 2.0)})
             for k, item in enumerate(ITEMS)]
    store.save_dataset(Dataset("synthetic", "synthetic.json", "usr", items))
    engaging = make_template(name="test-engagingness", aspects=(("Engagingness", 1, 3, "Engaging"),),
                             body="Context:\n{{context}}\n\nResponse:\n{{response}}\n\n- Engagingness:")
    won = tune(store, "synthetic", scripted(good_without_examples), "Natural", budget=2000, start=START, seed=1,
               others=[], ensemble=False)
    tune(store, "synthetic", scripted(good_with_examples), "Engaging", budget=2000, start=engaging, seed=1, others=[])
    assert won.winner == won.start
    together = searched_together(store, "synthetic").set_index("column")
    assert together.loc["Natural", "same"] and not together.loc["Engaging", "same"]
    assert math.isnan(together.loc["Natural", "p"]) and math.isnan(together.loc["Natural", "low"])
    section = report(store, "synthetic", figures=False, baselines=()).markdown()
    part = section[section.index("### The searches together"):]
    line = next(line for line in part.splitlines() if line.startswith("| Natural |"))
    assert line.endswith("| 0 (the winner is the start) |") and "p 1.000" not in line


def test_the_start_and_the_winner_are_read_on_the_test_groups_by_one_rule(store):
    """Per document (SummEval's protocol, at least 10 groups): the start is not shown as a number
    where the winner, on the same groups, is not (one document of constant scores leaves 9)."""
    items = [replace(item, level="summary") for item in make_items(80, dataset="se", per_group=4)]  # 20 documents
    store.save_dataset(Dataset("se", "se.json", "summeval", items))
    _, test_groups = split_groups([i.group for i in items], 0.5, 0)
    flat = {i.response for i in items if i.group == test_groups[0]}
    human = {i.response: i.human_mean("Natural") for i in items}

    def follows_people(prompt: str, aspect: Aspect) -> dict[int, float]:
        response = judged(prompt)
        return {2: 1.0} if response in flat else {round(human[response]): 1.0}

    result = tune(store, "se", scripted(follows_people), "Natural", budget=400, start=START, others=[], few_shot=(),
                  ensemble=False)
    assert result.level == "group" and len(result.test_groups) == 10
    assert math.isnan(result.test["winner"]) and math.isnan(result.test["start"])  # 9 of 10 documents: n/a both
    assert "winner n/a (9 groups, 10 needed), start –" in result.summary()
    assert result.winner == result.start and result.test["note"] == "the winner is the start"
    assert result.summary().endswith("winner - start 0 (the winner is the start)")  # not "+0.000 [–, –], p –"


def test_the_budget_bounds_the_calls_and_a_second_search_is_served_from_the_store(stored):
    small = scripted(good_with_examples)
    result = tune(stored, "synthetic", small, "Natural", budget=150, start=START, seed=1)
    assert len(small.calls) <= 150  # the test part included
    assert result.table["groups"].max() < len(result.tune_groups)  # the budget did not reach every tune group
    again = scripted(good_with_examples)
    repeat = tune(stored, "synthetic", again, "Natural", budget=150, start=START, seed=1)
    assert again.calls == [] and repeat.winner == result.winner
    [kept] = stored.searches("synthetic")  # the rerun is the same search: kept once, with what it cost
    assert kept["winner"] == result.winner and kept["calls"] == result.calls > 0 and kept["judge"] == "scripted: hashed"


def test_a_search_that_cannot_start_says_why_before_any_call(stored):
    judge = scripted()
    with pytest.raises(TuneError, match="no aspect compared with 'Overall'"):
        tune(stored, "synthetic", judge, "Overall", budget=100, start=START, others=[])
    with pytest.raises(TuneError, match=r"does not cover one round .* give a budget of at least (\d+)") as error:
        tune(stored, "synthetic", judge, "Natural", budget=1, start=START, others=[])
    assert judge.calls == []
    least = int(re.search(r"at least (\d+)", str(error.value)).group(1))
    with pytest.raises(TuneError, match=f"at least {least} "):
        tune(stored, "synthetic", judge, "Natural", budget=least - 1, start=START, others=[])
    assert judge.calls == []
    needed = geval.tune.budget(stored, "synthetic", judge, "Natural", start=START, others=[])  # known before
    assert needed.least == least and needed.groups == 3 and needed.candidates == 8 and judge.calls == []
    assert tune(stored, "synthetic", judge, "Natural", budget=least, start=START, others=[]).table["groups"].eq(1).all()
    chosen = tune(stored, "synthetic", scripted(), "Natural", budget=needed.enough, start=START, others=[])
    assert chosen.table["groups"].min() == 3 and not any("tune group (" in note for note in chosen.notes)
    # 3 groups of 3 items: 9, fewer than FEW_ITEMS, are said to be mostly luck whatever the budget (before and after)
    assert needed.items == 9 and needed.few_items_line().startswith("Every candidate is first read on 9 items (3 tune")
    assert "the winner was chosen on 9 items (3 tune groups): on fewer than 10 the choice is mostly luck, whatever " \
           "the budget" in chosen.notes


def test_the_time_of_a_search_is_estimated_from_every_candidates_calls_not_the_starts_alone(stored):
    """The estimate took the start's calls for every call of the search: few-shot prompts (k 2 and 4) are several
    times as long, so a search of them took far longer than it said."""
    judge = scripted()
    plain = geval.tune.budget(stored, "synthetic", judge, "Natural", start=START, others=[], few_shot=())
    shots = geval.tune.budget(stored, "synthetic", judge, "Natural", start=START, others=[])
    per_call = [b.first_round.work.tokens / b.first_round.calls for b in (plain, shots)]
    assert per_call[1] > 1.5 * per_call[0] and judge.calls == []


def test_a_search_within_chosen_groups_neither_judges_nor_shows_any_other(stored):
    chosen = {f"g{i}" for i in range(0, 20, 2)}  # 10 of the 20 groups
    assert {i.group for i in ITEMS} > chosen
    judge = scripted(good_with_examples)
    result = tune(stored, "synthetic", judge, "Natural", budget=2000, start=START, seed=1, groups=chosen)
    assert set(result.tune_groups) | set(result.test_groups) == chosen
    allowed = {i.response for i in ITEMS if i.group in chosen}
    seen = {response for prompt in judge.calls for response in re.findall(r"response \d+", prompt)}
    assert seen and seen <= allowed
    with pytest.raises(TuneError, match="in the groups chosen"):
        tune(stored, "synthetic", judge, "Natural", budget=100, start=START, groups={"no such group"})


def test_a_misspelt_human_aspect_is_named_with_the_datasets_aspects(stored):
    with pytest.raises(TuneError, match="'Natral' is not a human aspect of 'synthetic'; its human aspects: .*Natural"):
        tune(stored, "synthetic", scripted(good_with_examples), "Natral", budget=100)


def test_searches_of_several_aspects_are_read_together_on_their_test_groups(store):
    items = [replace(item, human={"Natural": item.human["Natural"], "Engaging": (float(1 + k % 2), 2.0),
                                  "Overall": (float(1 + (k * 3) % 5), 3.0)}) for k, item in enumerate(ITEMS)]
    store.save_dataset(Dataset("synthetic", "synthetic.json", "usr", items))
    engaging = make_template(name="test-engagingness", aspects=(("Engagingness", 1, 3, "Engaging"),),
                             body="Context:\n{{context}}\n\nResponse:\n{{response}}\n\n- Engagingness:")
    results = {human: tune(store, "synthetic", scripted(good_with_examples), human, budget=2000, start=start, seed=1,
                           others=[]) for human, start in (("Natural", START), ("Engaging", engaging))}
    together = searched_together(store, "synthetic").set_index("column")
    assert list(together.index) == ["Natural", "Engaging", "average", "mean of aspects → Overall"]
    for human, result in results.items():  # each aspect as its own search read it on the test groups
        assert together.loc[human, "b"] == pytest.approx(result.test["winner"], abs=1e-12)
        assert together.loc[human, "a"] == pytest.approx(result.test["start"], abs=1e-12)
        assert together.loc[human, "n"] == result.test["n"] == 30
    assert together.loc["average", "b"] == pytest.approx(np.mean([r.test["winner"] for r in results.values()]))
    by_id = {item.id: item for item in items}
    test_items = results["Natural"].test["items"]
    winners = np.mean([(np.asarray(r.test["winner_scores"]) - r.test["winner_scale"][0])
                       / (r.test["winner_scale"][1] - r.test["winner_scale"][0]) for r in results.values()], axis=0)
    overall = [by_id[i].human_mean("Overall") for i in test_items]
    assert together.loc["mean of aspects → Overall", "b"] == pytest.approx(np.corrcoef(winners, overall)[0, 1])
    assert (together["b_low"] <= together["b"] + 1e-9).all() and (together["b"] <= together["b_high"] + 1e-9).all()
    assert together.loc["mean of aspects → Overall", "b_high"] > together.loc["mean of aspects → Overall", "b_low"]
    assert all(set(by_id[i].group for i in test_items) == set(r.test_groups) for r in results.values())
    section = report(store, "synthetic", figures=False, baselines=()).markdown()
    assert "### The searches together, on their test groups" in section
    variant = "test-engagingness~k2-stratified"  # scored on its search's groups only: not a row of the tables
    assert f"made by prompt searches ({variant}" in section and f"## {variant}@" not in section
    board = geval.leaderboard(store, "synthetic", baselines=(), ceiling=False)  # variants: in that section only
    assert set(board.rows["row"]) == {"G-EVAL, one prompt per aspect (test-*) · scripted: hashed"}
    assert any("made by prompt searches (test-engagingness~k2-stratified" in line for line in board.skipped)


def test_a_variant_without_a_correlation_says_why_in_the_rounds_table(stored):
    def constant(prompt: str, aspect: Aspect) -> dict[int, float]:
        return {2: 1.0}  # the same score for every response: no correlation is defined

    judge = scripted(constant)
    result = tune(stored, "synthetic", judge, "Natural", budget=200, start=START, others=[])
    assert result.table["value"].isna().all()
    assert set(result.table["note"]) == {"undefined: the judge gave every item the same score"}
    # nothing to choose from: no winner (not the first of the undefined), no ensemble of them, no test part
    assert (result.winner, result.test, result.winner_template, result.stopped) == ("", {}, None, False)
    assert not result.table["candidate"].str.startswith("ensemble").any()
    assert "no candidate has a correlation on the tune groups" in result.summary()
    test_responses = {i.response for i in ITEMS if i.group in set(result.test_groups)}
    assert not [prompt for prompt in judge.calls if judged(prompt) in test_responses]


def test_the_progress_line_tells_the_search_rounds_from_the_test_part(stored):
    lines = []
    result = tune(stored, "synthetic", scripted(good_with_examples), "Natural", budget=200, start=START, others=[],
                  on_progress=lambda p: lines.append(p.line()))
    searching = [line for line in lines if line.startswith("round ")]
    testing = [line for line in lines if line.startswith("test part ")]
    assert searching and testing and lines.index(testing[0]) > lines.index(searching[-1])  # the test part comes last
    assert all(re.match(r"round \d of at most \d, [^:]+: \d+ of the budget's 200 judge calls planned", s)
               for s in searching)  # each names what it does, also before its first candidate
    assert testing[-1].startswith(f"test part ({len(result.test_groups)} groups, at most 90 calls of the budget), ")


def test_the_calls_left_before_the_test_part_are_an_upper_bound(stored):
    seen, shares = [], []  # (calls made, at most this many left, budget less the calls planned so far, eta, line)
    tune(stored, "synthetic", scripted(good_with_examples), "Natural", budget=150, start=START, others=[],
         on_progress=lambda p: (seen.append((p.calls, p.left, p.rounds_budget - p.spent, p.eta, p.line()))
                                if p.round and not p.testing else None, shares.append((p.testing, p.share))))
    searching = [share for testing, share in shares if not testing]
    assert searching == sorted(searching) and 0 < searching[-1] <= 1  # the bar only moves on while searching
    testing = [share for testing, share in shares if testing]
    assert testing[0] == 0.0  # the test part starts at 0, not at the last search run's 100%
    made = seen[-1][0]  # what the search rounds made in all: the calls of the last line before the test part
    assert made > 0 and all(made - calls <= left for calls, left, _, _, _ in seen)
    assert any(made - calls > unplanned for calls, _, unplanned, _, _ in seen)  # budget - planned is no bound
    assert seen[0][3] is None and "~" not in seen[0][4]  # no time before the first judge call
    assert all(f"at most {left} more before the test part" in line for _, left, _, _, line in seen)


def test_a_search_with_a_judge_of_no_known_price_says_its_cost_is_unknown(stored):
    judge = scripted(good_with_examples)
    judge.priced = False  # as an OpenAI-compatible judge of a model with no price
    lines = []
    result = tune(stored, "synthetic", judge, "Natural", budget=200, start=START, others=[],
                  on_progress=lambda p: lines.append(p.line()))
    assert result.cost is None and result.cost_text == "cost unknown" and "cost unknown" in result.summary()
    assert all("$" not in line for line in lines)


def test_an_auto_search_against_a_server_without_logprobs_finds_the_same_winner_again_with_no_call(stored, stub):
    """The answers of an "auto" judge whose server sends no logprobs are stored under its samples
    signature: a rerun (a new judge, logprobs first again) reads them there, calls nothing."""
    from geval.judging.backends.openai import OpenAIJudge

    stub.configure("no-logprobs", cycle=[1, 2, 3, 3, 1, 2, 2])

    def judge() -> OpenAIJudge:
        return OpenAIJudge("gpt-4o-mini", base_url=stub.url, api_key="sk-test", mode="auto", n=3, max_retries=0)

    first = tune(stored, "synthetic", judge(), "Natural", budget=150, start=START, others=[], seed=1)
    assert first.winner and first.calls > 0 and stub.count > 0
    made = stub.count
    again = tune(stored, "synthetic", judge(), "Natural", budget=150, start=START, others=[], seed=1)
    assert (again.winner, again.calls, stub.count) == (first.winner, 0, made)
    assert again.test["winner"] == pytest.approx(first.test["winner"])


@pytest.mark.parametrize("budget", [102, 150, 240, 400])  # 102: the least that covers one round and the test part
def test_the_budget_caps_every_judge_call_of_the_search_and_its_estimate_counts_the_test_part(stored, budget):
    """The budget is what its control reads as: every call, the test part's included; the split's
    line, before any call, says how many of them the test part may take, and the time of them all."""
    judge = scripted(good_with_examples)
    messages = []
    result = tune(stored, "synthetic", judge, "Natural", budget=budget, start=START, seed=1,
                  on_progress=lambda p: messages.append(p.message) if not p.round else None)
    assert result.test and len(judge.calls) == result.calls <= budget
    test_responses = {i.response for i in ITEMS if i.group in set(result.test_groups)}
    _, on_test = _search_and_test(judge.calls, test_responses)
    kept = int(re.search(rf"at most {budget} judge calls in all, up to (\d+) of them kept for the test part: "
                         r"about .+ \(.+ per call", messages[0])[1])
    assert 0 < len(on_test) <= kept < budget and judge.calls and messages[0] == messages[-1]
