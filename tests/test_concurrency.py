"""geval.runner with concurrent judge calls: the limit the server sees, Retry-After, stop and resume,
rate limits, and judges that must stay sequential. Against tests/openai_stub.py; nothing is timed
except lower bounds (a wait that must have happened)."""

from __future__ import annotations

import threading
import time

import pytest
from helpers import make_items, make_template

import geval
from geval.errors import JudgeError
from geval.judging.backends.openai import OpenAIJudge
from geval.judging.backends.scripted import ScriptedJudge, hashed_distribution
from geval.scoring.limits import RateLimiter
from geval.scoring.runner import Progress

ONE = make_template()


def make(stub, **options) -> OpenAIJudge:
    """A judge on the stub, in logprobs mode, with a short timeout."""
    settings = {"model": "stub-model", "base_url": stub.url, "api_key": "sk-test", "mode": "logprobs",
                "max_retries": 0, "timeout": 10.0}
    return OpenAIJudge(**{**settings, **options})


def stored(store: geval.Store) -> list[str]:
    """Item ids of the judgment rows, one per row."""
    return [row[0] for row in store.db.execute("SELECT item_id FROM judgments")]


def test_concurrent_calls_stay_within_the_limit_and_store_every_item_once(store, stub):
    stub.configure("logprobs", delay=0.2)
    items = make_items(24)
    progress = geval.score(store, items, ONE, make(stub), "synthetic", concurrency=8)
    assert 1 < stub.max_in_flight <= 8
    assert progress.concurrency == 8
    assert (progress.done, progress.cached, progress.failed, progress.stopped) == (24, 0, 0, False)
    assert stub.count == 24
    ids = stored(store)
    assert len(ids) == 24 and set(ids) == {item.id for item in items}
    assert store.db["calls"].count == 24
    assert set(store.judgments("synthetic")["status"]) == {"ok"}
    assert store.runs().iloc[0]["status"] == "finished"


def test_progress_adds_up_under_concurrency_and_is_reported_on_the_callers_thread(store, stub):
    stub.configure("logprobs", delay=0.05)
    seen, threads = [], set()

    def on_progress(progress: Progress) -> None:
        seen.append(progress.done)
        threads.add(threading.current_thread().name)

    progress = geval.score(store, make_items(30), ONE, make(stub, prices=(1.0, 2.0)), "synthetic",
                                 concurrency=6, on_progress=on_progress)
    assert threads == {threading.current_thread().name}
    assert len(seen) == 31 and seen == sorted(seen) and seen[0] == 0 and seen[-1] == 30  # 0: as the calls begin
    sums = store.db.execute("SELECT SUM(prompt_tokens), SUM(completion_tokens), SUM(cost) FROM calls").fetchone()
    assert (progress.prompt_tokens, progress.completion_tokens) == (sums[0], sums[1])
    assert progress.cost == pytest.approx(sums[2])
    assert progress.eta == 0.0


def test_a_429_with_retry_after_is_retried_by_the_sdk_and_ends_ok(store, stub):
    stub.configure("logprobs", fail_first=1, fail_status=429, retry_after="0.5")
    progress = geval.score(store, make_items(8), ONE, make(stub, max_retries=2), "synthetic", concurrency=4)
    assert (progress.done, progress.failed) == (8, 0)
    assert stub.count == 9  # one refused, then retried
    assert set(store.judgments("synthetic")["status"]) == {"ok"}
    refused = stub.requests[0]
    retried = [r for r in stub.requests[1:] if r["body"] == refused["body"]]
    assert len(retried) == 1 and retried[0]["time"] - refused["time"] >= 0.5  # it waited as told


def test_the_stop_event_stops_submitting_and_a_rerun_completes_without_duplicates(store, stub):
    stub.configure("logprobs", delay=0.1)
    items = make_items(20)
    stop = threading.Event()

    def on_progress(progress: Progress) -> None:
        if progress.done >= 5:
            stop.set()

    judge = make(stub)
    first = geval.score(store, items, ONE, judge, "synthetic", concurrency=4, stop=stop, on_progress=on_progress)
    assert first.stopped and 5 <= first.done < 20
    assert store.runs().iloc[0]["status"] == "stopped"
    assert stub.count == first.done  # every call made was finished and stored
    assert len(stored(store)) == first.done

    second = geval.score(store, items, ONE, judge, "synthetic", concurrency=4)
    assert not second.stopped and second.done == 20 and second.cached == first.done
    assert stub.count == 20  # nothing asked twice
    ids = stored(store)
    assert len(ids) == 20 and set(ids) == {item.id for item in items}
    assert store.db["calls"].count == 20
    assert store.runs()["went_on"].tolist() == [None, second.run_id]  # the stopped run's went on in the second
    other = geval.score(store, items[:10], ONE, judge, "synthetic")  # other items: not the stopped run again
    assert store.runs()["went_on"].tolist() == [None, None, second.run_id] and other.run_id > second.run_id


def test_a_judge_error_in_a_worker_ends_the_run(store, stub):
    stub.configure("logprobs", fail_first=None, fail_status=401)
    with pytest.raises(JudgeError, match="refused the API key"):
        geval.score(store, make_items(10), ONE, make(stub), "synthetic", concurrency=4)
    assert store.runs().iloc[0]["status"] == "error"
    assert stub.count <= 4 + 4  # the calls in flight when it came, not the whole list
    assert stored(store) == []


def test_concurrency_and_rate_limits_are_not_in_the_signature_or_the_cache_key(store, stub):
    items = make_items(6)
    judge = make(stub)
    one = geval.score(store, items, ONE, judge, "synthetic", concurrency=1)
    many = geval.score(store, items, ONE, make(stub, max_retries=4, timeout=30.0), "synthetic",
                             concurrency=8, rpm=6000, tpm=10**7)
    assert many.signature == one.signature
    assert many.cached == 6 and stub.count == 6
    assert "concurrency" not in one.signature and "rpm" not in one.signature


class _Counting(ScriptedJudge):
    """A scripted judge that records how many calls overlap and on which threads they run."""

    def __init__(self):
        super().__init__()
        self.active = self.most = 0
        self.threads: set[str] = set()
        self._lock = threading.Lock()

    def judge(self, prompt, aspects):
        with self._lock:
            self.active += 1
            self.most = max(self.most, self.active)
            self.threads.add(threading.current_thread().name)
        time.sleep(0.01)
        try:
            return super().judge(prompt, aspects)
        finally:
            with self._lock:
                self.active -= 1


def test_judges_without_max_concurrency_run_one_call_at_a_time_on_the_callers_thread(store):
    judge = _Counting()  # like the embedded judge: no max_concurrency, one shared model
    progress = geval.score(store, make_items(12), ONE, judge, "synthetic", concurrency=8)
    assert judge.most == 1 and judge.threads == {threading.current_thread().name}
    assert progress.concurrency == 1 and progress.done == 12


def test_embedded_judge_is_sequential():
    from geval.judging.backends.embedded import EmbeddedJudge

    assert getattr(EmbeddedJudge, "max_concurrency", 1) == 1
    assert OpenAIJudge.max_concurrency >= 16


def test_a_judge_allowing_concurrency_gets_at_most_what_was_asked(store):
    judge = _Counting()
    judge.max_concurrency = 3
    progress = geval.score(store, make_items(30), ONE, judge, "synthetic", concurrency=16)
    assert progress.concurrency == 3 and 1 <= judge.most <= 3 and progress.done == 30


@pytest.mark.parametrize("concurrency", [0, -2, 1.5])
def test_a_bad_concurrency_is_refused(store, concurrency):
    with pytest.raises(geval.GevalError, match=rf"^concurrency {concurrency} is not a whole number >= 1"):
        geval.score(store, make_items(2), ONE, ScriptedJudge(), "synthetic", concurrency=concurrency)


def test_the_rpm_limit_makes_the_run_wait(store, stub):
    started = time.monotonic()
    geval.score(store, make_items(4), ONE, make(stub), "synthetic", concurrency=4, rpm=120)
    assert stub.count == 4
    assert time.monotonic() - started >= 0.9  # 2 at once, then one every 0.5 s


# --- the token buckets, on a fake clock ---------------------------------------------------------

class FakeClock:
    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def test_rpm_spreads_requests_evenly():
    clock = FakeClock()
    limiter = RateLimiter(rpm=120, clock=clock, sleep=clock.sleep)
    times = []
    for _ in range(6):
        limiter.acquire()
        times.append(clock.now)
    assert times == pytest.approx([0.0, 0.0, 0.5, 1.0, 1.5, 2.0])


def test_tpm_lets_a_big_request_go_and_then_pays_its_debt():
    clock = FakeClock()
    limiter = RateLimiter(tpm=600, clock=clock, sleep=clock.sleep)  # 10 tokens/s, bucket of 10
    limiter.acquire(100)  # more than the bucket: waits for a full bucket (it is full), leaves -90
    assert clock.now == 0.0
    limiter.acquire(5)  # needs 95 tokens of refill
    assert clock.now == pytest.approx(9.5)


def test_settle_corrects_the_estimate_with_the_real_usage():
    clock = FakeClock()
    limiter = RateLimiter(tpm=600, clock=clock, sleep=clock.sleep)
    limiter.acquire(10)
    limiter.settle(estimated=10, actual=40)  # 30 more than thought: 3 s of debt
    limiter.acquire(10)
    assert clock.now == pytest.approx(4.0)


def test_a_stop_while_waiting_for_the_limit_gives_up():
    limiter = RateLimiter(rpm=1)
    stop = threading.Event()
    assert limiter.acquire(stop=stop)
    threading.Timer(0.05, stop.set).start()
    assert limiter.acquire(stop=stop) is False


@pytest.mark.parametrize("options, message", [
    ({"rpm": 0}, "rpm 0 is not a positive number; leave it unset for no limit"),
    ({"tpm": -5}, "tpm -5 is not a positive number; leave it unset for no limit"),
])
def test_bad_limits_are_refused(options, message):
    with pytest.raises(geval.GevalError) as error:
        RateLimiter(**options)
    assert str(error.value) == message


def test_hashed_script_is_untouched_by_threads(store):
    """Concurrent scripted scoring gives the same scores as sequential scoring."""
    items = make_items(20)
    judge = ScriptedJudge(hashed_distribution)
    judge.max_concurrency = 8
    geval.score(store, items, ONE, judge, "synthetic", concurrency=8)
    other = geval.Store(":memory:")
    geval.score(other, items, ONE, ScriptedJudge(hashed_distribution), "synthetic")
    a = store.judgments("synthetic").set_index("item_id")["score"].sort_index()
    b = other.judgments("synthetic").set_index("item_id")["score"].sort_index()
    assert a.equals(b)
    other.close()
