"""Scoring in a background thread, so the page never freezes; one registry per server process."""

from __future__ import annotations

import threading
import uuid
from dataclasses import dataclass, field

import streamlit as st

import geval


@dataclass
class Job:
    """A scoring run in progress: its progress per template, its stop switch and how it ended."""

    id: str
    labels: list[str]
    dataset: str = ""
    store_path: str = ""
    stop: threading.Event = field(default_factory=threading.Event)
    progress: object | None = None  # the latest Progress of geval.score
    finished: list = field(default_factory=list)  # the final Progress of each template
    current: str = ""
    error: str = ""
    done: bool = False

    def stop_now(self) -> None:
        """Ask the run to stop after the item it is on; what is finished stays stored."""
        self.stop.set()


@st.cache_resource
def _registry() -> dict[str, Job]:
    return {}


def start(store_path: str, items: list, templates: list[geval.Template], judge,
          dataset: str, settings_given: dict, concurrency: int = 1, rpm: float | None = None) -> Job:
    """Start scoring `items` with each template in turn, in a thread with its own store connection.

    `concurrency` and `rpm` only matter for judges that take parallel calls (OpenAI-compatible)."""
    job = Job(id=uuid.uuid4().hex[:8], labels=[t.label for t in templates], dataset=dataset, store_path=store_path)

    def work() -> None:
        store = geval.Store(store_path)
        try:
            for template in templates:
                if job.stop.is_set():
                    break
                job.current = template.label
                job.progress = None
                result = geval.score(store, items, template, judge, dataset, settings_given,
                                           stop=job.stop, on_progress=lambda p: setattr(job, "progress", p),
                                           concurrency=concurrency, rpm=rpm)
                job.finished.append(result)
        except geval.GevalError as exc:
            job.error = str(exc)
        except Exception as exc:  # shown on the page; finished judgments are already stored
            job.error = f"unexpected error: {type(exc).__name__}: {exc}"
        finally:
            job.done = True
            store.close()

    _registry()[job.id] = job
    threading.Thread(target=work, name=f"geval-job-{job.id}", daemon=True).start()
    return job


def get(job_id: str | None) -> Job | None:
    """The job with this id, if this server process knows it."""
    return _registry().get(job_id) if job_id else None


def running(store_path: str, dataset: str) -> Job | None:
    """The newest job of this server process still scoring `dataset` into the store at
    `store_path` (a reloaded page finds it)."""
    return next((job for job in reversed(_registry().values())
                 if job.store_path == store_path and job.dataset == dataset and not job.done), None)
