"""The scoring loop: render, look up the cache, call the judge, store every judgment at once.

Each judge call's result is committed as soon as it is made, so a stop, a crash or a killed
process loses nothing; running the same work again only does what is missing. (Rows served
from the cache are written 500 at a time: they cost nothing to write again.)

Judges that can take several calls at a time (`max_concurrency` > 1: OpenAI-compatible
servers) are called from a pool of up to `concurrency` threads, paced by an optional
requests/tokens-per-minute limit. Everything else (the embedded judge: one llama.cpp
context) is called on the caller's thread, one item after the other.
"""

from __future__ import annotations

import json
import platform
import subprocess
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass, field
from importlib import metadata
from pathlib import Path

from geval.cot import ensure_steps
from geval.errors import GevalError, JudgeError, JudgmentFailed, TemplateError
from geval.items import Item
from geval.judges.base import Judge, Judgment, cache_key, signature
from geval.store import Store, judgment_id
from geval.templates import Template


@dataclass
class Progress:
    """Where a run is. Sent to `on_progress` after every item."""

    total: int
    done: int = 0
    cached: int = 0
    calls: int = 0  # judge calls made (an item of a per-aspect template needs one per aspect)
    failed: int = 0
    unscored: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    started: float = field(default_factory=time.time)
    run_id: int = 0
    signature: str = ""
    stopped: bool = False
    errors: list[str] = field(default_factory=list)
    concurrency: int = 1  # judge calls made at the same time (1 unless the judge allows more)

    @property
    def elapsed(self) -> float:
        """Seconds since the run started."""
        return time.time() - self.started

    @property
    def eta(self) -> float | None:
        """Seconds left, estimated from the items the judge actually had to score."""
        called = self.done - self.cached
        remaining = self.total - self.done
        if remaining == 0:
            return 0.0
        return self.elapsed / called * remaining if called else None

    def line(self) -> str:
        """One line for a terminal or a progress bar."""
        eta = "?" if self.eta is None else f"{self.eta:.0f}s"
        return (
            f"{self.done}/{self.total} items, {self.cached} cached, {self.failed} failed, {self.unscored} unscored, "
            f"{self.prompt_tokens + self.completion_tokens} tokens, ${self.cost:.4f}, "
            f"{self.elapsed:.0f}s elapsed, ETA {eta}"
        )


class RateLimiter:
    """Requests- and tokens-per-minute limits: two token buckets shared by a run's workers.

    Each bucket holds one second's worth of its rate (at least one request), so calls are
    spread evenly instead of bursting a minute's quota at once. A call costing more tokens
    than the bucket holds waits for a full bucket and leaves it in debt, so the rate over
    any long stretch stays within the limit. Token costs are estimated before a call and
    corrected with the real usage after it (`settle`).
    """

    def __init__(self, rpm: float | None = None, tpm: float | None = None,
                 clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep):
        for name, value in (("rpm", rpm), ("tpm", tpm)):
            if value is not None and not value > 0:
                raise GevalError(f"{name} {value} is not a positive number; leave it unset for no limit")
        self.rpm, self.tpm = rpm, tpm
        self._clock, self._sleep = clock, sleep
        self._lock = threading.Lock()
        now = clock()
        # per bucket: [rate per second, capacity, level, last refill]
        self._requests = [rpm / 60, max(1.0, rpm / 60), max(1.0, rpm / 60), now] if rpm else None
        self._tokens = [tpm / 60, tpm / 60, tpm / 60, now] if tpm else None

    def acquire(self, tokens: int = 0, stop: threading.Event | None = None) -> bool:
        """Wait until a call of about `tokens` tokens may go; False if `stop` is set meanwhile."""
        while True:
            with self._lock:
                now = self._clock()
                waits = [self._wait(bucket, cost, now) for bucket, cost in ((self._requests, 1), (self._tokens, tokens))
                         if bucket is not None]
                delay = max(waits, default=0.0)
                if delay <= 0:
                    if self._requests is not None:
                        self._requests[2] -= 1
                    if self._tokens is not None:
                        self._tokens[2] -= tokens
                    return True
            if stop is not None:
                if stop.wait(delay):
                    return False
            else:
                self._sleep(delay)

    def settle(self, estimated: int, actual: int) -> None:
        """Correct the token bucket once a call's real usage is known."""
        if self._tokens is not None and actual > 0:
            with self._lock:
                self._tokens[2] += estimated - actual

    @staticmethod
    def _wait(bucket: list, cost: float, now: float) -> float:
        """Refill `bucket` to `now`; seconds until it holds `cost` (or is full, for a bigger cost)."""
        rate, capacity, level, last = bucket
        level = min(capacity, level + (now - last) * rate)
        bucket[2], bucket[3] = level, now
        return max(0.0, (min(cost, capacity) - level) / rate)


def score_items(
    store: Store,
    items: list[Item],
    template: Template,
    judge: Judge,
    dataset: str,
    settings_given: dict | None = None,
    stop: threading.Event | None = None,
    on_progress: Callable[[Progress], None] | None = None,
    concurrency: int = 1,
    rpm: float | None = None,
    tpm: float | None = None,
) -> Progress:
    """Score `items` with `template` and `judge` into `store`; return the final progress.

    Items are taken group by group (dialogue or document) so that prompts sharing a prefix
    follow each other. A judgment that fails is stored as failed with its reason and the run
    goes on; a JudgeError (bad key, unknown model) ends the run and is raised.

    `concurrency` calls are made at the same time when the judge allows it (its
    `max_concurrency`; judges without one take one call at a time). `rpm` and `tpm` cap the
    requests and tokens per minute. None of the three changes a score, so none is part of
    the signature or the cache key. Setting `stop` submits no new call; calls already made
    finish and are stored. `on_progress` is always called on the caller's thread.
    """
    if not isinstance(concurrency, int) or concurrency < 1:
        raise GevalError(f"concurrency {concurrency!r} is not a whole number >= 1; use 1 for one call at a time")
    limiter = RateLimiter(rpm, tpm) if (rpm or tpm) else None
    workers = max(1, min(concurrency, getattr(judge, "max_concurrency", 1) or 1))
    store.save_template(template)
    aspects = list(template.aspects)
    sig_text, sig_json = signature(judge.settings, template, aspects)
    progress = Progress(total=len(items), signature=sig_text, concurrency=workers)
    progress.run_id = store.start_run(
        dataset=dataset, template=template.label, signature=sig_text, signature_json=json.dumps(sig_json),
        settings_given=json.dumps(settings_given or {}), environment=json.dumps(environment()), n_items=len(items),
    )
    lock = threading.Lock()  # guards `progress`, which workers update as their calls finish
    status = "finished"
    pool = _Calls(workers)
    cached_rows = _RowBuffer(store)
    common = {"template": template.label, "template_version": template.version, "signature": sig_text,
              "signature_json": json.dumps(sig_json), "run_id": progress.run_id}
    try:
        steps = ensure_steps(store, template, judge)
        for item, unscored in _with_answers(store, _by_group(items), template, sig_text):
            pool.wait_below(workers, on_progress, progress)
            if pool.error is not None:
                break
            if stop is not None and stop.is_set():
                progress.stopped, status = True, "stopped"
                break
            if unscored is not None:
                _count_cached(progress, lock, unscored)
                pending = None
            else:
                pending = _prepare(store, item, template, judge, steps, common, progress, lock, cached_rows)
            if pending is None:  # served from the cache, or could not be rendered
                if on_progress:
                    on_progress(progress)
                continue
            pool.submit(lambda pending=pending: _call(store, judge, pending, limiter, stop, progress, lock))
        pool.wait_below(1, on_progress, progress)
        if stop is not None and stop.is_set() and progress.done < progress.total:
            progress.stopped, status = True, "stopped"
        if pool.error is not None:
            raise pool.error
    except JudgeError:
        status = "error"
        raise
    except BaseException:
        status = "crashed"
        raise
    finally:
        pool.close()
        cached_rows.flush()
        store.finish_run(progress.run_id, status, _summary(progress))
    return progress


class _Calls:
    """Judge calls in flight: a thread pool, or (one worker) each call run at once on this thread."""

    def __init__(self, workers: int):
        self.executor = ThreadPoolExecutor(workers, thread_name_prefix="geval-judge") if workers > 1 else None
        self.running: set[Future] = set()
        self.error: BaseException | None = None  # the first error raised by a call; ends the run

    def submit(self, fn: Callable[[], None]) -> None:
        if self.executor is not None:
            self.running.add(self.executor.submit(fn))
            return
        future: Future = Future()
        try:
            future.set_result(fn())
        except Exception as exc:  # KeyboardInterrupt and the like go straight up
            future.set_exception(exc)
        self.running.add(future)

    def wait_below(self, limit: int, on_progress, progress: Progress) -> None:
        """Collect finished calls until fewer than `limit` are running; report each one."""
        while self.running and len(self.running) >= limit:
            finished, self.running = wait(self.running, return_when=FIRST_COMPLETED)
            for future in finished:
                exc = future.exception()
                if exc is not None:
                    self.error = self.error or exc
                elif future.result() and on_progress:
                    on_progress(progress)

    def close(self) -> None:
        """Let the calls already made finish (and be stored); start no other."""
        if self.executor is not None:
            self.executor.shutdown(wait=True, cancel_futures=True)


@dataclass
class _Pending:
    """An item's judge calls that are not in the cache: what a worker needs to make them."""

    item: Item
    calls: list[tuple[str, str, tuple]]  # (prompt, cache key, aspects asked)
    base: dict


class _RowBuffer:
    """Judgment rows of cached calls, written `size` at a time (one transaction each).

    Nothing is lost by the wait: the calls are in the cache, so a killed run's next run
    writes the same rows again without calling the judge.
    """

    def __init__(self, store: Store, size: int = 500):
        self.store, self.size, self.rows = store, size, []

    def add(self, rows: list[dict]) -> None:
        self.rows.extend(rows)
        if len(self.rows) >= self.size:
            self.flush()

    def flush(self) -> None:
        if self.rows:
            self.store.save_judgments(self.rows)
            self.rows = []


def _prepare(store, item, template, judge, steps, common, progress, lock, cached_rows) -> _Pending | None:
    """Render `item`; store what the cache holds (or the failure), and return the calls left to make."""
    base = {"item_id": item.id, "dataset": item.dataset, **common}
    try:
        calls = template.calls(item, steps)
    except TemplateError as exc:
        _fail(store, base, template.aspects, str(exc), progress, lock)
        return None
    keys = [cache_key(judge.settings, prompt, aspects) for prompt, aspects in calls]
    cached = store.cached_calls(keys)
    missing, unscored = [], 0
    for (prompt, aspects), key in zip(calls, keys):
        judgment = cached.get(key)
        if judgment is None:
            missing.append((prompt, key, aspects))
            continue
        cached_rows.add(_rows(base, key, judgment))
        unscored += sum(s.score is None for s in judgment.scores.values())
    if missing:
        with lock:
            progress.unscored += unscored
        return _Pending(item, missing, base)
    _count_cached(progress, lock, unscored)
    return None


def _with_answers(store: Store, items: list[Item], template: Template, signature_text: str,
                  size: int = 500) -> Iterator[tuple[Item, int | None]]:
    """Each item, with how many of its aspects are unscored when all are answered already by
    this template version and signature (a rerun: nothing to render), else None. One query per
    `size` items. With generated steps the prompt also depends on the steps stored now, so
    those items always go through their cache keys."""
    for start in range(0, len(items), size):
        chunk = items[start:start + size]
        if template.needs_generated_steps:
            yield from ((item, None) for item in chunk)
            continue
        ids = {item.id: [judgment_id(item.id, template.version, signature_text, a.key) for a in template.aspects]
               for item in chunk}
        found = store.answered([i for item_ids in ids.values() for i in item_ids])
        for item in chunk:
            statuses = [found.get(i) for i in ids[item.id]]
            yield item, None if None in statuses else statuses.count("unscored")


def _count_cached(progress: Progress, lock: threading.Lock, unscored: int) -> None:
    """Count an item whose every judgment came from the cache."""
    with lock:
        progress.cached += 1
        progress.done += 1
        progress.unscored += unscored


def _call(store, judge, pending: _Pending, limiter, stop, progress, lock) -> bool:
    """Make an item's judge calls and store each result; False if `stop` came while waiting for the rate limit."""
    failures = []
    for prompt, key, aspects in pending.calls:
        estimate = _token_estimate(judge, prompt, aspects)
        if limiter is not None and not limiter.acquire(estimate, stop):
            return False
        started = time.time()
        try:
            judgment = judge.judge(prompt, list(aspects))
        except JudgmentFailed as exc:
            failures.append(f"item {pending.item.id}: {exc}")
            _store_failed(store, pending.base, aspects, failures[-1])
            continue
        if limiter is not None:
            limiter.settle(estimate, judgment.prompt_tokens + judgment.completion_tokens)
        store.save_call(key, judge.settings, prompt, [a.key for a in aspects], judgment,
                        time.time() - started, _rows(pending.base, key, judgment))
        with lock:
            progress.calls += 1
            progress.prompt_tokens += judgment.prompt_tokens
            progress.completion_tokens += judgment.completion_tokens
            progress.cost += judgment.cost
            progress.unscored += sum(s.score is None for s in judgment.scores.values())
    with lock:
        progress.done += 1
        progress.failed += bool(failures)
        progress.errors.extend(failures)
    return True


def _token_estimate(judge, prompt: str, aspects) -> int:
    """Tokens a call will take, before it is made: prompt characters / 4 plus the answer budget."""
    n = getattr(judge, "n", 1) if judge.settings.get("n") else 1
    return len(prompt) // 4 + n * max(getattr(judge, "max_tokens", 16), 8 * len(aspects))


@dataclass
class Plan:
    """What a run would do: items already cached, calls to make, an estimate of tokens and cost."""

    total: int
    cached: int
    calls: int
    prompt_tokens: int  # estimated as characters / 4 for the calls still to make
    cost: float
    failing: list[str]  # items whose prompt cannot be rendered, with the reason

    def line(self) -> str:
        """One line for the Score page and the CLI."""
        return (f"{self.total} items: {self.cached} cached, {self.calls} judge calls to make "
                f"(~{self.prompt_tokens:,} prompt tokens, ~${self.cost:.2f})"
                + (f", {len(self.failing)} cannot be rendered" if self.failing else ""))


def plan_run(store: Store, items: list[Item], template: Template, judge: Judge) -> Plan:
    """Count cached items and estimate the work left, without calling the judge."""
    steps = store.steps(template, judge.settings) if template.needs_generated_steps else None
    known_steps = steps is not None or not template.needs_generated_steps
    prices = getattr(judge, "prices", (0.0, 0.0))
    cached = calls = tokens = answer_tokens = 0
    failing = []
    for item in items:
        try:
            item_calls = template.calls(item, steps or "(evaluation steps, generated before the run)")
        except TemplateError as exc:
            failing.append(str(exc))
            continue
        missing = [(prompt, aspects) for prompt, aspects in item_calls
                   if not known_steps or store.cached_call(cache_key(judge.settings, prompt, aspects)) is None]
        cached += not missing
        calls += len(missing)
        tokens += sum(len(prompt) // 4 for prompt, _ in missing)
        answer_tokens += sum(5 * len(aspects) for _, aspects in missing)
    n = getattr(judge, "n", 1) if judge.settings.get("n") else 1
    cost = (tokens * n * prices[0] + answer_tokens * n * prices[1]) / 1e6
    return Plan(len(items), cached, calls, tokens, cost, failing)


def _rows(base: dict, key: str, judgment: Judgment) -> list[dict]:
    now = time.time()
    return [
        {**base, "id": judgment_id(base["item_id"], base["template_version"], base["signature"], aspect),
         "aspect": aspect, "call_key": key, "status": "ok" if s.score is not None else "unscored",
         "score": s.score, "distribution": json.dumps(s.distribution), "reason": s.reason, "created": now}
        for aspect, s in judgment.scores.items()
    ]


def _fail(store: Store, base: dict, aspects, reason: str, progress: Progress,
          lock: threading.Lock | None = None) -> None:
    """Store an item's `aspects` as failed with `reason`, and count the item done and failed."""
    _store_failed(store, base, aspects, reason)
    with lock or threading.Lock():
        progress.done += 1
        progress.failed += 1
        progress.errors.append(reason)


def _store_failed(store: Store, base: dict, aspects, reason: str) -> None:
    """Failed judgment rows: no call, so the next run asks for them again."""
    now = time.time()
    store.save_judgments([
        {**base, "id": judgment_id(base["item_id"], base["template_version"], base["signature"], a.key),
         "aspect": a.key, "call_key": None, "status": "failed", "score": None, "distribution": "{}",
         "reason": reason, "created": now}
        for a in aspects
    ])


def _by_group(items: Iterable[Item]) -> list[Item]:
    """Items of the same group next to each other, groups in first-seen order.

    A list that already is (datasets are stored dialogue by dialogue) is returned as it is,
    without a copy.
    """
    items = items if isinstance(items, list) else list(items)
    seen: set[str] = set()
    previous = None
    for item in items:
        if item.group != previous:
            if item.group in seen:
                break
            seen.add(item.group)
            previous = item.group
    else:
        return items
    order: dict[str, int] = {}
    for item in items:
        order.setdefault(item.group, len(order))
    return sorted(items, key=lambda item: order[item.group])


def _summary(progress: Progress) -> dict:
    summary = asdict(progress)
    summary["errors"] = summary["errors"][:20]
    return summary


def environment() -> dict:
    """Package versions and the git commit, recorded with every run."""
    versions = {"python": platform.python_version()}
    for package in ("geval-studio", "llama-cpp-python", "openai", "streamlit", "sqlite-utils", "scipy"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            pass
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=Path(__file__).parent, capture_output=True, text=True, timeout=5
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        commit = ""
    return {"versions": versions, "git_commit": commit}
