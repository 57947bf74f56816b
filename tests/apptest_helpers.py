"""Starting the app under streamlit.testing.v1.AppTest on a fresh store."""

from __future__ import annotations

import re
from pathlib import Path

from helpers import wait_while_progressing
from streamlit.testing.v1 import AppTest

#: A clock on the page ("12 s so far", "1.5 s"): it moves while nothing else does.
CLOCK = re.compile(r"\d+(?:\.\d+)? ?(?:s|min)\b")
APP = str(Path(__file__).resolve().parent.parent / "app.py")


def open_app(monkeypatch, tmp_path: Path, page: str | None = None, state: dict | None = None,
             params: dict | None = None) -> AppTest:
    """The app on a fresh store in `tmp_path`, run once, optionally switched to `page`,
    with `state` set in session state and `params` in the URL before the first run (a link)."""
    monkeypatch.setenv("GEVAL_STORE", str(tmp_path / "store.sqlite"))
    at = AppTest.from_file(APP, default_timeout=120)
    for key, value in (state or {}).items():
        at.session_state[key] = value
    at.query_params.update(params or {})
    at.run()
    if page:
        at.switch_page(page).run()
    return at


def texts(at: AppTest) -> str:
    """Every text, markdown, caption, code, alert and metric value on the page, joined."""
    parts = []
    for kind in ("text", "markdown", "caption", "code", "error", "warning", "info", "success"):
        parts += [str(element.value) for element in getattr(at, kind)]
    parts += [str(m.value) for m in at.metric]
    return "\n".join(parts)


def wait_for(at: AppTest, condition, stall: float | None = None) -> None:
    """Re-run the app until `condition(at)` holds (background jobs report through reruns), for as long
    as what the page says moves (its clocks aside): fail when it has not changed for `stall` seconds
    (tests/helpers.py STALL)."""
    def holds() -> bool:
        at.run()
        return bool(condition(at))
    wait_while_progressing(holds, lambda: CLOCK.sub("", texts(at)), "the page's condition", stall, poll=0.5)
