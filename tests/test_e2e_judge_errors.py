"""How the judge errs, in a real browser (Playwright driving Debian's chromium): the bundled Topical-Chat
sample scored by the scripted judge shows, on the Agreement page, its sentences, the Bland-Altman plot
and the use of the scale; the shared MT-Bench folder with GPT-4o's labels imported shows the confusion
matrix and each label's precision and recall, and says that a constant answer's kappa is 0.
Photographs go to tests/artifacts/e2e_errs_*.png (the section, then each figure)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from e2e_helpers import ARTIFACTS, CHROMIUM, first_page, goto_page, main_text, screenshot, select_option, \
    streamlit_process, wait_idle
from helpers import REPO, scripted

import geval
from geval.data.dataset import SHARED_DATA_DIR

pytestmark = pytest.mark.e2e

MAIN = '[data-testid="stMain"]'


def _titled(tab, title: str):
    """A plotly figure whose title holds `title` (a locator relative to whatever holds it)."""
    return tab.locator(".js-plotly-plot").filter(has=tab.locator(".gtitle", has_text=title))


def _figure(tab, title: str):
    """The plotly figure of the main section whose title holds `title`, once drawn."""
    figure = tab.locator(MAIN).locator(_titled(tab, title)).first
    figure.wait_for(timeout=120_000)
    figure.scroll_into_view_if_needed()
    return figure


def _shot(locator, name: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    locator.screenshot(path=str(path))
    return path


def _section(tab) -> str:
    """The Agreement page's "How the judge errs", once its sentences are drawn."""
    heading = tab.locator(f"{MAIN} h3").filter(has_text="How the judge errs").first
    heading.wait_for(timeout=120_000)
    heading.scroll_into_view_if_needed()
    tab.locator(f"{MAIN} li").filter(has_text="against the people's majority").first.wait_for(timeout=120_000)
    wait_idle(tab, timeout=120_000)
    return main_text(tab).split("How the judge errs", 1)[1]


def test_the_agreement_page_shows_the_bland_altman_plot_and_the_confusion_matrix(tmp_path):
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is not installed (tests/run.sh installs Debian's chromium package)")
    folder = SHARED_DATA_DIR / "alttest" / "mtbench"
    if not folder.is_dir():
        pytest.skip(f"{folder} is not there")
    from playwright.sync_api import sync_playwright

    store_path = tmp_path / "store.sqlite"
    store = geval.Store(store_path)
    sample = geval.load_dataset(REPO / "data" / "topicalchat_usr_sample.json", store=store)
    geval.score(store, sample.items, geval.Template.load("topicalchat-naturalness"), scripted(), sample.name)
    dataset = geval.load_dataset(folder, store=store)
    geval.alttest.import_judge(store, dataset.name, folder / "llm_annotations.json", "gpt-4o")
    store.close()
    with streamlit_process(store_path, tmp_path / "streamlit.log") as (url, _), sync_playwright() as playwright:
        browser, tab = first_page(playwright, url)

        # scores: the bundled sample, 60 responses in 10 dialogues (the app opens on MT-Bench, the store's newest)
        select_option(tab, "Dataset", re.compile(r"^\s*topicalchat_usr_sample\b"))
        tab.locator(f"{MAIN} h3").filter(has_text="topicalchat_usr_sample").first.wait_for(timeout=120_000)
        goto_page(tab, "Agreement")
        text = _section(tab)
        for said in ("Weighted kappa (quadratic) of the judge's scores, rounded to the scale's points,",
                     "It spreads its scores", "Bland-Altman limits of agreement",
                     "Its error (judge − people) against the response's length in words: Spearman"):
            assert said in text, (said, text[:3000])
        assert re.search(r"(Harsh|Lenient): it scores \d\.\d{3} \[\d\.\d{3}, \d\.\d{3}\] points|Neither harsh", text)
        _shot(tab.locator(f"{MAIN} [data-testid='stMarkdownContainer']").filter(
            has_text="against the people's majority").first, "e2e_errs_1_sentences_scores")
        bland_altman = _figure(tab, "Bland-Altman")
        assert bland_altman.bounding_box()["height"] > 300
        assert bland_altman.locator(".point").count() == 60  # a point per response
        _shot(bland_altman, "e2e_errs_2_bland_altman")
        _shot(_figure(tab, "use of the scale"), "e2e_errs_3_scale_use")

        # labels: MT-Bench with GPT-4o's labels
        goto_page(tab, "Data")
        select_option(tab, "Dataset", re.compile(r"^\s*mtbench\b"))
        tab.locator(f"{MAIN} h3").filter(has_text="mtbench").first.wait_for(timeout=120_000)
        goto_page(tab, "Agreement")
        text = _section(tab)
        assert re.search(r"Cohen's kappa of the judge's labels against the people's majority: 0\.476 \[0\.\d{3}, "
                         r"0\.\d{3}\], moderate", text), text[:3000]
        assert "with a kappa of 0.000: kappa counts only agreement beyond chance, so a constant answer gets 0" in text
        _shot(tab.locator(f"{MAIN} [data-testid='stMarkdownContainer']").filter(
            has_text="against the people's majority").first, "e2e_errs_4_sentences_labels")
        confusion = _figure(tab, "the judge against the people")
        cells = [t.strip() for t in confusion.locator("text").all_text_contents()]
        for count in ("26", "29", "12"):  # the diagonal's model_a and model_b, and ties the judge calls model_a
            assert count in cells, cells
        _shot(confusion, "e2e_errs_5_confusion_matrix")
        beside = tab.locator(f"{MAIN} [data-testid='stHorizontalBlock']").filter(
            has=_titled(tab, "the judge against the people")).last
        assert "kappa [95% CI]" in text and "precision" in text  # the kappa table beside it, each label's below
        _shot(beside, "e2e_errs_6_confusion_and_kappa")
        screenshot(tab, "e2e_errs_7_agreement_page_mtbench")
        browser.close()
