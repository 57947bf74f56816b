"""Starting the app under streamlit.testing.v1.AppTest on a fresh store."""

from __future__ import annotations

import time
from pathlib import Path

from streamlit.testing.v1 import AppTest

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


def wait_for(at: AppTest, condition, timeout: float = 120.0) -> None:
    """Re-run the app until `condition(at)` holds (background jobs report through reruns)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        at.run()
        if condition(at):
            return
        time.sleep(0.5)
    raise AssertionError(f"condition not met within {timeout}s; page says:\n{texts(at)[-2000:]}")
