"""Judge faults through the whole runner: an OpenAIJudge on the stub server (tests/openai_stub.py)
answers 429 with and without Retry-After, 500, 503, resets the connection, times out, sends
invalid JSON, an empty answer, no score, a score outside the scale, or no logprobs. Each ends as
retried-then-ok, a failed judgment with its reason, or unscored with its reason; the run always
finishes; the failures show in Progress, in the store, in the CLI summary (exit 1) and on the
Score page; and running again retries only the failed items."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import make_items, make_template, run_cli

import geval
from geval.errors import JudgeError
from geval.judging.backends.openai import OpenAIJudge
from geval.scoring.runner import UNREAD

KEY = "sk-test-faults-0000"
TEMPLATE = make_template()
N = 3  # items per run

#: (id, stub configuration, judge options, outcome of every item, reason, requests the stub sees)
#: Judges get max_retries=2 (3 attempts) unless the options say otherwise.
FAULTS = [
    ("429 with Retry-After, once", dict(fail_first=1, fail_status=429, retry_after="0.01"), {}, "ok", "", N + 1),
    ("429 without Retry-After, once", dict(fail_first=1, fail_status=429), {"max_retries": 1}, "ok", "", N + 1),
    ("500 once", dict(fail_first=1, fail_status=500, retry_after="0.01"), {}, "ok", "", N + 1),
    ("503 twice", dict(fail_first=2, fail_status=503, retry_after="0.01"), {}, "ok", "", N + 2),
    ("connection reset, once", dict(reset_first=1), {"max_retries": 1}, "ok", "", N + 1),
    ("429 every time", dict(fail_first=None, fail_status=429, retry_after="0.01"), {}, "failed",
     "HTTP 429 from the server: Error code: 429 - stub failure", 3 * N),
    ("500 every time", dict(fail_first=None, fail_status=500, retry_after="0.01"), {}, "failed",
     "HTTP 500 from the server: Error code: 500 - stub failure", 3 * N),
    ("503 every time", dict(fail_first=None, fail_status=503, retry_after="0.01"), {}, "failed",
     "HTTP 503 from the server: Error code: 503 - stub failure", 3 * N),
    ("connection reset every time", dict(reset_first=None), {"max_retries": 0}, "failed",
     "connection failed after 0 retries ([Errno 104] Connection reset by peer)", N),
    ("timeout every time", dict(delay=0.5), {"timeout": 0.1, "max_retries": 1}, "failed",
     "timed out after 1 retries", 2 * N),
    ("invalid JSON", dict(behaviour="invalid-json"), {}, "failed",
     "unreadable answer from the server (not JSON: Expecting property name enclosed in double quotes", N),
    ("no logprobs, mode logprobs", dict(behaviour="no-logprobs"), {}, "failed",
     "the server returned no logprobs; use mode 'samples' (or 'auto') for this server", N),
    ("no logprobs, mode auto", dict(behaviour="no-logprobs"), {"mode": "auto", "n": 4}, "ok", "", N + 1),
    ("empty answer", dict(behaviour="text", text=""), {}, "unscored",
     "no Naturalness score in the answer ''", N),
    ("no score", dict(behaviour="text", text="I cannot judge this."), {}, "unscored",
     "no Naturalness score in the answer 'I cannot judge this.'", N),
    ("score outside the scale", dict(behaviour="text", text="Naturalness: 7"), {}, "unscored",
     "Naturalness score 7 is outside the scale 1-3", N),
    ("no score, sampled", dict(behaviour="text", text="no idea"), {"mode": "samples", "n": 3}, "unscored",
     "none of 3 answers could be parsed: no Naturalness score in the answer 'no idea'", N),
]


def judge_on(stub, **options) -> OpenAIJudge:
    settings = {"model": "stub-model", "base_url": stub.url, "api_key": KEY, "mode": "logprobs",
                "max_retries": 2, "timeout": 3.0}
    return OpenAIJudge(**{**settings, **options})


def configure(stub, config: dict) -> None:
    config = dict(config)
    stub.configure(config.pop("behaviour", "logprobs"), **config)


@pytest.mark.parametrize("name, config, options, outcome, reason, requests", FAULTS, ids=[f[0] for f in FAULTS])
def test_each_fault_ends_ok_failed_or_unscored_and_the_run_ends(stub, store, name, config, options, outcome,
                                                                   reason, requests):
    items = make_items(N)
    configure(stub, config)
    judge = judge_on(stub, **options)
    progress = geval.score(store, items, TEMPLATE, judge, "synthetic")

    assert progress.done == N and not progress.stopped  # the run went through every item
    assert stub.count == requests  # retried as many times as the table says
    rows = store.judgments("synthetic")
    assert len(rows) == N and set(rows["status"]) == {outcome}
    status = "finished" if outcome == "ok" else "failed"  # failed: not one item was scored
    assert store.runs()["status"].tolist() == [status] and progress.status == status
    if outcome == "ok":
        assert progress.failed == progress.unscored == 0 and progress.errors == []
        assert rows["score"].notna().all()
    elif outcome == "failed":
        assert progress.failed == N and progress.unscored == 0
        assert len(progress.errors) == N
        assert all(error.startswith(f"item {item_id}: {reason}") for error, item_id in
                   zip(progress.errors, rows["item_id"]))
        assert all(r.startswith(f"item {i}: {reason}") for r, i in zip(rows["reason"], rows["item_id"]))
        assert rows["score"].isna().all() and rows["call_key"].isna().all()
        assert store.db["calls"].count == 0  # failures are never cached
    else:
        assert progress.failed == 0 and progress.unscored == N and progress.cause == UNREAD
        assert rows["score"].isna().all() and set(rows["reason"]) == {reason}  # unscored, never 0

    # Running again, on a healthy server, asks only for what failed.
    stub.configure("logprobs")
    again = geval.score(store, items, TEMPLATE, judge_on(stub, **options), "synthetic")
    assert stub.count == (N if outcome == "failed" else 0)
    assert again.cached == (0 if outcome == "failed" else N) and again.failed == 0
    assert again.status == ("failed" if outcome == "unscored" else "finished")  # the cached answers read the same
    rows = store.judgments("synthetic")
    assert len(rows) == N  # still one row per item: retried rows replace the failed ones
    assert set(rows["status"]) == ({"unscored"} if outcome == "unscored" else {"ok"})


@pytest.mark.parametrize("config", [
    dict(fail_first=3, fail_status=500, retry_after="0.01"),
    dict(reset_first=3),
    dict(fail_first=3, fail_status=429, retry_after="0.01"),
], ids=["500", "reset", "429"])
def test_a_rerun_retries_only_the_failed_item(stub, store, config):
    items = make_items(4)
    configure(stub, config)
    first = geval.score(store, items, TEMPLATE, judge_on(stub), "synthetic")  # 3 attempts of item 0 fail
    assert (first.done, first.failed, stub.count) == (4, 1, 6)
    failed = store.judgments("synthetic", status="failed")
    assert len(failed) == 1 and len(store.judgments("synthetic", status="ok")) == 3
    failed_prompt = stub.bodies()[0]["messages"][0]["content"]

    stub.configure("logprobs")
    second = geval.score(store, items, TEMPLATE, judge_on(stub), "synthetic")
    assert (second.cached, second.failed, stub.count) == (3, 0, 1)
    assert stub.bodies()[0]["messages"][0]["content"] == failed_prompt  # only the failed one was asked again
    assert set(store.judgments("synthetic")["status"]) == {"ok"}


def test_a_bad_key_ends_the_run_with_a_judge_error_and_records_it(stub, store):
    stub.configure("logprobs", fail_first=None, fail_status=401)
    with pytest.raises(JudgeError, match=r"^the server refused the API key \(401\); check the key$"):
        geval.score(store, make_items(N), TEMPLATE, judge_on(stub), "synthetic")
    assert stub.count == 1  # not retried, and not one call per item
    assert store.runs()["status"].tolist() == ["error"]
    assert len(store.judgments("synthetic")) == 0


# --- the CLI --------------------------------------------------------------------------------

def write_inputs(folder: Path, n: int = 4) -> tuple[Path, Path]:
    """A USR-layout dataset of `n` responses and a one-aspect template, as files."""
    dataset = folder / "mini.json"
    dataset.write_text(json.dumps([{
        "context": "hello there\nhi, how are you?", "fact": "a fact",
        "responses": [{"response": f"reply number {i}", "model": f"sys{i % 2}", "Natural": [1 + i % 3, 2]}
                      for i in range(n)],
    }]))
    template = folder / "mini-naturalness.txt"
    template.write_text(TEMPLATE.text)
    return dataset, template


def score_cli(stub, dataset: Path, template: Path, store: Path):
    return run_cli("score", str(dataset), "-t", str(template), "--judge", "openai", "--base-url", stub.url,
                   "--model", "m", "--mode", "logprobs", "--store", str(store),
                   env={"OPENAI_API_KEY": KEY})


def test_the_cli_summary_prints_failures_exits_1_and_a_rerun_retries_only_them(stub, tmp_path):
    dataset, template = write_inputs(tmp_path)
    store = tmp_path / "store.sqlite"
    stub.configure("logprobs", fail_first=6, fail_status=500, retry_after="0.01")  # the CLI retries 5 times
    result = score_cli(stub, dataset, template, store)
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert f"{TEMPLATE.label}: 4 items, 0 cached, 3 judge calls, 1 failed, 0 unscored aspect scores" in result.stdout
    failures = [line for line in result.stderr.splitlines() if line.startswith("  failed: ")]
    assert len(failures) == 1
    assert "HTTP 500 from the server: Error code: 500 - stub failure 6 (HTTP 500)" in failures[0]
    assert "(failed items are retried the next time you run the same command)" in result.stderr
    assert stub.count == 6 + 3

    stub.configure("logprobs")
    result = score_cli(stub, dataset, template, store)
    assert result.returncode == 0, result.stderr
    assert f"{TEMPLATE.label}: 4 items, 3 cached, 1 judge call, 0 failed" in result.stdout
    assert "failed: " not in result.stderr
    assert stub.count == 1


def test_the_cli_with_no_answer_it_can_read_counts_them_says_why_and_exits_1(stub, tmp_path):
    dataset, template = write_inputs(tmp_path, n=2)
    stub.configure("text", text="Naturalness: 9")
    result = score_cli(stub, dataset, template, tmp_path / "store.sqlite")
    assert result.returncode == 1, result.stderr
    assert "2 items, 0 cached, 2 judge calls, 0 failed, 2 unscored aspect scores" in result.stdout
    assert f"failed, not one item was scored: {UNREAD}" in result.stderr


# --- the Score page ---------------------------------------------------------------------------

def test_the_score_page_shows_failures_and_a_restart_retries_only_them(monkeypatch, tmp_path, stub):
    from tests.apptest_helpers import open_app, texts, wait_for

    stub.configure("logprobs", fail_first=6, fail_status=500, retry_after="0.01")  # the app's judge retries 5x
    at = open_app(monkeypatch, tmp_path, "views/3_score.py")
    at.radio(key="judge_backend").set_value("openai").run()
    at.text_input(key="judge_model").set_value("stub-model")
    at.text_input(key="judge_base_url").set_value(stub.url)
    at.text_input(key="api_key").set_value(KEY)
    at.selectbox(key="judge_mode").set_value("logprobs").run()
    at.number_input(key="score_concurrency").set_value(1).run()  # one call at a time: the first item meets all 6 failures
    at.number_input(key="score_limit").set_value(3).run()
    at.button(key="score_start").click().run()
    wait_for(at, lambda at: any(w.value.startswith("Run ") for w in at.warning))
    assert not at.exception and not at.success  # some items failed: orange, not green
    warnings = [w.value for w in at.warning]
    assert len(warnings) == 1 and "3/3 items, 0 cached, 2 judge calls, 1 failed" in warnings[0]
    assert "1 of 3 items failed: HTTP 500 from the server" in warnings[0]
    assert "Failed items are not cached: start again to retry only them." in texts(at)

    stub.configure("logprobs")
    at.run()
    assert "3 items: 2 cached, 1 judge call to make" in texts(at)
    at.button(key="score_start").click().run()
    wait_for(at, lambda at: sum(s.value.startswith("Run ") for s in at.success) == 1
             and "2 cached" in next(s.value for s in at.success if s.value.startswith("Run ")))
    assert stub.count == 1


def test_the_cli_says_when_a_run_failed_as_a_whole(tmp_path):
    dataset, template = write_inputs(tmp_path, n=2)
    result = run_cli("score", str(dataset), "-t", str(template), "--judge", "openai", "--base-url",
                     "http://127.0.0.1:9/v1", "--model", "m", "--mode", "logprobs", "--max-retries", "0",
                     "--store", str(tmp_path / "store.sqlite"), env={"OPENAI_API_KEY": KEY})
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines()[-1] == (
        "error: cannot reach http://127.0.0.1:9/v1: connection refused; no server listens there: start it, or correct "
        "the base URL (sidebar: Judge settings; command line: --base-url)")
    assert geval.Store(tmp_path / "store.sqlite").runs()["status"].tolist() == ["failed"]
