"""geval.runner: scoring into the store with the scripted judge: caching, failures, stop, resume."""

from __future__ import annotations

import json
import os
import threading
import time
from dataclasses import replace

import pytest
from helpers import failing_for, item_number, make_items, make_template, scripted

import geval
from geval.errors import JudgeError, JudgeUnreachable, JudgmentFailed
from geval.judging.backends.scripted import hashed_distribution
from geval.judging.judgment import approx_tokens
from geval.scoring.lookup import signature
from geval.judging.native import Speed
from geval.judging.templates import Aspect
from geval.scoring.plan import Pace, Work
from geval.scoring.runner import Progress, environment

TWO = make_template(aspects=(("Naturalness", 1, 3, "Natural"), ("Coherence", 1, 5)))
ONE = make_template()


def counts(store: geval.Store) -> dict[str, int]:
    """Judgment rows per aspect."""
    return dict(store.db.execute("SELECT aspect, COUNT(*) FROM judgments GROUP BY aspect").fetchall())


def test_scoring_stores_one_judgment_per_item_and_aspect(store):
    judge = scripted()
    progress = geval.score(store, make_items(10), TWO, judge, "synthetic")
    assert (progress.total, progress.done, progress.cached, progress.failed, progress.unscored) == (10, 10, 0, 0, 0)
    assert progress.template == TWO.label
    assert len(judge.calls) == 10
    assert counts(store) == {"naturalness": 10, "coherence": 10}
    assert store.db["calls"].count == 10
    frame = store.judgments("synthetic")
    assert set(frame["status"]) == {"ok"}
    assert frame["signature"].nunique() == 1 and frame["signature"].iloc[0] == progress.signature
    assert all(prompt.startswith("Context:\nA: hello number") for prompt in frame["prompt"])
    for _, row in frame.iterrows():
        distribution = {int(k): v for k, v in json.loads(row["distribution"]).items()}
        assert sum(distribution.values()) == pytest.approx(1.0)
        assert row["score"] == pytest.approx(sum(s * p for s, p in distribution.items()))


def test_a_second_run_is_all_cached(store):
    items = make_items(10)
    judge = scripted()
    geval.score(store, items, TWO, judge, "synthetic")
    before = store.judgments("synthetic").set_index("id")["score"]
    progress = geval.score(store, items, TWO, judge, "synthetic")
    assert len(judge.calls) == 10  # no new call
    assert progress.cached == 10 and progress.done == 10
    assert progress.prompt_tokens == 0 and progress.cost == 0
    assert counts(store) == {"naturalness": 10, "coherence": 10}
    after = store.judgments("synthetic").set_index("id")["score"]
    assert after.sort_index().equals(before.sort_index())
    assert len(store.runs()) == 2


def test_another_judge_or_template_is_not_served_from_the_cache(store):
    items = make_items(4)
    geval.score(store, items, ONE, scripted(), "synthetic")
    other_judge = scripted(name="other")
    assert geval.score(store, items, ONE, other_judge, "synthetic").cached == 0
    assert len(other_judge.calls) == 4
    other_template = make_template(aspects=(("Naturalness", 1, 5),))
    assert geval.score(store, items, other_template, other_judge, "synthetic").cached == 0
    assert store.judgments("synthetic")["signature"].nunique() == 3


def test_failed_judgments_are_stored_and_retried_alone(store):
    items = make_items(10)
    failing = scripted(failing_for({2, 5, 7}))
    progress = geval.score(store, items, TWO, failing, "synthetic")
    assert progress.done == 10 and progress.failed == 3
    assert len(progress.errors) == 3
    failed = store.judgments("synthetic", status="failed")
    assert len(failed) == 6  # both aspects of the three items
    by_item = {int(item.response.split()[1]): item.id for item in items}  # "response 7" -> 7
    assert set(failed["item_id"]) == {by_item[2], by_item[5], by_item[7]}
    assert set(failed["reason"]) == {f"item {by_item[i]}: rate limited (stub)" for i in (2, 5, 7)}
    assert failed["score"].isna().all() and failed["call_key"].isna().all()
    assert store.db["calls"].count == 7
    assert store.runs().iloc[0]["status"] == "finished"

    healthy = scripted()  # same settings, so the same signature
    progress = geval.score(store, items, TWO, healthy, "synthetic")
    assert len(healthy.calls) == 3
    assert sorted(item_number(prompt) for prompt in healthy.calls) == [2, 5, 7]
    assert progress.cached == 7 and progress.failed == 0
    assert counts(store) == {"naturalness": 10, "coherence": 10}
    assert store.judgments("synthetic", status="failed").empty


def test_the_stop_event_stops_early_and_a_rerun_finishes_without_duplicates(store):
    items = make_items(10)
    stop = threading.Event()
    seen = []

    def on_progress(progress: Progress) -> None:
        seen.append(progress.done)
        if progress.done == 4:
            stop.set()

    judge = scripted()
    progress = geval.score(store, items, ONE, judge, "synthetic", stop=stop, on_progress=on_progress)
    assert progress.stopped and progress.done == 4
    assert seen == [0, 1, 2, 3, 4]  # 0: the report as the judge's calls begin
    assert len(judge.calls) == 4
    assert store.runs().iloc[0]["status"] == "stopped"
    assert counts(store) == {"naturalness": 4}

    progress = geval.score(store, items, ONE, judge, "synthetic")
    assert not progress.stopped and progress.done == 10 and progress.cached == 4
    assert len(judge.calls) == 10
    assert counts(store) == {"naturalness": 10}
    assert store.db["calls"].count == 10
    ids = store.judgments("synthetic")["item_id"]
    assert ids.is_unique and set(ids) == {item.id for item in items}


def test_garbage_answers_are_unscored_with_null_scores(store):
    def script(prompt: str, aspect: Aspect):
        return "I cannot rate this" if item_number(prompt) % 2 else "Naturalness: 2"

    progress = geval.score(store, make_items(6), ONE, scripted(script, "garbage"), "synthetic")
    assert progress.unscored == 3 and progress.failed == 0 and progress.done == 6
    assert progress.status == "finished" and progress.cause == ""  # some scores were read: not a failed run
    rows = store.db.execute("SELECT status, score, reason FROM judgments ORDER BY status").fetchall()
    assert [r[0] for r in rows] == ["ok"] * 3 + ["unscored"] * 3
    assert all(score == 2.0 for status, score, _ in rows if status == "ok")
    assert all(score is None for status, score, _ in rows if status == "unscored")
    assert {reason for status, _, reason in rows if status == "unscored"} == {
        "no Naturalness score in the answer 'I cannot rate this'"}
    combos = store.combos("synthetic").iloc[0]
    assert (combos["ok"], combos["unscored"], combos["failed"]) == (3, 3, 0)


def test_an_item_that_cannot_be_rendered_fails_alone(store):
    items = make_items(3)
    no_fact = replace(items[1], grounding="", id="nofact")
    progress = geval.score(store, [items[0], no_fact, items[2]], ONE, scripted(), "synthetic")
    assert progress.done == 3 and progress.failed == 1
    failed = store.judgments("synthetic", status="failed")
    assert list(failed["item_id"]) == ["nofact"]
    assert failed["reason"].iloc[0].startswith("item nofact (synthetic): placeholder {{fact}}")


def test_a_judge_error_ends_the_run_and_is_recorded(store):
    def script(prompt, aspect):
        raise JudgeError("the server refused the API key (401); check the key")

    with pytest.raises(JudgeError):
        geval.score(store, make_items(3), ONE, scripted(script), "synthetic")
    run = store.runs().iloc[0]
    assert run["status"] == "error"
    assert json.loads(run["summary"])["done"] == 0


def test_runs_record_environment_settings_and_signature(store):
    given = {"judge": "scripted", "temperature": 0.5}
    progress = geval.score(store, make_items(2), ONE, scripted(), "synthetic", settings_given=given)
    run = store.runs("synthetic").iloc[0]
    assert run["id"] == progress.run_id
    assert run["status"] == "finished" and run["n_items"] == 2 and run["template"] == ONE.label
    assert json.loads(run["settings_given"]) == given
    assert run["signature"] == progress.signature
    assert json.loads(run["signature_json"]) == signature(scripted().settings, ONE, list(ONE.aspects))[1]
    env = json.loads(run["environment"])
    assert "git_commit" in env
    assert env["versions"]["python"].count(".") == 2
    assert {"scipy", "sqlite-utils"} <= env["versions"].keys()
    summary = json.loads(run["summary"])
    assert summary["done"] == 2 and summary["cached"] == 0 and summary["signature"] == progress.signature
    assert run["finished"] >= run["started"]


def test_environment_names_the_git_commit():
    env = environment()
    assert set(env) == {"versions", "git_commit"}
    assert env["git_commit"] == "" or len(env["git_commit"]) == 40


def test_items_are_scored_group_by_group(store):
    items = make_items(6, per_group=2)
    shuffled = [items[0], items[2], items[4], items[1], items[3], items[5]]  # groups g0 g1 g2 g0 g1 g2
    judge = scripted()
    geval.score(store, shuffled, ONE, judge, "synthetic")
    assert [item_number(p) for p in judge.calls] == [0, 1, 2, 3, 4, 5]


def test_plan_run_counts_cached_items_and_calls(store):
    items = make_items(10)
    judge = scripted()
    plan = geval.plan(store, items, ONE, judge)
    assert (plan.total, plan.cached, plan.calls, plan.failing) == (10, 0, 10, [])
    geval.score(store, items[:4], ONE, judge, "synthetic")
    calls = len(judge.calls)
    plan = geval.plan(store, items, ONE, judge)
    assert (plan.cached, plan.calls) == (4, 6)
    assert len(judge.calls) == calls  # planning never calls the judge
    assert plan.line().startswith("10 items: 4 cached, 6 judge calls to make")


def test_the_plan_says_how_many_cached_answers_had_no_score(store):
    def script(prompt: str, aspect: Aspect):
        return "I cannot rate this" if item_number(prompt) % 3 else "Naturalness: 2"

    judge = scripted(script, "garbage")
    geval.score(store, make_items(3), ONE, judge, "synthetic")  # items 1 and 2 unscored
    by_id = geval.plan(store, make_items(6), ONE, judge)
    by_key = geval.plan(store, make_items(6, dataset="other"), ONE, judge)  # the same prompts, other items
    assert (by_id.cached, by_id.unscored, by_id.calls) == (by_key.cached, by_key.unscored, by_key.calls) == (3, 2, 3)
    assert by_id.line().startswith("6 items: 3 cached (2 unscored answers among them: stored, not asked again; "
                                   "change the template's form or scale, or the judge, to ask again), "
                                   "3 judge calls to make")


def test_the_plan_says_why_calls_and_items_differ(store):
    """"360 items: 0 cached, 359 judge calls" once went unexplained: a duplicate item is asked once."""
    items = make_items(3)
    duplicate = replace(items[0], id="duplicate", system="another system")  # the same prompt
    plan = geval.plan(store, [*items, duplicate], ONE, scripted())
    assert (plan.calls, plan.shared) == (3, 1)
    assert plan.line().startswith("4 items: 0 cached, 3 judge calls to make (")
    assert plan.line().endswith(". 1 item has the same prompt as another item (a duplicate, or a call serving "
                                "several items) and is asked once.")
    assert geval.plan(store, items, ONE, scripted()).calls_explained() == ""
    per_aspect = geval.plan(store, items, PER_ASPECT, scripted())
    assert per_aspect.calls == 6 and per_aspect.line().endswith(
        ". The template asks 2 prompts per item (one per aspect or question).")


def test_plans_add_up_for_a_run_of_several_templates(store):
    items = make_items(4)
    one, two = geval.plan(store, items, ONE, scripted()), geval.plan(store, items, PER_ASPECT, scripted())
    both = one + two
    assert (both.total, both.calls, both.prompt_tokens) == (8, one.calls + two.calls,
                                                             one.prompt_tokens + two.prompt_tokens)
    assert both.seconds == pytest.approx(one.seconds + two.seconds)
    assert both.duration().startswith("about ")
    geval.score(store, items, ONE, scripted(), "tc")
    geval.score(store, items, PER_ASPECT, scripted(), "tc")
    cached = geval.plan(store, items, ONE, scripted()) + geval.plan(store, items, PER_ASPECT, scripted())
    assert cached.calls == 0 and cached.duration() == "nothing to call"  # it read "about 1 s", all of it cached


def test_plan_run_lists_items_that_cannot_be_rendered(store):
    items = make_items(2)
    no_fact = replace(items[1], grounding="", id="nofact")
    plan = geval.plan(store, [items[0], no_fact], ONE, scripted())
    assert plan.calls == 1 and len(plan.failing) == 1 and "item nofact" in plan.failing[0]
    assert plan.line().endswith(", 1 cannot be rendered")


def test_plan_run_estimates_tokens_without_a_price(store):
    items = make_items(3)
    plan = geval.plan(store, items, ONE, scripted())
    assert plan.prompt_tokens == sum((len(ONE.render(item)) + 3) // 4 for item in items)
    assert plan.completion_tokens == 3 * 4  # "Naturalness: 3" per item
    assert plan.cost == 0.0


PER_ASPECT = make_template(
    aspects=(("Naturalness", 1, 3, "Natural"), ("Coherence", 1, 5)),
    body="Context:\n{{context}}\n\nResponse:\n{{response}}\n\n- {{aspect}}:",
)

MULTI_FORM = make_template(name="test-multi", aspects=(("Naturalness", 1, 3, "Natural"), ("Coherence", 1, 5)))


@pytest.mark.parametrize("mode, behaviour", [("auto", "logprobs"), ("auto", "no-logprobs"), ("logprobs", "logprobs"),
                                             ("samples", "no-logprobs")])
@pytest.mark.parametrize("template", [ONE, MULTI_FORM, PER_ASPECT], ids=["one", "form", "per-aspect"])
def test_the_plan_estimates_at_least_what_the_stub_then_bills(stub, store, mode, behaviour, template):
    """Never less than the bill: sampled answers up to max_tokens each; "auto", until the server
    has sent logprobs, the logprobs request and the n samples a server without them is asked for."""
    from geval.judging.backends.openai import OpenAIJudge

    stub.configure(behaviour)
    judge = OpenAIJudge("gpt-4o-mini", base_url=stub.url, api_key="sk-test", mode=mode, n=5, max_tokens=16,
                        max_retries=0)
    items = make_items(4)
    plan = geval.plan(store, items, template, judge)
    progress = geval.score(store, items, template, judge, "synthetic")
    assert progress.failed == 0 and plan.calls == progress.calls > 0
    assert plan.prompt_tokens >= progress.prompt_tokens and plan.completion_tokens >= progress.completion_tokens
    assert plan.cost >= progress.cost > 0
    if mode == "logprobs":  # one request, the form's short answer: what is billed
        assert (plan.prompt_tokens, plan.completion_tokens) == (progress.prompt_tokens, progress.completion_tokens)
        assert plan.cost == pytest.approx(progress.cost, rel=1e-12)
    if mode == "samples":  # the prompt once per request, 5 answers of up to 16 tokens
        assert plan.prompt_tokens == progress.prompt_tokens and plan.completion_tokens == plan.calls * 5 * 16
    if mode == "auto":  # once the server has answered, the judge knows which it pays for
        logprobs = OpenAIJudge("gpt-4o-mini", base_url=stub.url, api_key="sk-test", mode="logprobs")
        samples = OpenAIJudge("gpt-4o-mini", base_url=stub.url, api_key="sk-test", mode="samples", n=5)
        known = logprobs if behaviour == "logprobs" else samples
        fresh = geval.Store(":memory:")
        later, alike = geval.plan(fresh, items, template, judge), geval.plan(fresh, items, template, known)
        assert (later.prompt_tokens, later.completion_tokens) == (alike.prompt_tokens, alike.completion_tokens)


def test_progress_line_and_eta():
    progress = Progress(total=10, done=4, cached=2, failed=1, unscored=0, prompt_tokens=100)
    assert progress.line().startswith("4/10 items, 2 cached, 1 failed, 0 unscored, 100 tokens, $0.0000, ")
    assert Progress(total=3, done=3).eta == 0.0
    assert Progress(total=3, done=1, cached=1).eta is None


def test_scores_match_the_script_exactly(store):
    items = make_items(3)
    geval.score(store, items, ONE, scripted(), "synthetic")
    frame = store.judgments("synthetic").set_index("item_id")
    for item in items:
        dist = hashed_distribution(ONE.render(item), ONE.aspects[0])
        total = sum(dist.values())
        assert frame.loc[item.id, "score"] == pytest.approx(sum(s * p / total for s, p in dist.items()))




def test_a_per_aspect_template_makes_one_cached_call_per_aspect(store):
    judge = scripted()
    progress = geval.score(store, make_items(6), PER_ASPECT, judge, "synthetic")
    assert (progress.total, progress.done, progress.cached, progress.failed, progress.calls) == (6, 6, 0, 0, 12)
    assert len(judge.calls) == 12 and store.db["calls"].count == 12
    assert [prompt.rsplit("\n", 1)[1] for prompt in judge.calls[:2]] == ["- Naturalness:", "- Coherence:"]
    assert counts(store) == {"naturalness": 6, "coherence": 6}
    frame = store.judgments("synthetic")
    assert frame["call_key"].nunique() == 12  # each aspect points at its own call
    again = geval.score(store, make_items(6), PER_ASPECT, judge, "synthetic")
    assert (again.done, again.cached) == (6, 6) and len(judge.calls) == 12


def test_a_failed_aspect_call_fails_that_aspect_only_and_is_retried_alone(store):
    def script(prompt, aspect):
        if prompt.endswith("- Coherence:") and item_number(prompt) == 2:
            raise JudgmentFailed("HTTP 500 from the server")
        return hashed_distribution(prompt, aspect)

    progress = geval.score(store, make_items(4), PER_ASPECT, scripted(script), "synthetic")
    assert (progress.done, progress.failed, progress.calls) == (4, 1, 7)
    assert progress.errors == [f"item {make_items(4)[2].id}: HTTP 500 from the server"]
    statuses = dict(store.db.execute(
        "SELECT aspect, status FROM judgments WHERE item_id = ?", [make_items(4)[2].id]).fetchall())
    assert statuses == {"naturalness": "ok", "coherence": "failed"}
    judge = scripted()
    again = geval.score(store, make_items(4), PER_ASPECT, judge, "synthetic")
    assert (again.failed, again.cached, again.calls) == (0, 3, 1)
    assert len(judge.calls) == 1 and judge.calls[0].endswith("- Coherence:")
    assert geval.plan(store, make_items(4), PER_ASPECT, judge).calls == 0


def test_a_rerun_takes_items_already_judged_from_one_query_without_rendering(store, monkeypatch):
    def unscored_for_item_1(prompt, aspect):
        return "no idea" if item_number(prompt) == 1 and aspect.key == "coherence" else hashed_distribution(prompt, aspect)

    geval.score(store, make_items(5), TWO, scripted(unscored_for_item_1), "synthetic")
    monkeypatch.setattr(geval.Template, "calls", lambda *a, **k: pytest.fail("rendered an item already judged"))
    judge = scripted(unscored_for_item_1)
    again = geval.score(store, make_items(5), TWO, judge, "synthetic")
    assert (again.done, again.cached, again.calls, again.unscored) == (5, 5, 0, 1) and judge.calls == []


def test_why_answers_had_no_score_is_counted_by_reason_and_again_when_they_come_from_the_cache(store):
    def script(prompt: str, aspect: Aspect):
        return "I cannot rate this" if item_number(prompt) % 3 else "Naturalness: 2"

    items, reason = make_items(6), "no Naturalness score in the answer 'I cannot rate this'"
    judge = scripted(script, "garbage")
    first = geval.score(store, items[:3], ONE, judge, "synthetic")  # judged: 2 unscored
    again = geval.score(store, items, ONE, judge, "synthetic")  # 3 from the store by id, 3 judged
    assert (first.unscored, first.unread) == (2, {reason: 2})
    assert (again.cached, again.unscored, again.unread) == (3, 4, {reason: 4})
    assert again.unread_line() == (f"4 answers had no score, 4 of them: {reason}. Inspect shows each; they are "
                                   "cached, so starting again reads them the same way: change the template's form "
                                   "or scale, or the judge, to ask again")
    assert geval.score(store, items[:1], ONE, judge, "synthetic").unread_line() == ""  # item 0 has its score


def test_a_run_s_row_keeps_the_20_most_common_reasons_answers_had_no_score(store):
    judge = scripted(lambda prompt, aspect: f"answer {chr(97 + item_number(prompt))}", "garbage")  # each its own
    progress = geval.score(store, make_items(25), ONE, judge, "synthetic")
    assert len(progress.unread) == 25 and len(progress.summary()["unread"]) == 20


def test_regenerated_steps_change_the_prompts_so_a_rerun_judges_again(store):
    template = make_template(steps="auto", body="Steps:\n{{steps}}\n\nResponse:\n{{response}}\n\n- Naturalness:")
    judge = scripted()
    geval.score(store, make_items(3), template, judge, "synthetic")
    store.save_steps(template, judge.settings, "1. Other steps.")
    again = geval.score(store, make_items(3), template, judge, "synthetic")
    assert (again.cached, again.calls) == (0, 3)
    assert all("1. Other steps." in prompt for prompt in judge.calls[-3:])


# --- failed runs, progress a person can trust, render problems before the run (issue 13) ------

def test_a_run_where_every_item_failed_is_stored_as_failed_with_its_cause(store):
    items = make_items(4)
    progress = geval.score(store, items, ONE, scripted(failing_for(set(range(4)), "cannot reach the server")),
                           "synthetic")
    assert (progress.status, progress.failed, progress.cause) == ("failed", 4, "cannot reach the server")
    assert progress.reasons == {"cannot reach the server": 4}
    assert store.runs()["status"].tolist() == ["failed"]


@pytest.mark.parametrize("first_bad", [0, 2], ids=["at the first item", "after two were scored"])
def test_a_server_that_is_not_there_stops_the_run_at_the_first_refusal_stored_as_failed_with_why(store, first_bad):
    line = "cannot reach http://127.0.0.1:9/v1: connection refused; no server listens there: start it"
    judge = scripted(failing_for(set(range(first_bad, 10)), line, JudgeUnreachable))
    progress = []
    with pytest.raises(JudgeUnreachable, match="^cannot reach http://127.0.0.1:9/v1: connection refused"):
        geval.score(store, make_items(10), ONE, judge, "synthetic", on_progress=progress.append)
    assert len(judge.calls) == first_bad + 1  # not one call after the refusal
    run = store.runs().iloc[0]
    assert run["status"] == "failed" and json.loads(run["summary"])["errors"][0] == line
    assert progress[-1].done == first_bad and counts(store) == ({"naturalness": first_bad} if first_bad else {})


def test_other_failures_of_a_server_fail_their_items_and_the_run_goes_on(store):
    judge = scripted(failing_for({0, 1}, "HTTP 503 from the server: overloaded"))
    progress = geval.score(store, make_items(3), ONE, judge, "synthetic")
    assert (progress.status, progress.failed, progress.done, len(judge.calls)) == ("finished", 2, 3, 3)


def test_a_run_where_some_items_failed_is_finished_and_counts_them(store):
    progress = geval.score(store, make_items(4), ONE, scripted(failing_for({1})), "synthetic")
    assert (progress.status, progress.failed, progress.cause) == ("finished", 1, "rate limited (stub)")
    assert store.runs()["status"].tolist() == ["finished"]


def test_items_that_cannot_be_rendered_are_one_reason_and_a_failed_run(store):
    items = [replace(item, grounding="") for item in make_items(3)]
    progress = geval.score(store, items, ONE, scripted(), "synthetic")
    assert progress.status == "failed" and len(progress.errors) == 3
    assert list(progress.reasons.values()) == [3]
    assert progress.cause.startswith("placeholder {{fact}} in test-naturalness.txt has no value for this item")
    assert not any(item.id in progress.cause for item in items)


def test_the_plan_groups_the_reasons_an_item_cannot_be_rendered(store):
    items = make_items(4)
    no_fact = [replace(item, grounding="") for item in items[1:]]
    plan = geval.plan(store, [items[0], *no_fact], ONE, scripted())
    assert len(plan.failing) == 3 and plan.renderable
    assert plan.problems() == [("placeholder {{fact}} in test-naturalness.txt has no value for 3 of 4 items: no "
                                "grounding (a fact, persona or document); pick a template without {{fact}}, or, if "
                                "the file has one, map the column that holds it to grounding when loading the file "
                                "(the Data page's Grounding; CLI: --map grounding=COLUMN)")]
    assert not geval.plan(store, no_fact, ONE, scripted()).renderable
    assert geval.plan(store, items, ONE, scripted()).problems() == []


def test_a_runs_first_eta_says_it_rests_on_a_default_pace_until_its_first_judgments(store):
    """The first estimate of a run, before any judgment here, read "about 2 min" and the run took 855 s:
    the ETA says it rests on a default pace, and corrects it from the run's first judgments."""
    judge = scripted()
    judge.seconds_per_call = 3.0
    plan = geval.plan(store, make_items(10), ONE, judge)
    progress = Progress(total=10, planned=plan.work)
    progress.calls_begin(plan.pace, now=time.time())
    assert progress.line().endswith("ETA 30s (a default pace until the first judgments, which correct it)")
    progress.called, progress.done = 1, 1
    assert "a default pace" not in progress.line()


def test_the_plan_estimates_the_time_from_a_default_then_from_measured_calls(store):
    items = make_items(10)
    judge = scripted()
    judge.seconds_per_call = 2.0
    plan = geval.plan(store, items, ONE, judge)
    assert (plan.seconds, plan.pace.measured) == (20.0, 0)
    assert plan.time_line() == ("about 20 s (2.0 s per call, a default for this judge, nothing measured here yet: the "
                                "run's ETA corrects it from its first judgments; an estimate)")

    def slow(prompt, aspect):
        import time
        time.sleep(0.05)
        return hashed_distribution(prompt, aspect)

    geval.score(store, items[:4], ONE, scripted(slow), "synthetic")
    plan = geval.plan(store, items, ONE, scripted(slow))
    assert plan.pace.measured == 4 and 0.04 < plan.pace.per_call < 1.0
    assert plan.seconds == pytest.approx(6 * plan.pace.per_call)
    assert "measured over 4 calls of this judge" in plan.time_line()


def test_the_judge_checks_test_judgment_paces_a_plan_until_the_store_has_timed_its_calls(store):
    """The sidebar said "The judge works: 0.1 s per judgment here", and Score below it "1.5 s per call, a
    default for this judge, nothing measured here yet"."""
    judge = scripted()
    judge.seconds_per_call = 2.0
    checkup = judge.check()
    assert checkup.works and checkup.seconds < 1.0
    plan = geval.plan(store, make_items(10), ONE, judge)
    assert plan.pace.per_call == checkup.seconds and not plan.pace.default
    assert "s per call, from the judge check's test judgment: the run's ETA corrects it" in plan.time_line()
    geval.score(store, make_items(4), ONE, judge, "synthetic")  # then its calls in the store
    assert "measured over 4 calls of this judge" in geval.plan(store, make_items(10), ONE, judge).time_line()


def test_a_call_under_a_tenth_of_a_second_is_said_to_two_digits_not_as_0_0():
    """A stub server's 0.03 s a call read "0.0 s per call, from the judge check's test judgment"."""
    assert Pace(per_call=0.034, checked=True).basis().startswith("0.03 s per call, from the judge check's")
    assert Pace(per_call=0.00007, checked=True).basis().startswith("under 0.01 s per call, from the judge check's")
    assert Pace(per_call=1.5).basis().startswith("1.5 s per call, a default")


def test_a_measured_speed_estimates_the_tokens_each_prompt_does_not_share_with_the_one_before(store):
    """The embedded judge's time: tokens to evaluate / prefill speed + one pass per score read;
    items of one dialogue share their prefix, so the second costs only what it adds."""
    items = make_items(3)
    judge = scripted()
    judge.speed = Speed(prefill=100.0, decode=10.0, measured=time.time())
    plan = geval.plan(store, items, ONE, judge)
    prompts = [ONE.render(item) for item in items]
    tokens = approx_tokens(prompts[0]) + sum(
        approx_tokens(prompt[len(os.path.commonprefix([before, prompt])):]) for before, prompt in zip(prompts, prompts[1:]))
    assert (plan.work.calls, plan.work.tokens, plan.work.passes) == (3, tokens, 3)
    assert tokens < sum(approx_tokens(prompt) for prompt in prompts)  # the shared prefix is counted once
    assert plan.seconds == pytest.approx(tokens / 100.0 + 3 / 10.0)
    assert "tokens to evaluate at prefill 100 tokens/s, decode 10 tokens/s, measured on this machine" \
        in plan.time_line()


def _judged(progress, seconds, work):
    progress.done += 1
    progress.item_judged(work, now=progress.calls_started + seconds)


def test_the_eta_counts_down_the_plans_work_at_the_pace_measured_in_the_run():
    """24 items planned as 24 x 100 tokens at 100 tokens/s (24 s); the run goes twice as slow: the
    ETA follows, and heavy and light items (a dialogue's first and the rest) do not swing it."""
    pace = Pace(speed=Speed(prefill=100.0, decode=1e9, measured=0.0))
    planned = Work(24, 2400, 24)
    progress = Progress(total=24, started=0.0, planned=planned)
    progress.calls_begin(pace, now=40.0)  # 40 s of loading the model: not the judge's pace
    assert progress.eta_at(now=40.0) == pytest.approx(24.0)  # before any item: the plan at the measured speed
    elapsed, etas = 0.0, []
    for index in range(12):
        tokens = 500 if index % 6 == 0 else 20  # a dialogue's first response carries its prefix
        elapsed += tokens / 50.0  # twice as slow as measured
        _judged(progress, elapsed, Work(1, tokens, 1))
        etas.append(progress.eta_at(now=40.0 + elapsed))
    left = (2400 - progress.worked.tokens) / 50.0
    assert etas[-1] == pytest.approx(left, rel=0.15)  # the pace of the run, not the measured speed
    assert all(earlier >= later for earlier, later in zip(etas, etas[1:]))  # a steady count-down


def test_without_a_plan_the_work_left_is_extrapolated_per_judged_item_and_cached_ones_do_not_count():
    pace = Pace(per_call=1.0)
    progress = Progress(total=100, started=0.0)
    progress.calls_begin(pace, now=0.0)
    assert progress.eta_at(now=0.0) is None  # nothing judged, nothing planned
    for second in range(1, 11):
        _judged(progress, float(second), Work(1, 0, 1))
    progress.done += 40
    progress.cached += 40  # served from the cache, in no time
    assert progress.eta_at(now=10.0) == pytest.approx(50 * 1.0)  # the time per judged item, for each of the 50 left


def test_the_eta_of_a_batch_layout_is_per_item_not_per_group():
    progress = Progress(total=160, started=0.0)
    progress.calls_begin(Pace(per_call=16.0), now=0.0)
    for group in range(6):  # 16 items a group: the first makes the group's 2 calls (32 s), the others share them
        _judged(progress, 32.0 * (group + 1), Work(2, 0, 2))
        for _ in range(15):
            _judged(progress, 32.0 * (group + 1), Work())
        assert progress.eta_at(now=32.0 * (group + 1)) == pytest.approx(2.0 * (progress.total - progress.done))
    assert progress.called == 96 and progress.cached == 0


def test_the_elapsed_time_stops_when_the_run_ends(store):
    progress = geval.score(store, make_items(2), ONE, scripted(), "synthetic")
    elapsed = progress.elapsed
    threading.Event().wait(0.05)
    assert progress.elapsed == elapsed and progress.ended is not None
    assert "ETA" not in progress.line() and progress.eta == 0.0


def test_the_eta_counts_the_load_of_the_model_down_and_is_unknown_once_the_load_runs_late():
    planned = Work(10, 1000, 10)  # 10 calls of 1 s at the plan's pace
    progress = Progress(total=10, started=0.0, planned=planned, pace=Pace(per_call=1.0))
    progress.load_begins(40.0, now=0.0)
    assert progress.loading
    assert [progress.eta_at(now=t) for t in (0.0, 10.0, 30.0)] == [50.0, 40.0, 20.0]  # never frozen
    assert progress.eta_at(now=41.0) is None  # late: no number that would only count to 0
    assert progress.load_share(now=10.0) == pytest.approx(0.25) and progress.load_share(now=80.0) == 0.99
    assert progress.load_line(now=12.0) == "Loading the model (about 40 s): 12s so far"
    progress.load_ends(now=45.0)
    assert not progress.loading and progress.load_took == 45.0
    unknown = Progress(total=10, started=0.0, planned=planned, pace=Pace(per_call=1.0))
    unknown.load_begins(None, now=0.0)
    assert unknown.eta_at(now=5.0) is None and unknown.load_line(now=5.0) == "Loading the model: 5s so far"


def test_between_answers_the_eta_counts_down_and_a_late_answer_makes_it_unknown():
    progress = Progress(total=10, started=0.0, planned=Work(10, 0, 10))
    progress.calls_begin(Pace(per_call=3.0), now=0.0)
    assert [progress.eta_at(now=t) for t in (0.0, 20.0)] == [30.0, 10.0]  # the first answer is awaited
    assert progress.eta_at(now=31.0) is None
    progress.done += 1
    progress.item_judged(Work(1, 0, 1), now=3.0)
    assert progress.eta_at(now=3.0) == pytest.approx(27.0) and progress.eta_at(now=5.0) == pytest.approx(25.0)


def test_the_speed_a_run_measured_is_the_judges_speed_scaled_by_the_runs_pace():
    progress = Progress(total=10, started=0.0)
    progress.calls_begin(Pace(speed=Speed(prefill=100.0, decode=10.0, measured=0.0, load=40.0)), now=0.0)
    assert progress.measured_speed(now=9.0) is None  # nothing judged yet
    progress.item_judged(Work(2, 200, 2), now=4.4)  # 2.2 s of work at that speed took twice as long
    assert progress.measured_speed(now=9.0) == Speed(prefill=50.0, decode=5.0, measured=9.0, judgments=1, load=40.0)
    assert Progress(total=1, called=1, judged_seconds=1.0, pace=Pace(per_call=1.0)).measured_speed() is None


class _LazyJudge:
    """A scripted judge whose model loads on the first call, as the embedded one does (in
    `load_seconds`, as it says), and that keeps the speeds runs tell it (`noted`)."""

    load_seconds = 40.0

    def __init__(self):
        self.inner, self.loads, self.loaded, self.noted = scripted(), 0, False, []
        self.settings = self.inner.settings
        self.speed = Speed(prefill=1e6, decode=1e6, measured=0.0)

    def load(self):
        self.loads += 1
        self.loaded = True

    def note_speed(self, speed):
        self.noted.append(speed)

    def judge(self, prompt, aspects):
        assert self.loaded, "called before the model was loaded"
        return self.inner.judge(prompt, aspects)


def test_loading_the_judges_model_is_a_step_of_its_own(store):
    items = make_items(3)
    judge, phases, loading = _LazyJudge(), [], []
    progress = geval.score(store, items, ONE, judge, "synthetic", on_progress=lambda p: (
        phases.append((p.phase, p.done)), loading.append(p.loading and (p.load_expected, p.line()))))
    assert judge.loads == 1 and progress.load_took is not None and not progress.loading
    expected, line = next(shown for shown in loading if shown)
    assert expected == 40.0 and line.startswith("Loading the model (about 40 s): 0s so far, ETA ")
    assert phases[0] == ("loading the model", 0) and phases[-1] == ("", 3)
    again = _LazyJudge()
    geval.score(store, items, ONE, again, "synthetic")
    assert again.loads == 0  # everything was cached: nothing to load the model for


def test_a_judge_that_measures_its_speed_is_told_the_runs_pace_every_ten_items_and_at_the_end(store):
    judge = _LazyJudge()
    geval.score(store, make_items(25), ONE, judge, "synthetic")
    assert [speed.judgments for speed in judge.noted] == [10, 20, 25]
    assert all(speed.measured > time.time() - 60 for speed in judge.noted)
