"""The sidebar's "Check the judge" in a background thread: the page stays live while the model
loads (about 40 s), and a bar shows the step the check is on instead of a dimmed page."""

from __future__ import annotations

import threading
import time
import uuid
from dataclasses import dataclass, field

import streamlit as st

import geval


@dataclass
class Check:
    """One check of the judge the sidebar names `key`: the step it is on, then its result."""

    id: str
    key: str
    step: str = "starting"
    steps: int = 0  # how many steps have begun
    step_started: float = field(default_factory=time.time)
    expected: float | None = None  # the seconds the step is expected to take, when known
    result: tuple | None = None  # (works, verdict, [(ok, text, fix), ...]) once done
    done: bool = False

    def hear(self, step: str, seconds: float | None) -> None:
        """A step begins (the checkup's `on_step`)."""
        self.step, self.expected, self.step_started = step, seconds, time.time()
        self.steps += 1

    def share(self, now: float | None = None) -> float:
        """How far the step is, 0-1 (below 1 until it ends; 0 when its length is not known)."""
        if not self.expected:
            return 0.0
        return min(0.99, ((time.time() if now is None else now) - self.step_started) / self.expected)

    def line(self, now: float | None = None) -> str:
        """'Checking the judge: loading the model (about 40 s), 12 s so far'."""
        about = f" (about {self.expected:.0f} s)" if self.expected else ""
        return (f"Checking the judge: {self.step}{about}, "
                f"{(time.time() if now is None else now) - self.step_started:.0f} s so far")


@st.cache_resource
def _registry() -> dict[str, Check]:
    return {}


def start(key: str, judge) -> Check:
    """Check `judge` (named `key`) in a thread; a check of the same judge going on already is
    returned instead of a second one."""
    going = next((check for check in _registry().values() if check.key == key and not check.done), None)
    if going is not None:
        return going
    check = Check(id=uuid.uuid4().hex[:8], key=key)

    def run() -> None:
        try:
            checkup = judge.check(on_step=check.hear)
            check.result = (checkup.works, checkup.verdict, [(f.ok, f.text, f.fix) for f in checkup.findings])
        except geval.GevalError as exc:
            check.result = (False, str(exc), [])
        except Exception as exc:  # shown in the sidebar, in red, like any problem
            check.result = (False, f"unexpected error: {type(exc).__name__}: {exc}", [])
        finally:
            check.done = True

    _registry()[check.id] = check
    threading.Thread(target=run, name=f"geval-check-{check.id}", daemon=True).start()
    return check


def get(check_id: str | None) -> Check | None:
    """The check with this id, if this server process knows it."""
    return _registry().get(check_id) if check_id else None
