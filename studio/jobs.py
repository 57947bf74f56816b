"""Scoring in a background thread, so the page never freezes; one registry per server process."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

import streamlit as st

import geval


@dataclass
class Job:
    """A run in the background (`kind`: "score" or "tune"): its progress, its stop switch and how it ended."""

    id: str
    labels: list[str]
    dataset: str = ""
    store_path: str = ""
    kind: str = "score"
    stop: threading.Event = field(default_factory=threading.Event)
    progress: object | None = None  # the latest Progress of geval.score (TuneProgress of geval.tune)
    finished: list = field(default_factory=list)  # the final Progress of each template
    result: object | None = None  # a search's TuneResult
    current: str = ""
    plans: list = field(default_factory=list)  # each template's plan (geval.plan), when given
    not_started: list[str] = field(default_factory=list)  # templates left out once a run ended with an error
    error: str = ""
    done: bool = False
    started: float = field(default_factory=time.time)
    selection: tuple = ()  # what it scores (`selection`): a stopped job is resumed only for the same
    again: Callable[..., Job] | None = None  # starts the same job anew (a stopped one goes on where it stopped)

    resumed: bool = False

    @property
    def resumable(self) -> bool:
        """Stopped before every template finished, and not resumed yet: starting it again goes on
        where it stopped."""
        return self.done and self.stop.is_set() and self.again is not None and not self.resumed and (
            any(p.stopped for p in self.finished) or len(self.finished) < len(self.labels))

    def resume(self, plans: list | None = None) -> Job:
        """Start this job's selection again (what is stored is not asked again); returns the new job. `plans`:
        a scoring job's plans of its templates made just now (else it plans them anew itself)."""
        self.resumed = True
        return self.again(plans) if plans is not None else self.again()

    def stop_now(self) -> None:
        """Ask the run to stop after the item it is on; what is finished stays stored."""
        self.stop.set()

    def heading(self) -> str:
        """The template running, and which of how many when there are several."""
        if not self.current or len(self.labels) < 2:
            return self.current
        return f"{self.current} (template {len(self.finished) + 1} of {len(self.labels)})"

    def line(self) -> str:
        """The running template's progress, its ETA covering the templates after it: their plans'
        work at the pace of the run going on."""
        index = len(self.finished)
        following = len(self.labels) - index - 1
        later = None
        if len(self.plans) == len(self.labels) and self.progress.pace is not None:
            later = sum(self.progress.seconds_for(plan.work) for plan in self.plans[index + 1:])
        return f"{self.heading()}: {self.progress.line(following, later)}"


@st.cache_resource
def _registry() -> dict[str, Job]:
    return {}


def _launch(job: Job, work: Callable[[geval.Store], None]) -> Job:
    """Run `work` on a store connection of its own in a thread; errors end up in `job.error`."""

    def run() -> None:
        store = geval.Store(job.store_path)
        try:
            work(store)
        except geval.GevalError as exc:
            job.error = str(exc)
        except Exception as exc:  # shown on the page; finished judgments are already stored
            job.error = f"unexpected error: {type(exc).__name__}: {exc}"
        finally:
            job.done = True
            store.close()

    _registry()[job.id] = job
    threading.Thread(target=run, name=f"geval-job-{job.id}", daemon=True).start()
    return job


def selection(items: list, templates: list[geval.Template], settings_given: dict) -> tuple:
    """What a scoring job scores: the items, the template versions and the judge's settings as given."""
    return (tuple(item.id for item in items), tuple(t.version for t in templates),
            tuple(sorted((k, str(v)) for k, v in settings_given.items())))


def start(store_path: str, items: list, templates: list[geval.Template], judge,
          dataset: str, settings_given: dict, concurrency: int = 1, rpm: float | None = None,
          plans: list | None = None) -> Job:
    """Start scoring `items` with each template in turn.

    `concurrency` and `rpm` only matter for judges that take parallel calls (OpenAI-compatible).
    `plans`: each template's plan (`geval.plan`), made just before: its run's ETA counts down its
    work, and the job's ETA adds the later templates'.
    The job's `again` starts the same selection anew (a Resume: what is stored is not asked again), with the plans
    given it or planned anew: the first plans counted the items done since as work left (the ETA read too long)."""
    def again(planned: list | None = None) -> Job:
        if planned is None and plans:
            planned = _planned(store_path, items, templates, judge, concurrency)
        return start(store_path, items, templates, judge, dataset, settings_given, concurrency, rpm, planned)

    job = Job(id=uuid.uuid4().hex[:8], labels=[t.label for t in templates], dataset=dataset, store_path=store_path,
              plans=list(plans or []), selection=selection(items, templates, settings_given), again=again)

    def work(store: geval.Store) -> None:
        for index, template in enumerate(templates):
            if job.stop.is_set():
                break
            job.current = template.label
            job.progress = None
            try:
                result = geval.score(store, items, template, judge, dataset, settings_given, stop=job.stop,
                                     on_progress=lambda p: setattr(job, "progress", p),
                                     concurrency=concurrency, rpm=rpm,
                                     plan=job.plans[index] if len(job.plans) == len(templates) else None)
            except geval.GevalError:  # a bad key, a server not there, a crash: the run ends with its error
                job.not_started = job.labels[index + 1:]
                raise
            job.finished.append(result)

    return _launch(job, work)


def _planned(store_path: str, items: list, templates: list[geval.Template], judge, concurrency: int) -> list:
    """Each template's plan (`geval.plan`) of `items` as the store holds them now."""
    store = geval.Store(store_path)
    try:
        return [geval.plan(store, items, template, judge, concurrency=concurrency) for template in templates]
    finally:
        store.close()


def start_tune(store_path: str, dataset: str, judge, human: str, budget: int, template: geval.Template | None,
               tune_share: float, seed: int, other_templates: bool = True, few_shot: bool = True,
               ensemble: bool = True) -> Job:
    """Start a search (`geval.tune`) for the way of asking that agrees best with people on `human`;
    without `other_templates`, `few_shot` or `ensemble`, those variants are left out."""
    job = Job(id=uuid.uuid4().hex[:8], labels=[f"tune {human}"], dataset=dataset, store_path=store_path, kind="tune",
              again=lambda: start_tune(store_path, dataset, judge, human, budget, template, tune_share, seed,
                                       other_templates, few_shot, ensemble))

    def work(store: geval.Store) -> None:
        job.result = geval.tune(store, dataset, judge, human, budget, template, None if other_templates else [],
                                tune_share=tune_share, seed=seed, stop=job.stop,
                                few_shot=None if few_shot else (), ensemble=ensemble, on_progress=lambda p: setattr(job, "progress", p))

    return _launch(job, work)


def start_reasons(store_path: str, dataset: str, judge, human: str, budget: int, queue: str, k: int,
                  combo: tuple[str, str] | None = None) -> Job:
    """Start measuring the candidates made from a queue's reasons (`geval.labeling.reasons.from_reasons`), the
    corrections read against the judge scores of `combo`."""
    job = Job(id=uuid.uuid4().hex[:8], labels=[f"reasons {human}"], dataset=dataset, store_path=store_path,
              kind="reasons")

    def work(store: geval.Store) -> None:
        job.result = geval.labeling.reasons.from_reasons(store, dataset, judge, human, budget, combo=combo,
                                                         queue=queue, k=k, stop=job.stop, on_progress=lambda p: setattr(job, "progress", p))

    return _launch(job, work)


def get(job_id: str | None) -> Job | None:
    """The job with this id, if this server process knows it."""
    return _registry().get(job_id) if job_id else None


def stopped(store_path: str, dataset: str) -> list[Job]:
    """The scoring jobs of this server process on `dataset` that were stopped and can be resumed, newest first."""
    return [job for job in reversed(_registry().values()) if job.store_path == store_path and job.dataset == dataset
            and job.kind == "score" and job.resumable]


def running(store_path: str, dataset: str, kind: str = "score") -> Job | None:
    """The newest job of `kind` of this server process still working on `dataset` in the store at
    `store_path` (a reloaded page finds it)."""
    return next((job for job in reversed(_registry().values())
                 if job.store_path == store_path and job.dataset == dataset and job.kind == kind and not job.done),
                None)
