"""The embedded judge's model in a real browser (Playwright driving Debian's chromium) with the real
model: a run of two templates loads it once, shows "Loading the model (about N s)" with its own bar
while it loads and never a server's "cannot be reached" message, and "Check the judge" after it
finds it loaded. Loads are counted by the worker processes (GEVAL_WORKER_LOADS). Photographs go to
tests/artifacts/. Run: python3 -m pytest tests/test_e2e_embedded.py -q -x -s
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from urllib.parse import urlencode

import pytest
from e2e_helpers import (
    CHROMIUM,
    CHROMIUM_ARGS,
    VIEWPORT,
    counters,
    main_text,
    multiselect_add,
    patient,
    screenshot,
    streamlit_server,
    wait_for_work,
    wait_idle,
)
from helpers import SHORT_TC, STALL, short_topical_chat

import geval
from geval.judging import worker as workers

pytestmark = [pytest.mark.e2e, pytest.mark.model, pytest.mark.timeout(1800)]

MAIN = '[data-testid="stMain"]'
SIDEBAR = '[data-testid="stSidebar"]'
ITEMS = 2
TEMPLATES = [geval.Template.load(name).label for name in ("topicalchat-naturalness", "topicalchat-coherence")]
SERVER_WORDS = re.compile(r"cannot be reached|No answer from the judge")


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    """The app with a fresh store, its workers counting the models they build; and a browser tab."""
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is not installed (tests/run.sh installs Debian's chromium package)")
    from playwright.sync_api import sync_playwright

    folder = tmp_path_factory.mktemp("e2e_embedded")
    loads = folder / "loads.txt"
    store = geval.Store(folder / "store.sqlite")
    geval.load_dataset(short_topical_chat(folder), store=store)  # asked of the real judge: prompts cut short
    store.close()
    with streamlit_server(folder / "store.sqlite", folder / "streamlit.log", env={workers.LOADS: str(loads)}) as url, \
            sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        tab = browser.new_context(viewport=VIEWPORT).new_page()
        patient(tab)
        yield {"url": url, "tab": tab, "loads": loads}
        browser.close()


def _finished_runs(text: str) -> list[str]:
    return re.findall(r"Run \d+ \((\S+)\): \d+/\d+ items", text)


def test_a_run_of_two_templates_shows_the_model_loading_once_and_nothing_of_a_server(app):
    tab = app["tab"]
    tab.goto(f"{app['url']}/score?" + urlencode({"dataset": SHORT_TC}))
    tab.locator(f"{MAIN} h1").filter(has_text="Score").first.wait_for(timeout=300_000)
    wait_idle(tab)
    multiselect_add(tab, "Templates", f"{TEMPLATES[1]} (prompts/)")
    limit = tab.get_by_label("At most (0 = no limit)")
    limit.fill(str(ITEMS))
    limit.press("Enter")
    wait_idle(tab)
    for _ in range(120):  # the rerun with the limit: on a busy machine the page was read before it came
        planned = main_text(tab)
        if f"{TEMPLATES[0]}: {ITEMS} items:" in planned:
            break
        tab.wait_for_timeout(250)
    assert all(f"{template}: {ITEMS} items: 0 cached, {ITEMS} judge calls" in planned for template in TEMPLATES), planned
    tab.get_by_role("button", name="Start scoring").click()

    loading, server_words, photographed = [], [], False
    moved, seen = time.monotonic(), None
    while True:  # what the page says, four times a second, until both runs ended (or stopped moving)
        text = tab.locator(MAIN).inner_text()
        if counters(tab) != seen:
            moved, seen = time.monotonic(), counters(tab)
        assert time.monotonic() - moved < STALL, f"the runs made no progress for {STALL:.0f} s: {text[-2000:]}"
        bars = tab.locator(f'{MAIN} [data-testid="stProgress"]').all_inner_texts()
        loading += [bar for bar in bars if "Loading the model" in bar]
        server_words += SERVER_WORDS.findall(text)
        if loading and not photographed:
            screenshot(tab, "e2e_embedded_loading")
            photographed = True
        if len(_finished_runs(text)) == len(TEMPLATES):
            break
        tab.wait_for_timeout(250)
    wait_idle(tab)
    text = main_text(tab)
    screenshot(tab, "e2e_embedded_two_templates")
    assert _finished_runs(text) == TEMPLATES, text
    assert not server_words, server_words
    assert loading and re.search(r"Loading the model \(about \d+ s\): \d+s so far, ETA (\d|\?)", loading[0]), loading
    assert all(bar.startswith(f"{TEMPLATES[0]} (template 1 of 2): Loading") for bar in loading)  # not for the 2nd
    assert workers.loads(app["loads"], "judge") == 1  # one model load for the run of two templates
    assert tab.locator(f'{MAIN} [data-testid="stAlertContentError"]').count() == 0
    # the plan of the next item rests on the pace of the run's judgments, not on the load's measurement
    limit = tab.get_by_label("At most (0 = no limit)")
    limit.fill(str(ITEMS + 1))
    limit.press("Enter")
    wait_idle(tab)
    assert re.search(rf"measured on this machine over {ITEMS} judgments \d+ s ago", main_text(tab)), main_text(tab)


def test_check_the_judge_after_the_run_finds_the_model_loaded_and_says_the_time_of_a_judgment(app):
    tab = app["tab"]
    tab.locator(SIDEBAR).get_by_role("button", name="Check the judge").click()
    verdict = tab.locator(f'{SIDEBAR} [data-testid="stAlertContentSuccess"]')
    wait_for_work(tab, verdict, lambda: re.sub(r"\d+ s so far", "", tab.locator(SIDEBAR).inner_text()),
                  what="the check's verdict")  # the step it is on moves
    wait_idle(tab)
    screenshot(tab, "e2e_embedded_checked")
    assert re.fullmatch(r"The embedded judge works: [\d.]+ s per judgment here \(its test judgment\); prefill [\d.]+ "
                        r"tokens/s, decode [\d.]+ tokens/s\.", verdict.inner_text().splitlines()[-1]), verdict.inner_text()
    assert workers.loads(app["loads"], "judge") == 1  # still the model the run loaded
