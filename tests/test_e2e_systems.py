"""Systems as people would score them, in a real browser (Playwright driving Debian's chromium): the
bundled SummEval sample (8 systems x 10 documents, the experts' scores) with the six LLMs of the
alternative annotator test's release imported as judges; the Agreement page's section draws the forest
plot of each system's three estimates, the table, a sentence per comparison and the judges by the labels
they save beside the advantage probability. Photograph: tests/artifacts/e2e_systems.png."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from e2e_helpers import CHROMIUM, first_page, main_text, screenshot, streamlit_process, wait_idle

import geval

pytestmark = pytest.mark.e2e
MAIN = '[data-testid="stMain"]'


def test_the_agreement_page_shows_each_systems_three_estimates(tmp_path, shared_file):
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is not installed (tests/run.sh installs Debian's chromium package)")
    from playwright.sync_api import sync_playwright

    llms = shared_file("alttest/summeval/llm_annotations.json")
    store_path = tmp_path / "store.sqlite"
    store = geval.Store(store_path)
    geval.load_dataset("summeval_sample", store=store)
    geval.alttest.import_judge(store, "summeval_sample", llms, only_known=True)
    store.close()
    with streamlit_process(store_path, tmp_path / "streamlit.log") as (url, _), sync_playwright() as playwright:
        browser, tab = first_page(playwright, url)
        tab.goto(f"{url}/agreement?dataset=summeval_sample")
        tab.locator(f"{MAIN} h3").filter(has_text="Systems as people would score them").first.wait_for(timeout=120_000)
        wait_idle(tab, timeout=180_000)
        tab.locator(f"{MAIN} .st-key-systems_sentences").first.wait_for(timeout=120_000)
        section = tab.locator(f"{MAIN} h3").filter(has_text="Systems as people would score them").first
        section.scroll_into_view_if_needed()
        text = main_text(tab)
        assert "by people's standard" in text
        assert "5 documents drawn at random, every system's item of each (5 labels per system)" in text
        assert "Each comparison's interval is 95% for that pair alone" in text
        assert "The combined estimate reads" in text
        worth = tab.locator(f'{MAIN} [data-testid="stDataFrame"]').filter(has_text="effective labels").first
        cells = worth.evaluate("e => [...e.querySelectorAll('th,td')].map(c => c.textContent)")
        assert "advantage probability" in cells and "judge in full" not in cells  # imported: it adds the aspect alone
        assert any(re.fullmatch(r"0\.\d\d", cell) for cell in cells)  # the advantage probability, read by judge
        forest = tab.locator(f'{MAIN} [data-testid="stPlotlyChart"]').filter(has_text="judge alone (biased)")
        forest.first.wait_for()
        screenshot(tab, "e2e_systems")
        browser.close()
