"""What a crash looks like in a real browser (Playwright driving Debian's chromium):

- the embedded judge's worker dies of SIGSEGV mid-run (its test hook, once): the Score page shows one
  red line naming it and what to do, the app stays up, what was judged is stored, and Start does
  the rest with a fresh worker (the real model);
- the app's server is SIGKILLed mid-run: the store checks ok, the run is listed as crashed once a
  server is back, and Start does only the rest;
- two browser sessions score the same dataset at once: nothing is lost or stored twice.

Screenshots go to tests/artifacts/.
"""

from __future__ import annotations

import re
import signal
import sqlite3
from pathlib import Path
from urllib.parse import urlencode

import pytest
from e2e_helpers import (CHROMIUM, CHROMIUM_ARGS, VIEWPORT, alert_after_work, goto_page, patient, screenshot,
                         streamlit_process, wait_idle)
from helpers import SHORT_TC, short_topical_chat, wait_while_progressing

import geval
from geval.judging.worker import FAULT

pytestmark = pytest.mark.e2e

MAIN = '[data-testid="stMain"]'


@pytest.fixture(scope="module")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is not installed (tests/run.sh installs Debian's chromium package)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


def tab_at(browser, url: str, heading: str = "Score"):
    tab = browser.new_context(viewport=VIEWPORT).new_page()
    patient(tab)
    tab.goto(url)
    tab.locator(f"{MAIN} h1").filter(has_text=heading).first.wait_for(timeout=120_000)
    wait_idle(tab)
    return tab


def at_most(tab, items: int) -> None:
    box = tab.get_by_label("At most (0 = no limit)", exact=True)
    box.fill(str(items))
    box.press("Enter")
    wait_idle(tab)


def ok_items(store: Path) -> int:
    if not store.exists():
        return 0
    with sqlite3.connect(store, timeout=60) as conn:
        return conn.execute("SELECT COUNT(DISTINCT item_id) FROM judgments WHERE status = 'ok'").fetchone()[0]


@pytest.mark.model
@pytest.mark.timeout(1200)
def test_a_judge_crash_is_a_red_line_the_app_lives_on_and_start_does_the_rest(browser, tmp_path):
    store = tmp_path / "store.sqlite"
    kept = geval.Store(store)
    geval.load_dataset(short_topical_chat(tmp_path), store=kept)  # asked of the real judge: prompts cut short
    kept.close()
    fault = {FAULT: f"judge:SIGSEGV:2:{tmp_path / 'crashed-once'}"}
    with streamlit_process(store, tmp_path / "streamlit.log", env=fault) as (url, process):
        tab = tab_at(browser, f"{url}/score?" + urlencode({"dataset": SHORT_TC}))
        at_most(tab, 5)
        tab.get_by_role("button", name="Start scoring").click()
        line = alert_after_work(tab, "error", "crashed", lambda: ok_items(store))
        screenshot(tab, "e2e_crash_judge_red_line")
        assert "the embedded judge crashed (SIGSEGV, a fault in native code" in line, line
        assert "python -m geval doctor" in line and "The 2 items judged before it are stored" in line, line
        assert process.poll() is None and ok_items(store) == 2  # the server lives; the two judged are stored
        goto_page(tab, "Data")  # the app answers
        goto_page(tab, "Score")
        at_most(tab, 5)
        tab.get_by_role("button", name="Start scoring").click()
        done = alert_after_work(tab, "success", "5/5 items", lambda: ok_items(store))
        screenshot(tab, "e2e_crash_judge_resumed")
        assert "2 cached, 3 judge calls, 0 failed" in done, done
        assert ok_items(store) == 5


@pytest.mark.timeout(1800)  # a guard against a hang: each wait fails sooner when the run stops moving
def test_a_server_killed_mid_run_leaves_a_sound_store_and_start_does_only_the_rest(browser, tmp_path, stub):
    stub.configure("logprobs", delay=1.0, hashed=True)
    store = tmp_path / "store.sqlite"
    judge = {"backend": "openai", "model": "stub-model", "base_url": stub.url, "mode": "logprobs"}
    with streamlit_process(store, tmp_path / "streamlit.log") as (url, process):
        tab = tab_at(browser, f"{url}/score?" + urlencode(judge))
        at_most(tab, 12)
        parallel = tab.get_by_label("Parallel requests", exact=True)
        parallel.fill("1")
        parallel.press("Enter")
        wait_idle(tab)
        tab.get_by_role("button", name="Start scoring").click()
        wait_while_progressing(lambda: ok_items(store) >= 3, lambda: stub.count, "3 items stored")
        process.send_signal(signal.SIGKILL)
        process.wait()
    with sqlite3.connect(store) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    stored = ok_items(store)
    assert 3 <= stored < 12
    with streamlit_process(store, tmp_path / "streamlit.log") as (url, _):
        tab = tab_at(browser, f"{url}/score?" + urlencode(judge))
        tab.get_by_text("Runs on this dataset").click()
        tab.get_by_text(re.compile(r"crashed: the run's process ended before it finished")).wait_for(timeout=30_000)
        at_most(tab, 12)
        asked = stub.count
        tab.get_by_role("button", name="Start scoring").click()
        done = alert_after_work(tab, "success", "12/12 items", lambda: stub.count)
        screenshot(tab, "e2e_crash_server_resumed")
        assert f"{stored} cached, {12 - stored} judge calls" in done, done
        assert stub.count - asked == 12 - stored


@pytest.mark.timeout(1800)
def test_two_sessions_scoring_the_same_dataset_at_once_lose_nothing(browser, tmp_path, stub):
    stub.configure("logprobs", delay=0.2, hashed=True)
    store = tmp_path / "store.sqlite"
    judge = {"backend": "openai", "model": "stub-model", "base_url": stub.url, "mode": "logprobs"}
    with streamlit_process(store, tmp_path / "streamlit.log") as (url, _):
        tabs = [tab_at(browser, f"{url}/score?" + urlencode(judge)) for _ in range(2)]
        for tab in tabs:
            at_most(tab, 30)
        for tab in tabs:
            tab.get_by_role("button", name="Start scoring").click()
        lines = [alert_after_work(tab, "success", "30/30 items", lambda: stub.count) for tab in tabs]
        screenshot(tabs[1], "e2e_two_sessions_done")
    with sqlite3.connect(store) as conn:
        rows = conn.execute("SELECT item_id, COUNT(*) FROM judgments GROUP BY item_id, aspect, template_version")
        counts = [count for _, count in rows.fetchall()]
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert len(counts) == 30 and set(counts) == {1}, lines  # every item once
    assert ok_items(store) == 30
