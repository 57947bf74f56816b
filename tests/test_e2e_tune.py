"""The Tune page in a real browser (Playwright driving Debian's chromium) with the real embedded
judge: a small search on the bundled Topical-Chat sample (its 10 dialogues cut short, 2 responses of each:
a search of at most 50 judge calls, not 60 minutes of a slow machine's) shows its progress, reports the winner
on the test dialogues it never saw, and, its winner the template to beat or its argmax read, offers nothing to save
(saving it replaced the comment of the user's version). Photographs go to tests/artifacts/."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlencode

import pytest
from e2e_helpers import (CHROMIUM, CHROMIUM_ARGS, VIEWPORT, main_text, patient, screenshot, streamlit_server,
                         wait_for_work, wait_idle)
from helpers import SHORT_TC, short_topical_chat

import geval

pytestmark = [pytest.mark.e2e, pytest.mark.model]

MAIN = '[data-testid="stMain"]'

def small_sample(store_path: Path) -> None:
    """The short Topical-Chat sample (`short_topical_chat`) with the first 2 responses of each of its 10 dialogues."""
    store = geval.Store(store_path)
    geval.load_dataset(short_topical_chat(store_path.parent, responses=2), store=store)
    store.close()


def test_a_small_search_with_the_real_judge_reports_held_out_agreement_and_has_no_new_wording_to_save(tmp_path):
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is not installed (tests/run.sh installs Debian's chromium package)")
    from playwright.sync_api import sync_playwright

    small_sample(tmp_path / "store.sqlite")
    with streamlit_server(tmp_path / "store.sqlite", tmp_path / "streamlit.log") as url, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        tab = browser.new_context(viewport=VIEWPORT).new_page()
        patient(tab)
        tab.goto(f"{url}/tune?" + urlencode({"dataset": SHORT_TC, "human": "Natural", "budget": 50}))
        tab.locator(f"{MAIN} h1").filter(has_text="Tune").first.wait_for(timeout=90_000)
        wait_idle(tab)
        variants = tab.locator(f'{MAIN} [data-testid="stMultiSelect"]')
        for name in ("other templates", "few-shot examples", "an ensemble"):  # the template to beat and its argmax read
            variants.get_by_role("button", name=re.compile(f"^Remove {name}")).click()
            wait_idle(tab)
        assert "At most 50 judge calls in all" in main_text(tab)
        tab.get_by_role("button", name="Start the search").click()
        wait_for_work(tab, tab.locator(MAIN).filter(has_text=re.compile(r"round 1 of at most \d+")))
        tab.get_by_role("button", name="Stop").wait_for(timeout=30_000)  # drawn just after the line
        screenshot(tab, "e2e_tune_progress")

        wait_for_work(tab, tab.locator(f"{MAIN} h3").filter(has_text="Result"), what="the search's result")
        wait_idle(tab)
        text = main_text(tab)
        screenshot(tab, "e2e_tune_result", publish_as="tune")
        assert "Split (seeded, by group): 5 groups to tune on, 5 to test on; 2 variants tried" in text
        held_out = tab.locator(f'{MAIN} [data-testid="stMetric"]').filter(has_text="Winner on the 5 test groups")
        assert re.search(r"-?\d\.\d{3}", held_out.inner_text()), held_out.inner_text()
        assert re.search(r"95% CI \[|no 95% interval", text)

        assert "there is no new wording to save; pick that version on the Score page." in text
        assert not tab.get_by_role("button", name="Save the winner as a template version").count()
        browser.close()

    store = geval.Store(tmp_path / "store.sqlite")
    assert (store.combos(SHORT_TC)["ok"] > 0).all()  # every variant's judgments are stored
    store.close()
