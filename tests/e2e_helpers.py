"""Helpers for the browser end-to-end test: start `streamlit run`, drive Streamlit widgets in chromium.

Streamlit reruns the script after every interaction, so every action here is followed by a wait
for something visible (or for the app to be idle), never by a fixed sleep alone. A wait for the end
of long work (a run, a search) follows its progress (`wait_for_work`): it fails when the work stops
moving, not when a clock that a busy machine exceeds runs out.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path

from helpers import wait_while_progressing

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "tests" / "artifacts"
SCREENSHOTS = ROOT / "docs" / "screenshots"
VIEWPORT = {"width": 1400, "height": 900}
LABEL_UNIT = '[data-testid="stMain"] [data-testid="label-unit"]'
#: How long a browser action (a click, a wait for something drawn) and a page's load may take: a busy
#: machine (load 20 and more on 2 cores) serves Streamlit's scripts slowly, the first load taking minutes.
ACTION_TIMEOUT, LOAD_TIMEOUT = 60_000, 300_000


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
            return response.read().decode().strip() == "ok"
    except OSError:
        return False


@contextmanager
def streamlit_server(store: Path, log: Path, timeout: float = 90.0, env: dict | None = None):
    """`streamlit run app.py` on a free local port with a fresh GEVAL_STORE; yields the base URL."""
    with streamlit_process(store, log, timeout, env) as (url, _):
        yield url


@contextmanager
def streamlit_process(store: Path, log: Path, timeout: float = 90.0, env: dict | None = None):
    """`streamlit run app.py` on a free local port with GEVAL_STORE `store` and `env` added to the
    environment; yields (base URL, its process), and ends the process (if it still runs) after."""
    port = free_port()
    env = {**os.environ, "GEVAL_STORE": str(store), "PYTHONUNBUFFERED": "1", **(env or {})}
    command = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.address", "127.0.0.1",
               "--server.port", str(port), "--server.headless", "true",
               "--browser.gatherUsageStats", "false"]
    with open(log, "ab") as out:
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + timeout
            while not _healthy(url):
                if process.poll() is not None:
                    raise RuntimeError(f"streamlit exited with {process.returncode}:\n{log.read_text()[-3000:]}")
                if time.monotonic() > deadline:
                    raise RuntimeError(f"streamlit did not answer /_stcore/health in {timeout:.0f}s:\n"
                                       f"{log.read_text()[-3000:]}")
                time.sleep(0.5)
            yield url, process
        finally:
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait(timeout=15)


def patient(tab):
    """`tab` with the suite's timeouts (ACTION_TIMEOUT for an action, LOAD_TIMEOUT for a page's load)."""
    tab.set_default_timeout(ACTION_TIMEOUT)
    tab.set_default_navigation_timeout(LOAD_TIMEOUT)
    return tab


def first_page(playwright, url: str):
    """Chromium on the app at `url`, once its first page (Data) is drawn: (browser, tab)."""
    browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    tab = browser.new_context(viewport=VIEWPORT).new_page()
    patient(tab)
    tab.goto(url)
    tab.locator('[data-testid="stMain"] h1').filter(has_text="Data").first.wait_for(timeout=90_000)
    wait_idle(tab)
    return browser, tab


#: What moves on a page while work goes on: "7/12 items", "round 2", "step 3".
COUNTER = re.compile(r"\b\d+/\d+\b|\b(?:round|step) \d+\b")


def counters(page) -> list[str]:
    """The counts of the work going on that the main section shows ("7/12 items", "round 2"); [] while
    the page cannot be read (it is being redrawn)."""
    try:
        return COUNTER.findall(page.locator('[data-testid="stMain"]').inner_text(timeout=10_000))
    except Exception:  # Playwright's timeout or a page being replaced: no reading this time
        return []


def wait_for_work(page, target, *measures: Callable[[], object], what: str = "", stall: float | None = None) -> None:
    """Wait until `target` (a locator) is shown, for as long as the work moves: the page's counters
    and each of `measures` (the stub's calls, the store's judgments); fail when none has changed for
    `stall` seconds (tests/helpers.py STALL), however long the work takes in all."""
    wait_while_progressing(lambda: target.count() > 0 and target.first.is_visible(),
                           lambda: (counters(page), *(measure() for measure in measures)), what or str(target), stall)


def alert_after_work(page, kind: str, pattern, *measures: Callable[[], object], scope: str = '[data-testid="stMain"]'
                     ) -> str:
    """The text of the first `kind` alert (success, error, info, warning) in `scope` matching `pattern`,
    once the work going on has led to it (`wait_for_work`, with `measures`)."""
    found = page.locator(f'{scope} [data-testid="stAlertContent{kind.capitalize()}"]').filter(has_text=pattern).first
    wait_for_work(page, found, *measures, what=f"the {kind} line {pattern!r}")
    return found.inner_text()


def dataset_uploader(scope):
    """The Data page's file input for a dataset (not the judge's or labels' imports below it)."""
    return scope.locator('.st-key-data_upload [data-testid="stFileUploaderDropzoneInput"]')


def wait_idle(page, timeout: float = 60_000, settle: float = 0.4) -> None:
    """Wait until Streamlit has finished the current script run (no 'Running…' status, no stale elements)."""
    page.wait_for_timeout(settle * 1000)
    page.wait_for_function(
        """() => {
            const status = document.querySelector('[data-testid="stStatusWidget"]');
            if (status && /Running|Connecting/i.test(status.innerText)) return false;
            return !document.querySelector('[data-stale="true"]');
        }""",
        timeout=timeout,
    )


def download(page, button, attempts: int = 3, wait: float = 30_000):
    """The file a click on the download `button` (a locator) gives, clicked again where none came: a
    download whose bytes Streamlit makes when clicked can be lost on a busy machine (once in a suite's
    run, none came in 60 s), and a person clicks again."""
    for attempt in range(attempts):
        try:
            with page.expect_download(timeout=wait) as got:
                button.click()
            return got.value
        except Exception:  # Playwright's timeout: no file this time
            if attempt == attempts - 1:
                raise
            wait_idle(page)


def item_shown(tab, other_than: str | None = None) -> str:
    """The id of the item the labeling unit shows, once painted (keys count from then), other than `other_than`."""
    try:
        tab.wait_for_function("""([unitSelector, previous]) => {
            const unit = document.querySelector(unitSelector);
            const item = unit && unit.getAttribute('data-shown');
            return item && item !== previous && unit.querySelector('[data-label-keys="ready"]');
        }""", arg=[LABEL_UNIT, other_than], timeout=90_000)
    except Exception as exc:
        parts = tab.evaluate("""() => [...document.querySelectorAll('[data-label-part], .gl-why, .gl-reason')]
            .map((e) => `${e.dataset.labelPart || e.className}: ${e.value ?? e.innerText}`).join('\\n')""")
        raise AssertionError(f"no item other than {other_than} shown; the unit says:\n{parts}") from exc
    return tab.locator(LABEL_UNIT).get_attribute("data-shown")


def wait_growing(page, counted, count: int, what: str, still: float = 30.0) -> float:
    """Wait until `counted()` reaches `count` (e.g. the labels in the store), failing when it has not grown
    for `still` seconds (the work stopped, however long it takes while it moves); the seconds waited."""
    start = last_change = time.monotonic()
    seen = -1
    while (now := counted()) < count:
        if now != seen:
            seen, last_change = now, time.monotonic()
        elif time.monotonic() - last_change > still:
            raise AssertionError(f"{now} {what} of {count}, none more for {still:.0f} s; the page says:\n"
                                 f"{main_text(page)[-1500:]}")
        page.wait_for_timeout(250)
    return time.monotonic() - start


def main_text(page) -> str:
    """The visible text of the main section, plus the cells of its data grids.

    st.dataframe draws on a canvas; its cells are mirrored in an accessibility table whose text
    is what a screen reader reads, so it counts as the table's visible text here."""
    visible = page.locator('[data-testid="stMain"]').inner_text()
    cells = page.evaluate(
        """() => [...document.querySelectorAll('[data-testid="stMain"] [data-testid="stDataFrame"] td,'
                 + '[data-testid="stMain"] [data-testid="stDataFrame"] th')].map(c => c.textContent).join('\\n')"""
    )
    return visible + "\n" + cells


def goto_page(page, title: str, heading: str | None = None, timeout: float = 60_000) -> None:
    """Click the sidebar navigation link `title` and wait for the page's heading."""
    page.locator('[data-testid="stSidebarNavLink"]').filter(has=page.get_by_text(title, exact=True)).first.click()
    page.locator('[data-testid="stMain"] h1').filter(has_text=heading or title).first.wait_for(timeout=timeout)
    wait_idle(page, timeout=timeout)


def _widget(page, scope, testid: str, label: str):
    """The Streamlit widget of type `testid` whose label contains `label`, within `scope` (default: the page)."""
    return (scope or page).locator(f'[data-testid="{testid}"]').filter(
        has=page.locator('[data-testid="stWidgetLabel"]', has_text=label)).first


def label_settings(page):
    """The Label page's settings ("What to label, and in which order", folded under a header naming them), opened."""
    settings = page.locator('[data-testid="stExpander"]').filter(has_text="What to label, and in which order").first
    if not settings.get_by_role("textbox", name="Annotator", exact=True).is_visible():
        settings.locator("summary").click()
    return settings


def selected(page, label: str, scope=None) -> str:
    """The value shown by the Streamlit selectbox labelled `label`."""
    return _widget(page, scope, "stSelectbox", label).get_by_role("combobox").input_value()


def _open_and_pick(page, widget, option: str | re.Pattern, typed: str | None, attempts: int = 3) -> None:
    """Open a selectbox or multiselect and click `option` (typing `typed` first filters the list). A list that
    closed before its option could be clicked (its widget redrawn by a run still going on a busy machine) is
    opened again, `attempts` times in all."""
    box = widget.get_by_role("combobox")
    if isinstance(option, str):
        option = re.compile(rf"^\s*{re.escape(option)}\s*$")
    choice = page.get_by_role("option").filter(has_text=option).first
    for attempt in range(1, attempts + 1):
        box.click()
        if typed:
            box.fill("")
            box.press_sequentially(typed, delay=20)
        try:
            choice.wait_for(timeout=3_000)
        except Exception:  # a focused multiselect may need the keyboard to open its list
            box.press("ArrowDown")
        try:
            choice.click(timeout=ACTION_TIMEOUT / attempts)
            return
        except Exception:
            if attempt == attempts:
                raise
            page.keyboard.press("Escape")
            wait_idle(page)


def select_option(page, label: str, option: str | re.Pattern, scope=None, typed: str | None = None) -> None:
    """Choose `option` (the option's text, or a pattern) in the Streamlit selectbox labelled `label`."""
    _open_and_pick(page, _widget(page, scope, "stSelectbox", label), option, typed)
    wait_idle(page)


def multiselect_add(page, label: str, option: str, scope=None) -> None:
    """Add `option` to the Streamlit multiselect labelled `label` (nothing to do if it is chosen already)."""
    widget = _widget(page, scope, "stMultiSelect", label)
    if widget.get_by_role("button", name=f"Remove {option}").count():
        return
    _open_and_pick(page, widget, option, typed=option)
    page.keyboard.press("Escape")
    widget.get_by_role("button", name=f"Remove {option}").wait_for(state="attached")
    wait_idle(page)


def screenshot(page, name: str, publish_as: str | None = None) -> Path:
    """A full-page screenshot into tests/artifacts/<name>.png (and, with GEVAL_PUBLISH_SCREENSHOTS=1 set,
    docs/screenshots/<publish_as>.png for the README: a test run never changes tracked files).

    Streamlit scrolls inside its main section, so `full_page=True` alone shows one viewport:
    the viewport is grown to the content's height for the shot, then restored.
    """
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    height = page.evaluate(
        """() => Math.max(...['stMain', 'stAppViewContainer', 'stMainBlockContainer', 'stSidebarContent']
              .map(id => document.querySelector(`[data-testid="${id}"]`))
              .filter(Boolean).map(e => e.scrollHeight), document.body.scrollHeight)"""
    )
    page.set_viewport_size({"width": VIEWPORT["width"], "height": min(max(int(height) + 40, VIEWPORT["height"]), 8000)})
    page.wait_for_timeout(800)  # plotly and the data grid redraw on resize
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    page.set_viewport_size(VIEWPORT)
    page.wait_for_timeout(300)
    if publish_as and os.environ.get("GEVAL_PUBLISH_SCREENSHOTS"):  # the README's shots: on purpose only
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, SCREENSHOTS / f"{publish_as}.png")
    return path
