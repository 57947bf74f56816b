"""geval.judging.backends.openai_compat against the local stub server (tests/openai_stub.py)."""

from __future__ import annotations

import json
import math
import re
import sqlite3

import pytest
from helpers import FULL_ITEM, make_items, make_template, store_bytes

import geval
from geval.errors import JudgeError, JudgeUnreachable, JudgmentFailed
from geval.judging.backends.openai import OpenAIJudge
from geval.scoring.lookup import signature

KEY = "sk-test-DO-NOT-STORE-4f9a1c"
ONE = make_template()
MULTI = make_template(name="test-multi", aspects=(("Naturalness", 1, 5), ("Coherence", 1, 5), ("Engagingness", 1, 5)))
PROMPT = ONE.render(FULL_ITEM)
MULTI_PROMPT = MULTI.render(FULL_ITEM)


def make(stub, **options) -> OpenAIJudge:
    """A judge on the stub with a short timeout and no retries unless asked."""
    settings = {"model": "stub-model", "base_url": stub.url, "api_key": KEY, "max_retries": 0, "timeout": 5.0}
    return OpenAIJudge(**{**settings, **options})


def expected_mean(distribution: dict[int, float]) -> float:
    total = sum(distribution.values())
    return sum(s * p for s, p in distribution.items()) / total


# --- logprobs -------------------------------------------------------------------------------

def test_logprobs_give_the_exact_distribution_and_weighted_mean(stub):
    stub.configure("logprobs", distribution={1: 0.1, 2: 0.3, 3: 0.6}, other=0.2)  # 20% on a non-score token
    judgment = make(stub, mode="logprobs").judge(PROMPT, list(ONE.aspects))
    score = judgment.scores["naturalness"]
    assert score.distribution == pytest.approx({1: 0.1, 2: 0.3, 3: 0.6}, abs=1e-12)
    assert score.score == pytest.approx(2.5, abs=1e-12)
    assert judgment.raw == ["Naturalness: 3"]
    assert stub.count == 1
    body = stub.bodies()[0]
    assert body["model"] == "stub-model"
    assert body["messages"] == [{"role": "user", "content": PROMPT}]
    assert body["logprobs"] is True and body["top_logprobs"] == 20 and body["temperature"] == 0.0
    assert body["max_tokens"] == 16
    assert "n" not in body


def test_logprobs_are_read_at_the_score_after_a_parenthesised_scale(stub):
    stub.configure("logprobs", label="- {aspect} (1-3): ", distribution={1: 0.2, 2: 0.5, 3: 0.3})
    score = make(stub, mode="logprobs").judge(PROMPT, list(ONE.aspects)).scores["naturalness"]
    assert score.distribution == pytest.approx({1: 0.2, 2: 0.5, 3: 0.3}, abs=1e-12)  # not one-hot on the "1" of "(1-3)"
    stub.configure("logprobs", label="**{aspect}** (1-3): ", distributions={"naturalness": {1: 0.6, 3: 0.4},
                                                                            "coherence": {4: 1.0}})
    judgment = make(stub, mode="logprobs").judge(MULTI_PROMPT, list(MULTI.aspects))
    assert judgment.scores["naturalness"].distribution == pytest.approx({1: 0.6, 3: 0.4}, abs=1e-12)
    assert judgment.scores["coherence"].distribution == pytest.approx({4: 1.0}, abs=1e-12)


def test_score_tokens_with_spaces_or_newlines_are_one_score(stub):
    stub.configure("logprobs", variants=(" {score}", "{score}\n", "{score}"), distribution={1: 0.1, 2: 0.3, 3: 0.6})
    score = make(stub, mode="logprobs").judge(PROMPT, list(ONE.aspects)).scores["naturalness"]
    assert score.distribution == pytest.approx({1: 0.1, 2: 0.3, 3: 0.6}, abs=1e-12)
    assert score.coverage == pytest.approx(1.0)


def test_a_digit_that_is_not_ascii_is_no_score():
    """A real server offered '³' among the top logprobs: str.isdigit says yes, int() refuses."""
    from geval.judging.backends.openai import score_of_token

    assert [score_of_token(token, ONE.aspects[0]) for token in ("³", " 3", "٣", "3")] == [None, 3, None, 3]


def test_coverage_is_the_mass_top_logprobs_put_on_scores(stub):
    stub.configure("logprobs", distribution={1: 0.1, 2: 0.3, 3: 0.6}, other=0.25)
    score = make(stub, mode="logprobs").judge(PROMPT, list(ONE.aspects)).scores["naturalness"]
    assert score.coverage == pytest.approx(0.75)
    stub.configure("logprobs", distribution={1: 0.1, 2: 0.3, 3: 0.6})  # only 2 alternatives asked: "1" is missing
    score = make(stub, mode="logprobs", top_logprobs=2).judge(PROMPT, list(ONE.aspects)).scores["naturalness"]
    assert score.coverage == pytest.approx(0.9)
    assert score.distribution == pytest.approx({2: 1 / 3, 3: 2 / 3})


def test_empty_top_logprobs_are_never_a_one_hot_score(stub):
    stub.configure("logprobs", top_logprobs=False)
    score = make(stub, mode="logprobs").judge(PROMPT, list(ONE.aspects)).scores["naturalness"]
    assert score.score is None and score.distribution == {}
    assert score.reason == "the server sent no top_logprobs at the Naturalness score token"
    stub.configure("logprobs", top_logprobs=False)
    judgment = make(stub, mode="auto", n=4).judge(PROMPT, list(ONE.aspects))  # auto: read from samples instead
    assert judgment.settings["mode"] == "samples" and stub.count == 2
    assert len(judgment.scores["naturalness"].samples) == 4


def test_auto_signs_each_judgment_with_the_mode_that_made_it_and_bills_both_requests(stub, store):
    stub.configure("no-logprobs")
    judge = make(stub, mode="auto", n=20, prices=(1.0, 2.0))
    progress = geval.score(store, make_items(2), ONE, judge, "synthetic")
    assert stub.count == 3  # the logprobs attempt, then 20 samples per item
    frame = store.judgments("synthetic")
    assert set(frame["signature"]) == {progress.signature}
    assert "|mode:samples|temp:1.0|n:20|max_tokens:16|" in progress.signature and "mode:auto" not in progress.signature
    first, second = ((len(ONE.render(item)) + 3) // 4 for item in make_items(2))
    assert progress.prompt_tokens == 2 * first + second  # the first item's prompt went twice
    assert progress.completion_tokens == 4 + 20 * 4 + 20 * 4  # the first answer "Naturalness: 3" counted too
    assert store.runs().iloc[0]["signature"].count("mode:auto") == 1  # the run keeps what was asked
    stub.configure("logprobs")
    again = geval.score(store, make_items(2), ONE, make(stub, mode="auto"), "synthetic")
    assert again.cached == 2 and stub.count == 0  # a new auto judge accepts the samples answers as its own
    other = geval.score(store, make_items(3)[2:], ONE, make(stub, mode="auto"), "synthetic")
    assert "|mode:logprobs|top_logprobs:20|" in other.signature and stub.count == 1


def test_a_trailing_slash_does_not_make_another_judge(stub):
    with_slash, without = make(stub, base_url=stub.url + "/"), make(stub)
    assert with_slash.settings == without.settings and with_slash.settings["base_url"] == stub.url


def test_logprobs_per_aspect_of_a_multi_aspect_form(stub):
    distributions = {
        "naturalness": {1: 0.05, 2: 0.05, 3: 0.1, 4: 0.5, 5: 0.3},
        "coherence": {2: 0.5, 3: 0.5},
        "engagingness": {5: 1.0},
    }
    stub.configure("logprobs", distributions=distributions)
    judgment = make(stub, mode="logprobs").judge(MULTI_PROMPT, list(MULTI.aspects))
    assert set(judgment.scores) == {"naturalness", "coherence", "engagingness"}
    for key, distribution in distributions.items():
        assert judgment.scores[key].distribution == pytest.approx(distribution, abs=1e-12)
        assert judgment.scores[key].score == pytest.approx(expected_mean(distribution), abs=1e-12)
    assert judgment.raw == ["Naturalness: 4\nCoherence: 2\nEngagingness: 5"]
    assert stub.bodies()[0]["max_tokens"] == 24  # 8 tokens per aspect when that is more than max_tokens


def test_usage_and_cost_come_from_the_answer(stub):
    judgment = make(stub, mode="logprobs", prices=(1.0, 2.0)).judge(PROMPT, list(ONE.aspects))
    assert judgment.prompt_tokens == (len(PROMPT) + 3) // 4  # the stub counts characters / 4
    assert judgment.completion_tokens == 4  # "Naturalness: 3": 14 characters
    assert judgment.cost == pytest.approx((judgment.prompt_tokens * 1.0 + 4 * 2.0) / 1e6)


def test_in_auto_mode_the_estimate_says_it_is_a_bound_and_gives_the_cost_with_logprobs(stub, store):
    items = make_items(4)
    auto = make(stub, mode="auto", model="gpt-4o-mini")
    bound, exact = geval.plan(store, items, ONE, auto), geval.plan(store, items, ONE, make(stub, mode="logprobs",
                                                                                              model="gpt-4o-mini"))
    assert bound.cost > 3 * exact.cost and bound.cost_with_logprobs == pytest.approx(exact.cost)
    assert re.search(r"\(at most ~[\d,]+ prompt \+ ~[\d,]+ answer tokens, at most ~\$0\.\d{4}; "
                     rf"~\${exact.cost:.4f} if the server gives logprobs\)$", bound.line()), bound.line()
    assert "at most" not in exact.line() and exact.cost_with_logprobs is None
    stub.configure("logprobs")
    geval.score(store, items[:1], ONE, auto, "synthetic")  # the server has sent logprobs: billed as such
    assert geval.plan(store, items[1:], ONE, auto).cost_with_logprobs is None


def test_a_model_of_no_known_price_reads_cost_unknown_not_zero(stub, store):
    items = make_items(2)
    unknown = geval.plan(store, items, ONE, make(stub, mode="logprobs"))
    assert "cost unknown: no price for this model" in unknown.line() and "$" not in unknown.line()
    assert "~$" in geval.plan(store, items, ONE, make(stub, mode="logprobs", model="gpt-4o-mini")).line()
    assert "~$" in geval.plan(store, items, ONE, make(stub, mode="logprobs", prices=(1.0, 2.0))).line()
    progress = geval.score(store, items, ONE, make(stub, mode="logprobs"), "synthetic")
    assert ", cost unknown, " in progress.line() and "$" not in progress.line()


# --- samples --------------------------------------------------------------------------------

def test_samples_give_frequencies(stub):
    stub.configure("no-logprobs", cycle=[3] * 12 + [2] * 6 + [1] * 2)
    judgment = make(stub, mode="samples", n=20).judge(PROMPT, list(ONE.aspects))
    score = judgment.scores["naturalness"]
    assert sorted(score.samples) == [1] * 2 + [2] * 6 + [3] * 12
    assert score.distribution == pytest.approx({1: 0.1, 2: 0.3, 3: 0.6})
    assert score.score == pytest.approx(2.5)
    assert len(judgment.raw) == 20
    assert stub.count == 1
    body = stub.bodies()[0]
    assert body["n"] == 20 and body["temperature"] == 1.0 and "logprobs" not in body


def test_a_server_that_ignores_n_is_asked_again_until_n_answers_come(stub):
    stub.configure("no-logprobs", ignore_n=True, cycle=[3, 2, 3, 1, 3])
    judgment = make(stub, mode="samples", n=20).judge(PROMPT, list(ONE.aspects))
    assert stub.count == 20
    assert [body["n"] for body in stub.bodies()] == list(range(20, 0, -1))
    assert judgment.scores["naturalness"].distribution == pytest.approx({1: 0.2, 2: 0.2, 3: 0.6})
    assert len(judgment.scores["naturalness"].samples) == 20


def test_samples_with_some_garbage_answers_use_the_parsed_ones(stub):
    stub.configure("no-logprobs", cycle=[3, 2])
    judge = make(stub, mode="samples", n=4)
    judgment = judge.judge(PROMPT, list(ONE.aspects))
    assert judgment.scores["naturalness"].score == pytest.approx(2.5)
    stub.configure("text", text="I refuse to answer")
    judgment = judge.judge(PROMPT, list(ONE.aspects))
    assert judgment.scores["naturalness"].score is None
    assert judgment.scores["naturalness"].reason == (
        "none of 4 answers could be parsed: no Naturalness score in the answer 'I refuse to answer'"
    )


def test_auto_falls_back_to_samples_for_good_when_no_logprobs_come(stub):
    stub.configure("no-logprobs")
    judge = make(stub, mode="auto", n=20)
    first = judge.judge(PROMPT, list(ONE.aspects))
    assert stub.count == 2
    assert stub.bodies()[0]["logprobs"] is True
    assert stub.bodies()[1]["n"] == 20 and "logprobs" not in stub.bodies()[1]
    assert first.scores["naturalness"].distribution == pytest.approx({1: 0.1, 2: 0.3, 3: 0.6})
    judge.judge(PROMPT, list(ONE.aspects))
    assert stub.count == 3 and "logprobs" not in stub.bodies()[2]  # no second logprobs attempt


def test_auto_uses_logprobs_when_they_come(stub):
    judgment = make(stub, mode="auto").judge(PROMPT, list(ONE.aspects))
    assert stub.count == 1
    assert judgment.scores["naturalness"].score == pytest.approx(2.5)


def test_logprobs_mode_on_a_server_without_logprobs_fails_with_a_hint(stub):
    stub.configure("no-logprobs")
    with pytest.raises(JudgmentFailed) as error:
        make(stub, mode="logprobs").judge(PROMPT, list(ONE.aspects))
    assert str(error.value) == "the server returned no logprobs; use mode 'samples' (or 'auto') for this server"


# --- unscored answers -----------------------------------------------------------------------

@pytest.mark.parametrize(
    "text, reason",
    [
        ("no idea", "no Naturalness score in the answer 'no idea'"),
        ("Naturalness: 7", "Naturalness score 7 is outside the scale 1-3"),
        ("", "no Naturalness score in the answer ''"),
    ],
)
@pytest.mark.parametrize("mode", ["logprobs", "samples"])
def test_unparseable_answers_are_unscored_with_a_reason_never_zero(stub, mode, text, reason):
    stub.configure("text", text=text)
    judgment = make(stub, mode=mode, n=3).judge(PROMPT, list(ONE.aspects))
    score = judgment.scores["naturalness"]
    assert score.score is None
    assert score.distribution == {}
    if mode == "logprobs":
        assert score.reason == reason
    else:
        assert score.reason == f"none of 3 answers could be parsed: {reason}"


# --- HTTP errors, retries, timeouts ---------------------------------------------------------

@pytest.mark.parametrize("status", [429, 500, 503])
def test_errors_then_success_are_retried(stub, status):
    stub.configure("logprobs", fail_first=2, fail_status=status, retry_after="0.01")
    judgment = make(stub, mode="logprobs", max_retries=3).judge(PROMPT, list(ONE.aspects))
    assert stub.count == 3
    assert judgment.scores["naturalness"].score == pytest.approx(2.5)


def _gap(stub) -> float:
    return stub.requests[1]["time"] - stub.requests[0]["time"]


def test_retry_after_is_honoured(stub):
    stub.configure("logprobs", fail_first=1, fail_status=429, retry_after="0.6")
    make(stub, mode="logprobs", max_retries=2).judge(PROMPT, list(ONE.aspects))
    assert stub.count == 2
    assert _gap(stub) >= 0.6  # longer than the SDK's own first backoff (0.375-0.5 s)
    stub.configure("logprobs", fail_first=1, fail_status=429, retry_after="0.02")
    make(stub, mode="logprobs", max_retries=2).judge(PROMPT, list(ONE.aspects))
    assert stub.count == 2
    assert _gap(stub) < 0.3  # shorter than the SDK's own first backoff


def test_429_without_retry_after_backs_off(stub):
    stub.configure("logprobs", fail_first=1, fail_status=429)
    make(stub, mode="logprobs", max_retries=1).judge(PROMPT, list(ONE.aspects))
    assert stub.count == 2
    assert _gap(stub) >= 0.3


def test_500_every_time_fails_after_the_retries(stub):
    stub.configure("logprobs", fail_first=None, fail_status=500, retry_after="0.01")
    with pytest.raises(JudgmentFailed) as error:
        make(stub, mode="logprobs", max_retries=2).judge(PROMPT, list(ONE.aspects))
    assert stub.count == 3
    assert str(error.value).startswith("HTTP 500 from the server: ")
    assert "stub failure 3" in str(error.value)


def test_429_every_time_fails(stub):
    stub.configure("logprobs", fail_first=None, fail_status=429, retry_after="0.01")
    with pytest.raises(JudgmentFailed, match="^HTTP 429 from the server"):
        make(stub, mode="logprobs", max_retries=1).judge(PROMPT, list(ONE.aspects))
    assert stub.count == 2


def test_a_slow_server_times_out(stub):
    stub.configure("logprobs", delay=0.6)
    with pytest.raises(JudgmentFailed) as error:
        make(stub, mode="logprobs", timeout=0.15).judge(PROMPT, list(ONE.aspects))
    assert str(error.value) == "timed out after 0 retries"


def test_an_answer_that_is_not_json_fails_the_judgment(stub):
    stub.configure("invalid-json")
    with pytest.raises(JudgmentFailed) as error:
        make(stub, mode="logprobs").judge(PROMPT, list(ONE.aspects))
    assert str(error.value).startswith("unreadable answer from the server")


@pytest.mark.parametrize("status, message", [
    (401, "the server refused the API key (401); check the key"),
    (404, "model 'stub-model' or endpoint {url} not found (404); check both"),
])
def test_setup_errors_are_judge_errors(stub, status, message):
    stub.configure("logprobs", fail_first=None, fail_status=status)
    with pytest.raises(JudgeError) as error:
        make(stub, mode="logprobs").judge(PROMPT, list(ONE.aspects))
    assert not isinstance(error.value, JudgmentFailed)
    assert str(error.value) == message.format(url=stub.url)


@pytest.mark.parametrize("url, line", [
    ("http://127.0.0.1:9/v1", "cannot reach http://127.0.0.1:9/v1: connection refused; no server listens there: start "
                              "it, or correct the base URL (sidebar: Judge settings; command line: --base-url)"),
    ("http://no-such-host.invalid/v1", "cannot reach http://no-such-host.invalid/v1: host not found; correct the base "
                                       "URL (sidebar: Judge settings; command line: --base-url)"),
])
def test_a_server_that_is_not_there_is_said_at_once_not_retried(monkeypatch, url, line):
    import openai._base_client

    waits = []
    monkeypatch.setattr(openai._base_client.SyncAPIClient, "_sleep_for_retry", lambda *a, **k: waits.append(k))
    judge = OpenAIJudge("m", base_url=url, api_key=KEY, max_retries=5, timeout=2)
    with pytest.raises(JudgeUnreachable) as error:  # a JudgeError: the run stops at it
        judge.judge(PROMPT, list(ONE.aspects))
    assert str(error.value) == line and isinstance(error.value, JudgeError) and waits == []


# --- construction, settings and the API key -------------------------------------------------

def test_constructor_errors(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(JudgeError) as error:
        OpenAIJudge("gpt-4o-mini")
    assert str(error.value) == "no API key: set OPENAI_API_KEY (in the app, or type a key in the sidebar)"
    with pytest.raises(JudgeError, match="^mode 'greedy' is unknown; use one of auto, logprobs, samples$"):
        OpenAIJudge("m", base_url="http://127.0.0.1:9/v1", mode="greedy")
    with pytest.raises(JudgeError, match="needs a model name"):
        OpenAIJudge("", base_url="http://127.0.0.1:9/v1")
    with pytest.raises(JudgeError, match="^the openai judge needs a model name, e.g. --model gpt-4o-mini$"):
        geval.make_judge("openai")  # `--judge openai` without --model: it said "__init__() missing 1 required ..."


def test_settings_hold_only_what_changes_the_output(stub):
    judge = make(stub, mode="logprobs", timeout=3.0, max_retries=4)
    assert judge.settings == {"backend": "openai", "model": "stub-model", "base_url": stub.url, "mode": "logprobs",
                              "temp": None, "n": None, "top_logprobs": 20, "max_tokens": 16}
    text, _ = signature(judge.settings, ONE, list(ONE.aspects))
    assert text == (f"backend:openai|model:stub-model|base_url:{stub.url}|mode:logprobs|top_logprobs:20|max_tokens:16"
                    f"|template:{ONE.label}|scale:naturalness=1-3|agg:wmean|version:{geval.__version__}")
    samples = make(stub, mode="samples", n=20, temperature=0.7)
    assert samples.settings["temp"] == 0.7 and samples.settings["n"] == 20 and samples.settings["top_logprobs"] is None


def test_the_api_key_is_sent_but_never_kept(stub, tmp_path):
    path = tmp_path / "store.sqlite"
    store = geval.Store(path)
    judge = geval.make_judge("openai", model="stub-model", base_url=stub.url, api_key=KEY, max_retries=0, timeout=5.0)
    items = make_items(4)
    progress = geval.score(store, items, ONE, judge, "synthetic",
                                 settings_given={"judge": "openai", "base_url": stub.url})
    assert progress.done == 4 and progress.failed == 0
    assert stub.count == 4
    assert {r["headers"]["authorization"] for r in stub.requests} == {f"Bearer {KEY}"}
    assert KEY not in json.dumps(judge.settings)
    sig_text, sig_json = signature(judge.settings, ONE, list(ONE.aspects))
    assert KEY not in sig_text and KEY not in json.dumps(sig_json)
    assert KEY not in repr(vars(judge))
    store.close()
    assert KEY.encode() not in store_bytes(path)
    with sqlite3.connect(path) as conn:  # and not in any table, whatever the page layout
        dump = "\n".join(conn.iterdump())
    assert KEY not in dump and "stub-model" in dump


def test_a_run_with_server_errors_stores_failed_rows_and_retries_them(stub, store):
    items = make_items(3)
    stub.configure("logprobs", fail_first=None, fail_status=500)
    judge = make(stub, mode="logprobs")
    progress = geval.score(store, items, ONE, judge, "synthetic")
    assert progress.failed == 3 and progress.done == 3
    failed = store.judgments("synthetic", status="failed")
    assert len(failed) == 3
    assert all("HTTP 500 from the server" in reason for reason in failed["reason"])
    assert store.db["calls"].count == 0  # errors are never cached
    stub.configure("logprobs")
    progress = geval.score(store, items, ONE, judge, "synthetic")
    assert progress.failed == 0 and progress.cached == 0 and stub.count == 3
    ok = store.judgments("synthetic", status="ok")
    assert len(ok) == 3 and len(store.judgments("synthetic")) == 3
    assert all(math.isclose(s, 2.5) for s in ok["score"])


def test_an_empty_answer_in_auto_mode_is_unscored_and_keeps_logprobs(stub):
    stub.configure("text", text="")
    judge = make(stub, mode="auto", n=20)
    judgment = judge.judge(PROMPT, list(ONE.aspects))
    assert judgment.scores["naturalness"].score is None
    assert judgment.scores["naturalness"].reason == "no Naturalness score in the answer ''"
    assert stub.count == 1  # no fallback to 20 samples for an empty answer
    stub.configure("logprobs")
    assert judge.judge(PROMPT, list(ONE.aspects)).scores["naturalness"].score == pytest.approx(2.5)
    assert stub.bodies()[0]["logprobs"] is True
