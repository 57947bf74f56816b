"""A judge imported beside one scored on the same items, in a real browser (Playwright driving
Debian's chromium): the Agreement page then compares both by default, and so does the report it
builds (downloaded as the user would, then opened: its figures drawn by the plotly.js it inlines).
First, the Data page's CSV of the items with their ids and people's scores, downloaded. Once, Agreement opened on the imported judge alone and the
report said "No two template versions or judges of this report are compared". Photographs go to
tests/artifacts/e2e_import_judge_*.png."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest
from e2e_helpers import ARTIFACTS, CHROMIUM, download, first_page, goto_page, screenshot, streamlit_process, wait_idle
from helpers import scripted
from test_e2e_alttest import _import
from test_e2e_label import MAIN

import geval

pytestmark = pytest.mark.e2e

SCORED = 36


def test_a_judge_imported_beside_a_scored_one_is_compared_with_it_on_the_page_and_in_the_report(tmp_path):
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is not installed (tests/run.sh installs Debian's chromium package)")
    from playwright.sync_api import sync_playwright

    store_path = tmp_path / "store.sqlite"
    store = geval.Store(store_path)
    dataset = geval.load_dataset("topicalchat_usr_sample", store=store)
    items = dataset.items[:SCORED + 4]
    geval.score(store, items[:SCORED], geval.Template.load("topicalchat-naturalness"), scripted(), dataset.name)
    embedded = store.combos(dataset.name)["label"].iloc[0]
    store.close()
    elsewhere = tmp_path / "gpt-x.csv"
    elsewhere.write_text("item_id,natural\n" + "".join(f"{item.id},{1 + n % 3}\n" for n, item in enumerate(items)))
    with streamlit_process(store_path, tmp_path / "streamlit.log") as (url, _), sync_playwright() as playwright:
        browser, tab = first_page(playwright, url)
        # the Data page's CSV of the items with their ids and people's scores: its bytes, as the browser saves them
        got = download(tab, tab.get_by_role("button", name="Items and people's scores as CSV"))
        exported = pd.read_csv(got.path())
        assert got.suggested_filename == "topicalchat_usr_sample-items.csv"
        assert exported["id"].tolist() == [item.id for item in dataset.items]
        assert {"Natural", "Natural [#1]", "Natural [#2]", "Natural [#3]"} <= set(exported.columns)
        first = dataset.items[0]
        assert exported.loc[0, "Natural"] == pytest.approx(first.human_mean("Natural"))
        assert exported.loc[0, "Natural [#2]"] == first.ratings("Natural")["#2"]
        _import(tab, "A judge's scores", elsewhere, "Judge name", "gpt-x", "Import the judge's scores",
                f"gpt-x: {SCORED + 4} items imported (Natural)")
        goto_page(tab, "Agreement")
        tab.locator(f'{MAIN} [data-testid="stDataFrame"]').first.wait_for()
        wait_idle(tab)
        menu = tab.locator('[data-testid="stMultiSelect"]').filter(has_text="Template versions and judges").first
        chips = [menu.get_by_role("button").nth(i).get_attribute("aria-label") or ""
                 for i in range(menu.get_by_role("button").count())]
        assert [chip for chip in chips if chip.startswith("Remove ")] == [
            "Remove gpt-x (imported from gpt-x.csv)", f"Remove {embedded}"], chips
        screenshot(tab, "e2e_import_judge_1_agreement")

        tab.get_by_role("button", name="Build the HTML report").click()
        button = tab.get_by_role("button", name="Download the HTML report")
        button.wait_for(timeout=300_000)
        saved = tmp_path / "report.html"
        download(tab, button).save_as(saved)
        page = saved.read_text(encoding="utf-8")
        # the report as its reader opens it: every figure drawn by the plotly.js it inlines (its cartesian bundle)
        reader = browser.new_context(viewport={"width": 1200, "height": 900}).new_page()
        errors = []
        reader.on("pageerror", lambda error: errors.append(str(error)))
        reader.goto(saved.as_uri())
        reader.evaluate("() => document.querySelectorAll('details').forEach(d => { d.open = true; })")  # drawn as opened
        figures = reader.locator(".plotly-graph-div")
        figures.first.locator(".main-svg").first.wait_for()
        reader.wait_for_function("() => [...document.querySelectorAll('.plotly-graph-div')]"
                                 ".every(d => d.querySelector('.main-svg'))")
        drawn = figures.count()
        figures.first.screenshot(path=str(ARTIFACTS / "e2e_import_judge_2_report_figure.png"))
        browser.close()
    assert not errors and drawn >= 4, (errors, drawn)
    assert "plotly.js (cartesian - minified)" in page and len(page.encode()) < 2_500_000
    assert "No two template versions or judges of this report are compared" not in page
    compared = page[page.index("Template versions and judges compared"):]
    assert "gpt-x" in compared and re.search(r"naturalness@[0-9a-f]{12}", compared), compared[:2000]
