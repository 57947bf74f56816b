"""A pairwise judge in a real browser (Playwright driving Debian's chromium): the shared MT-Bench pairs,
judged in both orders by the scripted judge with mtbench-pairwise, open on Inspect with the two
assistants' answers side by side and, below, both orders' answers and exact prompts side by side (the
Agreement page's pairwise section is tested under AppTest, tests/test_page_pairwise.py). Photographs go to
tests/artifacts/e2e_pairwise_*.png."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from e2e_helpers import ARTIFACTS, CHROMIUM, first_page, goto_page, main_text, screenshot, select_option, \
    streamlit_process, wait_idle
from helpers import scripted

import geval
from geval.data.dataset import SHARED_DATA_DIR

pytestmark = pytest.mark.e2e

MAIN = '[data-testid="stMain"]'


def _shot(locator, name: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    locator.screenshot(path=str(path))
    return path


@pytest.fixture
def judged(tmp_path) -> Path:
    """A store holding the shared MT-Bench pairs judged in both orders by the scripted judge; skips without
    Debian's chromium or the data."""
    folder = SHARED_DATA_DIR / "alttest" / "mtbench"
    for needed, what in ((Path(CHROMIUM), "Debian's chromium (tests/run.sh installs it)"), (folder, "MT-Bench")):
        if not needed.exists():
            pytest.skip(f"{needed} is not there: {what}")
    store = geval.Store(tmp_path / "store.sqlite")
    dataset = geval.load_dataset(folder, store=store)
    geval.score(store, dataset.items, geval.Template.load("mtbench-pairwise"), scripted(), dataset.name)
    store.close()
    return tmp_path / "store.sqlite"


def test_inspect_shows_a_pair_and_both_orders_side_by_side(judged, tmp_path):
    from playwright.sync_api import sync_playwright

    with streamlit_process(judged, tmp_path / "streamlit.log") as (url, _), sync_playwright() as playwright:
        browser, tab = first_page(playwright, url)
        select_option(tab, "Dataset", re.compile(r"^\s*mtbench\b"))
        tab.locator(f"{MAIN} h3").filter(has_text="mtbench").first.wait_for(timeout=120_000)

        goto_page(tab, "Inspect")
        tab.locator(f"{MAIN} h3").filter(has_text="Both orders").first.wait_for(timeout=120_000)
        wait_idle(tab, timeout=120_000)
        text = main_text(tab)
        for said in ("What both answer", "Response A · ", "Response B · ", "Order 1 (as given)", "Order 2 (swapped)",
                     "The judgment (both orders averaged, order 2 swapped back)"):
            assert said in text, (said, text[:3000])
        one, two = (tab.locator(f"{MAIN} .st-key-inspect_order_{order}") for order in (1, 2))
        for _ in range(40):  # read once the layout has settled: on a busy machine the columns were read mid-draw
            first, second = one.bounding_box(), two.bounding_box()
            if abs(first["y"] - second["y"]) < 5:
                break
            tab.wait_for_timeout(250)
        assert abs(first["y"] - second["y"]) < 5 and second["x"] > first["x"] + first["width"] - 5  # side by side
        a, b = (re.search(rf"Order {n} \((?:as given|swapped)\)\s*A = (.+?), B = (.+?)\n", text) for n in (1, 2))
        assert a and b and (a.group(1), a.group(2)) == (b.group(2), b.group(1))  # the sides swapped
        _shot(tab.locator(f"{MAIN} [data-testid='stHorizontalBlock']").filter(
            has=tab.locator(".st-key-inspect_pair_a")).first, "e2e_pairwise_1_sides")
        orders = tab.locator(f"{MAIN} [data-testid='stHorizontalBlock']").filter(
            has=tab.locator(".st-key-inspect_order_1")).first
        orders.scroll_into_view_if_needed()
        _shot(orders, "e2e_pairwise_2_both_orders")
        screenshot(tab, "e2e_pairwise_3_inspect_page")
        browser.close()
