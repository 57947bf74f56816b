"""The scoring loop: render, look up the cache, call the judge, store every judgment at once.

Each finished judgment is committed before the next item starts, so a stop, a crash or a
killed process loses nothing; running the same work again only does what is missing.
"""

from __future__ import annotations

import json
import platform
import subprocess
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from importlib import metadata
from pathlib import Path

from geval.cot import ensure_steps
from geval.errors import JudgeError, JudgmentFailed, TemplateError
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


def score_items(
    store: Store,
    items: list[Item],
    template: Template,
    judge: Judge,
    dataset: str,
    settings_given: dict | None = None,
    stop: threading.Event | None = None,
    on_progress: Callable[[Progress], None] | None = None,
) -> Progress:
    """Score `items` with `template` and `judge` into `store`; return the final progress.

    Items are taken group by group (dialogue or document) so that prompts sharing a prefix
    follow each other. A judgment that fails is stored as failed with its reason and the run
    goes on; a JudgeError (bad key, unknown model) ends the run and is raised.
    """
    store.save_template(template)
    aspects = list(template.aspects)
    sig_text, sig_json = signature(judge.settings, template, aspects)
    progress = Progress(total=len(items), signature=sig_text)
    progress.run_id = store.start_run(
        dataset=dataset, template=template.label, signature=sig_text, signature_json=json.dumps(sig_json),
        settings_given=json.dumps(settings_given or {}), environment=json.dumps(environment()), n_items=len(items),
    )
    status = "finished"
    try:
        steps = ensure_steps(store, template, judge)
        for item in _by_group(items):
            if stop is not None and stop.is_set():
                progress.stopped, status = True, "stopped"
                break
            _score_one(store, item, template, judge, aspects, steps, sig_text, sig_json, progress)
            if on_progress:
                on_progress(progress)
    except JudgeError:
        status = "error"
        raise
    except BaseException:
        status = "crashed"
        raise
    finally:
        store.finish_run(progress.run_id, status, _summary(progress))
    return progress


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
    aspects = list(template.aspects)
    prices = getattr(judge, "prices", (0.0, 0.0))
    cached = calls = tokens = 0
    failing = []
    for item in items:
        try:
            prompt = template.render(item, steps or "(evaluation steps, generated before the run)")
        except TemplateError as exc:
            failing.append(str(exc))
            continue
        if steps is not None or not template.needs_generated_steps:
            if store.cached_call(cache_key(judge.settings, prompt, aspects)) is not None:
                cached += 1
                continue
        calls += 1
        tokens += len(prompt) // 4
    n = getattr(judge, "n", 1) if judge.settings.get("n") else 1
    cost = (tokens * n * prices[0] + calls * n * 5 * len(aspects) * prices[1]) / 1e6
    return Plan(len(items), cached, calls, tokens, cost, failing)


def _score_one(store, item, template, judge, aspects, steps, sig_text, sig_json, progress) -> None:
    base = {"item_id": item.id, "dataset": item.dataset, "template": template.label,
            "template_version": template.version, "signature": sig_text,
            "signature_json": json.dumps(sig_json), "run_id": progress.run_id}
    try:
        prompt = template.render(item, steps)
    except TemplateError as exc:
        _fail(store, base, aspects, str(exc), progress)
        return
    key = cache_key(judge.settings, prompt, aspects)
    judgment = store.cached_call(key)
    if judgment is not None:
        progress.cached += 1
        store.save_judgments(_rows(base, key, judgment))
    else:
        started = time.time()
        try:
            judgment = judge.judge(prompt, aspects)
        except JudgmentFailed as exc:
            _fail(store, base, aspects, f"item {item.id}: {exc}", progress)
            return
        store.save_call(key, judge.settings, prompt, [a.key for a in aspects], judgment,
                        time.time() - started, _rows(base, key, judgment))
        progress.prompt_tokens += judgment.prompt_tokens
        progress.completion_tokens += judgment.completion_tokens
        progress.cost += judgment.cost
    progress.done += 1
    progress.unscored += sum(s.score is None for s in judgment.scores.values())


def _rows(base: dict, key: str, judgment: Judgment) -> list[dict]:
    now = time.time()
    return [
        {**base, "id": judgment_id(base["item_id"], base["template_version"], base["signature"], aspect),
         "aspect": aspect, "call_key": key, "status": "ok" if s.score is not None else "unscored",
         "score": s.score, "distribution": json.dumps(s.distribution), "reason": s.reason, "created": now}
        for aspect, s in judgment.scores.items()
    ]


def _fail(store: Store, base: dict, aspects, reason: str, progress: Progress) -> None:
    now = time.time()
    store.save_judgments([
        {**base, "id": judgment_id(base["item_id"], base["template_version"], base["signature"], a.key),
         "aspect": a.key, "call_key": None, "status": "failed", "score": None, "distribution": "{}",
         "reason": reason, "created": now}
        for a in aspects
    ])
    progress.done += 1
    progress.failed += 1
    progress.errors.append(reason)


def _by_group(items: Iterable[Item]) -> list[Item]:
    """Items of the same group next to each other, groups in first-seen order."""
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
