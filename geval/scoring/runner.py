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
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass, field
from importlib import metadata
from pathlib import Path

from geval.data.items import Item, without_item
from geval.errors import GevalError, JudgeError, JudgeUnreachable, JudgmentFailed, TemplateError, WorkerDied
from geval.judging.aspects import PART
from geval.judging.judgment import AspectScore, Judge, Judgment, accepted_settings, cache_key
from geval.judging.layouts import combine
from geval.judging.native import Speed
from geval.judging.templates import Call, Neighbours, Template
from geval.scoring.limits import RateLimiter
from geval.scoring.lookup import ASK_AGAIN, Signer, answered_items, by_group, cached_answers, neighbours
from geval.scoring.plan import CallSequence, Pace, Plan, Work, estimate_call, pace
from geval.scoring.steps import generate_steps
from geval.store import Store
from geval.store.records import failed_rows, judgment_rows, score_rows
from geval.wording import counted, duration

#: The cause of a run that judged its items but could read a score from none of the answers.
UNREAD = ("no score could be read from any of the judge's answers (Inspect shows why); they are cached, so "
          f"the same run reads them the same way: {ASK_AGAIN}")

#: Seconds of the judge's calls that its pace before the run (its measured speed, its time per call)
#: weighs as much as: the ETA follows the pace measured in the run more, the longer the run.
PRIOR_SECONDS = 5.0
#: A judge that measures its speed (the embedded one) is told the run's pace after every this many
#: items judged, and when the run ends: the next estimate starts from it.
NOTE_PACE_EVERY = 10


@dataclass
class Progress:
    """Where a run is. Sent to `on_progress` after every item (and when its phase changes)."""

    total: int
    template: str = ""  # the label of the template version the run scores with
    done: int = 0
    cached: int = 0
    calls: int = 0  # judge calls made (an item of a per-aspect template needs one per aspect)
    failed: int = 0
    unscored: int = 0  # aspect scores the judge answered but no score could be read from
    unread: dict[str, int] = field(default_factory=dict)  # why those had no score (without the item) -> answers
    read: int = 0  # items done with at least one aspect score (the rest failed or went unscored)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    started: float = field(default_factory=time.time)
    run_id: int = 0
    signature: str = ""
    stopped: bool = False
    errors: list[str] = field(default_factory=list)
    concurrency: int = 1  # judge calls made at the same time (1 unless the judge allows more)
    status: str = "running"  # then as stored: finished, stopped, failed (no item judged), error or crashed
    phase: str = ""  # what the run does before its judge calls: loading the model, writing the steps
    load_started: float | None = None  # when the judge began loading its model (None: it did not load one)
    load_expected: float | None = None  # how long the load was expected to take (None: not known)
    load_took: float | None = None  # how long it took, once loaded
    remote: bool = False  # whether the judge answers from a server (a wait may be retries of a server not reached)
    ended: float | None = None  # when the run ended: the elapsed time stops there
    reasons: dict[str, int] = field(default_factory=dict)  # why items failed (without the item) -> items
    called: int = 0  # items answered by this run's judge calls (their own, or a batch's for its group), done
    calls_started: float | None = None  # when the judge calls began (after the judge's model was loaded)
    judged_seconds: float = 0.0  # from then until the last of those items was done
    worked: Work = field(default_factory=Work)  # the work of this run's calls for those items
    planned: Work | None = None  # the work of the calls the run's plan counted, when it was given one
    pace: Pace | None = field(default=None, repr=False)  # the judge's pace: its plan's, then at the start of its calls
    priced: bool = True  # False when the judge knows no price for its model (the cost reads "unknown")

    @property
    def elapsed(self) -> float:
        """Seconds since the run started, up to its end."""
        return (self.ended or time.time()) - self.started

    @property
    def eta(self) -> float | None:
        """Seconds left now (`eta_at`)."""
        return self.eta_at()

    def eta_at(self, now: float | None = None) -> float | None:
        """Seconds left at `now`: what is left of loading the judge's model, then the work left at
        the judge's pace corrected by the pace measured in this run, counted down since the judge
        last answered. The work left is the plan's minus what this run's calls did (without a plan:
        what they did per item judged, for each item left; items served from the cache neither count
        in that nor shorten it: those left may need the judge). None when it is not known: without a
        plan before an item is judged, and once a load or an answer takes longer than estimated
        (a server retried, a stalled model: a number would only count down to 0)."""
        now = time.time() if now is None else now
        remaining = self.total - self.done
        if remaining == 0 or self.ended:
            return 0.0
        if self.planned is None and not self.called or self.pace is None:
            return None
        left = self.seconds_for(self.planned - self.worked if self.planned is not None
                                else self.worked.times(remaining / self.called))
        if self.loading:
            loading = self.load_left(now)
            return None if loading is None else left + loading
        left -= self.unanswered_for(now)
        return left if left >= 0 else None

    @property
    def loading(self) -> bool:
        """Whether the judge is loading its model now."""
        return self.load_started is not None and self.load_took is None and not self.ended

    def load_begins(self, expected: float | None, now: float | None = None) -> None:
        """The judge begins loading its model, expected to take `expected` seconds (None: not known)."""
        self.load_started, self.load_expected = (time.time() if now is None else now), expected

    def load_ends(self, now: float | None = None) -> None:
        """The judge's model is loaded."""
        self.load_took = (time.time() if now is None else now) - self.load_started

    def load_left(self, now: float | None = None) -> float | None:
        """Seconds of the load left at `now`, as expected; None when not known or it takes longer."""
        if self.load_expected is None:
            return None
        left = self.load_expected - ((time.time() if now is None else now) - self.load_started)
        return left if left >= 0 else None

    def load_share(self, now: float | None = None) -> float:
        """How far the load is, 0-1 (held below 1 until it ends; 0 when its length is not known)."""
        if not self.load_expected:
            return 0.0
        return min(0.99, ((time.time() if now is None else now) - self.load_started) / self.load_expected)

    def load_line(self, now: float | None = None) -> str:
        """'Loading the model (about 40 s): 12s so far'."""
        so_far = (time.time() if now is None else now) - self.load_started
        about = f" (about {self.load_expected:.0f} s)" if self.load_expected else ""
        return f"Loading the model{about}: {duration(so_far)} so far"

    def measured_speed(self, now: float | None = None) -> Speed | None:
        """The judge's speed as this run's judgments went (its measured speed scaled by the pace of
        the run), or None when the judge measures no speed or nothing was judged yet."""
        if self.pace is None or self.pace.speed is None or not self.called or not self.judged_seconds:
            return None
        expected = self.pace.seconds(self.worked)
        if not expected:
            return None
        return self.pace.speed.scaled(expected / self.judged_seconds, self.called, time.time() if now is None else now)

    def unanswered_for(self, now: float | None = None) -> float:
        """Seconds since the judge last answered (or, before its first answer, since its calls
        began); 0 before they begin."""
        if self.calls_started is None:
            return 0.0
        return max(0.0, (time.time() if now is None else now) - self.calls_started - self.judged_seconds)

    def seconds_for(self, work: Work) -> float | None:
        """The time `work` takes at the judge's pace, corrected by the pace measured in this run
        (None before the judge's calls begin)."""
        if self.pace is None:
            return None
        measured = (self.judged_seconds + PRIOR_SECONDS) / (self.pace.seconds(self.worked) + PRIOR_SECONDS)
        return self.pace.seconds(work) * measured

    @property
    def cause(self) -> str:
        """The most common reason items failed ("" when none did); for a run whose every answer
        went unscored, that."""
        if self.reasons:
            return max(self.reasons, key=self.reasons.get)
        return UNREAD if self.done and not self.read else ""

    def calls_begin(self, pace: Pace, now: float | None = None) -> None:
        """Start the clock of the judge's calls (after its model is loaded) at its `pace` then."""
        if self.calls_started is None:
            self.calls_started = time.time() if now is None else now
            self.pace = pace

    def item_judged(self, work: Work, now: float | None = None) -> None:
        """Count an item answered by this run's calls, which did `work` for it (nothing more for an
        item a batch's call answered with its group's first)."""
        now = time.time() if now is None else now
        self.called += 1
        self.worked += work
        self.judged_seconds = max(0.0, now - (self.calls_started if self.calls_started is not None else self.started))

    def fail(self, reason: str, shown: list[str]) -> None:
        """Count an item as done and failed: `reason` without the item, `shown` naming it."""
        self.done += 1
        self.failed += 1
        self.errors.extend(shown)
        self.reasons[reason] = self.reasons.get(reason, 0) + 1

    def note_unread(self, reasons: list[str]) -> None:
        """Count answers no score could be read from, each with why (without the item)."""
        self.unscored += len(reasons)
        for reason in reasons:
            self.unread[reason] = self.unread.get(reason, 0) + 1

    @property
    def top_unread(self) -> str:
        """The most common reason answers had no score ("" when none is recorded)."""
        return max(self.unread, key=self.unread.get) if self.unread else ""

    def unread_line(self) -> str:
        """Why answers had no score, in one line: the most common reason, how many answers it
        covers, and what to do ("" when every answer had one)."""
        if not self.unscored:
            return ""
        reason = self.top_unread or "no reason recorded"
        count = self.unread.get(reason, self.unscored)
        return (f"{counted(self.unscored, 'answer')} had no score, {count} of them: {reason}. Inspect shows "
                f"each; they are cached, so starting again reads them the same way: {ASK_AGAIN}")

    def summary(self) -> dict:
        """What a run's row keeps of it (the first 20 errors, the 20 most common reasons answers had no score:
        each answer's text may make its own)."""
        summary = asdict(self)
        summary.pop("pace")
        summary["errors"] = summary["errors"][:20]
        summary["unread"] = dict(sorted(self.unread.items(), key=lambda pair: -pair[1])[:20])
        return summary

    def line(self, after: int = 0, later: float | None = None) -> str:
        """One line for a terminal or a progress bar. `after` runs (other templates) follow this
        one; `later`, the seconds they are estimated to take, is added to the ETA, which then
        says it covers them (None: not known, so the ETA is this run's and says that more follow)."""
        if self.loading:
            return f"{self.load_line()}, {self._eta_text(after, later)}"
        cost = f"${self.cost:.4f}" if self.priced else "cost unknown"
        return (
            f"{self.done}/{self.total} items, {self.cached} cached, {self.failed} failed, {self.unscored} unscored, "
            f"{self.prompt_tokens + self.completion_tokens} tokens, {cost}, "
            f"{duration(self.elapsed)} elapsed" + ("" if self.ended else f", {self._eta_text(after, later)}")
        )

    def _eta_text(self, after: int, later: float | None) -> str:
        """'ETA 11s'; with runs after this one, 'ETA 51s (this template and the 2 after it)', or
        without their estimate 'ETA 11s for this template; 2 more to come'; 'ETA ?' when not known."""
        eta = self.eta
        left = eta if eta is None or not after else eta + (later or 0.0)
        eta = f"ETA {'?' if left is None else duration(left)}"
        if left is not None and not self.called and self.pace is not None and self.pace.default:
            eta += " (a default pace until the first judgments, which correct it)"
        if not after:
            return eta
        if later is None:
            return f"{eta} for this template; {after} more to come"
        return f"{eta} (this template and the {after} after it)"


def score(
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
    examples_from: list[Item] | None = None,
    plan: Plan | None = None,
) -> Progress:
    """Score `items` with `template` and `judge` into `store`; return the final progress.

    Items are taken group by group (dialogue or document) so that prompts sharing a prefix
    follow each other. A judgment that fails is stored as failed with its reason and the run
    goes on; a JudgeError (bad key, unknown model) ends the run and is raised, and so do
    WorkerDied (a native judge's worker crashed, was killed or hung) and JudgeUnreachable (its
    server refused the connection, or its host does not exist), the run stored as failed with it.
    What was judged before stays stored either way.

    Each judgment's signature, id and cache key come from the settings that made its answer
    (an "auto" OpenAI judge answers by logprobs or by samples); the run records the settings
    as asked.

    `concurrency` calls are made at the same time when the judge allows it (its
    `max_concurrency`; judges without one take one call at a time). `rpm` and `tpm` cap the
    requests and tokens per minute. None of the three changes a score, so none is part of
    the signature or the cache key. Setting `stop` submits no new call; calls already made
    finish and are stored. `on_progress` is always called on the caller's thread.
    `examples_from` limits the items few-shot examples are taken from (the signature says so).
    `plan`: this run's `geval.plan`, made just before; its work is what the ETA counts down.
    """
    if not isinstance(concurrency, int) or concurrency < 1:
        raise GevalError(f"concurrency {concurrency!r} is not a whole number >= 1; use 1 for one call at a time")
    template.check_asked()  # an imported judge's record: nothing to ask, nothing stored
    workers = max(1, min(concurrency, getattr(judge, "max_concurrency", 1) or 1))
    store.save_template(template)
    around = neighbours(store, template, dataset, items, examples_from)
    sign = Signer(template, around.pool_label if around else "")
    asked_text, asked_json = sign(judge.settings)
    progress = Progress(total=len(items), template=template.label, signature=sign(accepted_settings(judge)[0])[0],
                        concurrency=workers, priced=getattr(judge, "priced", True),
                        planned=plan.work if plan is not None else None, pace=plan.pace if plan is not None else None,
                        remote=getattr(judge, "remote", False))
    progress.run_id = store.start_run(
        dataset=dataset, template=template.label, signature=asked_text, signature_json=asked_json,
        settings_given=json.dumps(settings_given or {}), environment=json.dumps(environment()), n_items=len(items),
    )
    noted = 0  # items judged when the judge was last told the run's pace
    run = _Run(store, judge, template, sign, progress, RateLimiter(rpm, tpm) if (rpm or tpm) else None, stop, around)
    status = "finished"
    pool = _Calls(workers)
    try:
        if template.needs_generated_steps and not store.steps(template, judge.settings):
            _load_judge(judge, progress, on_progress)
            _phase(progress, on_progress, "writing the evaluation steps")
        steps = generate_steps(store, template, judge)
        accepted = sign.all(accepted_settings(judge))
        for item, unscored in answered_items(store, by_group(items), template, accepted):
            pool.wait_below(workers, on_progress, progress)
            if pool.error is not None:
                break
            if stop is not None and stop.is_set():
                progress.stopped, status = True, "stopped"
                break
            if unscored is not None:
                run.count_cached(item, unscored)
                pending = None
            else:
                pending = run.prepare(item, steps)
            if pending is None:  # served from the cache, or could not be rendered
                if on_progress:
                    on_progress(progress)
                continue
            if progress.calls_started is None:  # the first judge call of the run
                _load_judge(judge, progress, on_progress)
                progress.calls_begin(pace(store, judge, workers))  # the judge's speed, measured as it loaded
                progress.phase = ""
                if on_progress:  # the calls begin: the bar and its first ETA, before the first item is done
                    on_progress(progress)
            pool.submit(lambda pending=pending: run.call(pending))
            if progress.called >= noted + NOTE_PACE_EVERY:
                noted = _note_pace(judge, progress)
        pool.wait_below(1, on_progress, progress)
        if progress.called > noted:
            _note_pace(judge, progress)
        if stop is not None and stop.is_set() and progress.done < progress.total:
            progress.stopped, status = True, "stopped"
        if status == "finished" and progress.done and not progress.read:
            status = "failed"  # not one score: a template that never renders, garbage answers, a server failing
        if pool.error is not None:
            raise pool.error
    except (WorkerDied, JudgeUnreachable) as exc:  # the judge's worker died, or its server is not there: the
        status = "failed"                           # run fails with why, at once (every call would)
        progress.errors.insert(0, str(exc))
        raise
    except JudgeError:
        status = "error"
        raise
    except BaseException:
        status = "crashed"
        raise
    finally:
        pool.close()
        run.cached_rows.flush()
        progress.status, progress.phase, progress.ended = status, "", time.time()
        store.finish_run(progress.run_id, status, progress.summary())
    return progress


def _note_pace(judge: Judge, progress: Progress) -> int:
    """Tell a judge that measures its speed (`note_speed`: the embedded one) the speed this run's
    judgments went at, for the estimates after it; returns the items judged so far."""
    note, speed = getattr(judge, "note_speed", None), progress.measured_speed()
    if note is not None and speed is not None:
        note(speed)
    return progress.called


def _phase(progress: Progress, on_progress, phase: str) -> None:
    """Say what the run is doing before its judge calls (shown instead of an empty bar)."""
    if progress.phase != phase:
        progress.phase = phase
        if on_progress:
            on_progress(progress)


def _load_judge(judge: Judge, progress: Progress, on_progress) -> None:
    """Load a judge's model now, as a step of its own (judges that load lazily have `load`; their
    `load_seconds`, the time it is expected to take)."""
    load = getattr(judge, "load", None)
    if load is not None and not getattr(judge, "loaded", False):
        progress.load_begins(getattr(judge, "load_seconds", None))
        _phase(progress, on_progress, "loading the model")
        load()
        progress.load_ends()


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
    """An item's judge calls that are not in the cache: what a worker needs to make them, and
    what the cache already answered (stored key -> score, and -> the call key it came from)."""

    item: Item
    calls: list[Call]
    base: dict
    answers: dict[str, AspectScore | None]
    keys: dict[str, str | None]
    reasons: dict[str, str] = field(default_factory=dict)  # stored key -> why its call failed
    work: Work = field(default_factory=Work)  # the work of its calls (those no earlier item of the run asked)


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


class _Run:
    """What one run's items share: the store, judge, template, signatures and progress.
    `prepare` and `count_cached` run on the caller's thread; `call` on the workers'."""

    def __init__(self, store: Store, judge: Judge, template: Template, sign: Signer, progress: Progress,
                 limiter: RateLimiter | None, stop: threading.Event | None, around: Neighbours | None):
        self.store, self.judge, self.template, self.sign = store, judge, template, sign
        self.progress, self.limiter, self.stop, self.around = progress, limiter, stop, around
        self.lock = threading.Lock()  # guards `progress` and `in_flight`, which workers update
        self.in_flight: dict[str, threading.Event] = {}  # calls being made, by prompt and aspects
        self.made: set[str] = set()  # the cache keys of the calls this run made
        self.sequence = CallSequence()  # the work of the calls, in the order they are made
        self.counted: set[tuple] = set()  # the calls whose work is counted (a batch's, once for its group)
        self.cached_rows = _RowBuffer(store)

    def base(self, item: Item) -> dict:
        return {"item_id": item.id, "dataset": item.dataset, "template": self.template.label,
                "template_version": self.template.version, "run_id": self.progress.run_id}

    def prepare(self, item: Item, steps: str | None) -> _Pending | None:
        """Render `item`; store what the cache holds (or the failure), and return the calls left to make."""
        base = self.base(item)
        try:
            calls = self.template.calls(item, steps, self.around)
        except TemplateError as exc:
            self.fail(base, self.template.aspects, str(exc), without_item(str(exc), item.id, item.dataset))
            return None
        answers: dict[str, AspectScore | None] = {}
        keys: dict[str, str | None] = {}
        missing = []
        for call, hit in zip(calls, cached_answers(self.store, self.judge, calls)):
            if hit is None:
                missing.append(call)
                continue
            key, judgment = hit
            self.cached_rows.add(self.rows(base, key, judgment, call))
            collect(call, key, judgment, answers, keys)
        pending = _Pending(item, missing, base, answers, keys)
        for call in missing:
            if (call.prompt, call.aspects) not in self.counted:
                self.counted.add((call.prompt, call.aspects))
                pending.work += self.sequence.work(call.prompt, len(call.aspects))
        if missing:
            return pending
        with self.lock:  # answered (in part) by calls this run made for another item, e.g. of a batch: judged
            shared = any(key in self.made for key in keys.values())
        self.finish(pending, cached=True, shared=shared)
        return None

    def count_cached(self, item: Item, unread: list[str]) -> None:
        """Count an item whose every judgment came from the cache (`unread`: why those that are
        unscored have no score)."""
        with self.lock:
            self.progress.cached += 1
            self.progress.done += 1
            self.progress.note_unread([without_item(reason, item.id, item.dataset) for reason in unread])
            self.progress.read += len(unread) < len(self.template.aspects)

    def call(self, pending: _Pending) -> bool:
        """Make an item's judge calls and store each result; False if `stop` came while waiting for the rate limit."""
        asked = False  # whether this item made a call itself (not only waited for another item's)
        for call in pending.calls:
            try:
                answered = self.answer(call, pending.base)
            except JudgmentFailed as exc:
                reason = f"item {pending.item.id}: {exc}"
                self.store_failed(pending.base, [stored for _, stored in call.keep], reason, call.detail)
                pending.answers.update((stored, None) for _, stored in call.keep)
                pending.reasons.update((stored, reason) for _, stored in call.keep)
                continue
            if answered is None:
                return False
            key, judgment, own = answered
            asked = asked or own
            collect(call, key, judgment, pending.answers, pending.keys)
        self.finish(pending, cached=False, shared=not asked)
        return True

    def answer(self, call: Call, base: dict) -> tuple[str, Judgment, bool] | None:
        """Ask the judge (once, however many items of a batch want this call at the same time) and
        store the answer with the item's rows: (cache key, judgment, whether this item asked, not
        another); None if `stop` came while waiting for the rate limit."""
        token = json.dumps([call.prompt, [[a.name, a.min, a.max, list(a.labels)] for a in call.aspects]])
        with self.lock:
            waiting = self.in_flight.get(token)
            if waiting is None:
                self.in_flight[token] = threading.Event()
        if waiting is not None:  # another worker is asking the same: wait for its answer in the cache
            waiting.wait()
            hit = cached_answers(self.store, self.judge, [call])[0]
            if hit is not None:
                self.store.save_judgments(self.rows(base, *hit, call))
                return *hit, False
            return self.answer(call, base)  # its call failed: ask again
        try:
            asked = self._ask(call, base)
            return None if asked is None else (*asked, True)
        finally:
            with self.lock:
                self.in_flight.pop(token).set()

    def _ask(self, call: Call, base: dict) -> tuple[str, Judgment] | None:
        aspects = list(call.aspects)
        estimate = sum(estimate_call(self.judge, call.prompt, aspects)[:2])
        if self.limiter is not None and not self.limiter.acquire(estimate, self.stop):
            return None
        started = time.time()
        judgment = self.judge.judge(call.prompt, aspects)
        if self.limiter is not None:
            self.limiter.settle(estimate, judgment.prompt_tokens + judgment.completion_tokens)
        settings = judgment.settings or self.judge.settings
        key = cache_key(settings, call.prompt, aspects)
        self.store.save_call(key, settings, call.prompt, [a.key for a in aspects], judgment, time.time() - started,
                             self.rows(base, key, judgment, call))
        with self.lock:
            self.made.add(key)
            self.progress.calls += 1
            self.progress.prompt_tokens += judgment.prompt_tokens
            self.progress.completion_tokens += judgment.completion_tokens
            self.progress.cost += judgment.cost
        return key, judgment

    def finish(self, pending: _Pending, cached: bool, shared: bool = False) -> None:
        """Store the item's scores made of several answers (checklists, batches) and count the item:
        `cached` when its calls were answered without it asking, `shared` when by calls of this run
        (a batch layout's other items of the group), which the count and the ETA take as judged."""
        combined = combine(self.template, pending.answers)
        if combined:
            rows = combined_rows(pending.base, combined, pending.keys, pending.reasons,
                                 self.sign(accepted_settings(self.judge)[0]))
            (self.cached_rows.add if cached else self.store.save_judgments)(rows)
        final = {**pending.answers, **combined}
        shown = list(dict.fromkeys(pending.reasons.values()))
        with self.lock:
            unread = [without_item(final[a.key].reason, pending.item.id, pending.item.dataset)
                      for a in self.template.aspects if final.get(a.key) is not None and final[a.key].score is None]
            if any(final.get(a.key) is None for a in self.template.aspects):
                first = shown[0] if shown else f"item {pending.item.id}: not every part is answered"
                self.progress.fail(without_item(first, pending.item.id, pending.item.dataset), shown or [first])
            else:
                self.progress.done += 1
                self.progress.read += len(unread) < len(self.template.aspects)
                if shared or not cached:
                    self.progress.item_judged(pending.work)
            self.progress.cached += cached and not shared
            self.progress.note_unread(unread)

    def rows(self, base: dict, key: str, judgment: Judgment, call: Call) -> list[dict]:
        """The item's rows of an answer, signed with the settings that made it."""
        signed = self.sign(judgment.settings or self.judge.settings)
        self.progress.signature = signed[0]
        return judgment_rows(base, key, judgment, signed, call.keep, call.detail)

    def fail(self, base: dict, aspects, shown: str, reason: str) -> None:
        """Store an item's `aspects` as failed with `shown` (the reason, naming the item), and
        count the item done and failed."""
        self.store_failed(base, [a.key for a in aspects], shown)
        with self.lock:
            self.progress.fail(reason, [shown])

    def store_failed(self, base: dict, keys: list[str], reason: str, detail: str = "") -> None:
        """Failed rows, signed with the settings the judge's next call uses."""
        self.store.save_judgments(failed_rows(base, keys, reason, self.sign(accepted_settings(self.judge)[0]), detail))


def collect(call: Call, key: str, judgment: Judgment, answers: dict[str, AspectScore | None],
            keys: dict[str, str | None]) -> None:
    """Note the item's answers in `judgment` to `call` (under their stored keys) and the call key they came from."""
    for asked, stored in call.keep:
        answers[stored] = judgment.scores[asked]
        keys.setdefault(stored, key)


def combined_rows(base: dict, combined: dict[str, AspectScore | None], keys: dict[str, str | None],
                  reasons: dict[str, str], signed: tuple[str, str]) -> list[dict]:
    """The rows of an item's scores made of several answers (`geval.judging.layouts.combine`):
    scored or unscored ones with the call key of their first part (`keys`: part -> call key),
    failed ones (a part failed) with that part's reason (`reasons`: part -> reason)."""
    made = {stored: score for stored, score in combined.items() if score is not None}
    first = {stored: next((key for part, key in keys.items() if part.startswith(f"{stored}{PART}")), None)
             for stored in made}
    rows = score_rows(base, made, first, signed)
    for stored in combined.keys() - made.keys():
        reason = next((reasons[k] for k in reasons if k.startswith(f"{stored}{PART}")), "not every part is answered")
        rows += failed_rows(base, [stored], f"a part of it failed: {reason}", signed)
    return rows


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
