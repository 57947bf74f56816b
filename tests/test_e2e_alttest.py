"""Can the judge replace an annotator? In a real browser (Playwright driving Debian's chromium): a
CSV of 30 responses with no human score is uploaded; a third annotator's labels (carol) and a judge
run elsewhere are imported on the Data page; ann labels 29 items on the Label page by keyboard only,
and bob's labels of the same 29 are imported; the Agreement page's alternative annotator test then
shows its table and says honestly that there are fewer than 30 items per annotator; one more label
each, by keyboard on the Label page under their own names, and it gives a verdict, the same as the
engine's; Inspect shows the imported judge's file instead of a prompt.

The app's judge is the scripted one, run on the server's store from the test (what the Score page
would do). Photographs go to tests/artifacts/e2e_alttest_*.png."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from e2e_helpers import (CHROMIUM, dataset_uploader, first_page, goto_page, label_settings, main_text, screenshot,
                         streamlit_process, wait_idle)
from helpers import scripted
from test_e2e_label import MAIN, go_on, label_by_keyboard, settled, shown
from test_page_label import write_unscored_table

import geval

pytestmark = pytest.mark.e2e

ITEMS = 30
FIRST = ITEMS - 1  # labels each before the test can decide: every annotator has 29 items


def _judge_mode(store: geval.Store) -> dict[str, int]:
    """The scripted judge's most probable score of each item (1-3)."""
    rows = store.judgments("mine", columns=("item_id", "distribution"))
    return {row.item_id: int(max((p, int(s)) for s, p in json.loads(row.distribution).items())[1])
            for row in rows.itertuples()}


def _labels(mode: dict[str, int], every: int) -> dict[str, int]:
    """An annotator who agrees with the judge but on every `every`-th item (one point higher, or 1)."""
    return {item: mode[item] % 3 + 1 if n % every == 0 else mode[item] for n, item in enumerate(sorted(mode))}


def _form(tab, title: str):
    return tab.locator('[data-testid="stForm"]').filter(has_text=title).first


def _import(tab, title: str, path: Path, field: str, value: str, button: str, done: str) -> None:
    """Import `path` with the Data page's form `title`, `field` set to `value`; wait for its line `done`."""
    form = _form(tab, title)
    form.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(str(path))
    form.get_by_text(path.name).first.wait_for()  # uploaded: on a busy machine a click before it submits no file
    form.get_by_role("textbox", name=field, exact=True).fill(value)
    form.get_by_role("button", name=button).click()
    tab.locator(MAIN).get_by_text(done).first.wait_for()
    wait_idle(tab)


def _as(tab, annotator: str) -> None:
    """Label as `annotator`: the name typed in the Label page's settings, then the focus given back to the keys."""
    field = label_settings(tab).get_by_role("textbox", name="Annotator", exact=True)
    field.fill(annotator)
    field.press("Enter")
    wait_idle(tab)
    tab.locator(f"{MAIN} h1").first.click()  # out of the text box: digits rate again
    settled(tab)


def _label(tab, store_path: Path, values: dict[str, int], count: int) -> None:
    """`count` labels by keyboard: the digit `values` gives the item shown, then Enter (but after the
    dataset's last item, which leaves nothing to go on to)."""
    for _ in range(count):
        item = label_by_keyboard(tab, store_path, values[shown(tab)])
        if f"· {ITEMS} labeled ·" not in main_text(tab):
            go_on(tab, item)


def _section(tab) -> str:
    """The Agreement page's alternative annotator test, once drawn."""
    tab.locator(MAIN).get_by_text("Can the judge replace an annotator?").first.wait_for()
    tab.locator(f'{MAIN} [data-testid="stDataFrame"]').nth(2).wait_for()
    wait_idle(tab)
    return main_text(tab).replace("\\", "")


def test_one_annotator_labels_two_are_imported_and_the_test_decides_at_30_items(tmp_path):
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is not installed (tests/run.sh installs Debian's chromium package)")
    from playwright.sync_api import sync_playwright

    store_path = tmp_path / "store.sqlite"
    table = write_unscored_table(tmp_path / "mine.csv", n=ITEMS, per_group=3)
    with streamlit_process(store_path, tmp_path / "streamlit.log") as (url, _), sync_playwright() as playwright:
        browser, tab = first_page(playwright, url)

        # a CSV with no human score
        tab.locator('[data-testid="stRadio"]').filter(has_text="Source").get_by_text("Upload a file").click()
        dataset_uploader(tab).set_input_files(str(table))  # not the first input: the imports' are there too
        tab.get_by_role("button", name="Load with this mapping").click()
        tab.locator(f"{MAIN} h3").filter(has_text="mine").first.wait_for()
        wait_idle(tab)
        store = geval.Store(store_path)
        geval.score(store, store.items("mine"), geval.Template.load("topicalchat-naturalness"), scripted(), "mine")
        mode = _judge_mode(store)
        ids = sorted(mode)
        store.close()

        # carol's labels of all 30 items and a judge run elsewhere, imported on the Data page
        carol = tmp_path / "carol.csv"
        carol.write_text("item_id,aspect,score\n" + "".join(f"{i},Natural,{s}\n" for i, s in _labels(mode, 5).items()))
        _import(tab, "An annotator's labels", carol, "Annotator", "carol", "Import the labels",
                "carol.csv: 30 labels imported (Natural; annotators carol).")
        elsewhere = tmp_path / "gpt-x.csv"
        elsewhere.write_text("item_id,natural\n" + "".join(f"{i},{1 + n % 3}\n" for n, i in enumerate(ids)))
        _import(tab, "A judge's scores", elsewhere, "Judge name", "gpt-x", "Import the judge's scores",
                "gpt-x: 30 items imported (Natural)")
        screenshot(tab, "e2e_alttest_1_imports")

        # ann labels 29 items by keyboard; bob's labels of the same 29 are imported
        goto_page(tab, "Label")
        settled(tab)
        assert "needs a second annotator's labels of Natural on the same items" in main_text(tab)  # carol's alone
        _as(tab, "ann")
        _label(tab, store_path, _labels(mode, 1_000), FIRST)
        store = geval.Store(store_path)
        anns = store.labels("mine", "ann")["item_id"]
        store.close()
        bob = tmp_path / "bob.csv"
        bob.write_text("item_id,aspect,score\n" + "".join(f"{i},Natural,{_labels(mode, 4)[i]}\n" for i in anns))
        goto_page(tab, "Data")
        _import(tab, "An annotator's labels", bob, "Annotator", "bob", "Import the labels",
                f"bob.csv: {FIRST} labels imported (Natural; annotators bob).")
        goto_page(tab, "Label")
        settled(tab)
        text = main_text(tab).replace("\\", "")
        # the plan is about the newest judge, gpt-x, whose scores follow the items' order, not their labels
        assert re.search(r"alternative annotator test on your labels, each annotator apart: no plan for this judge: the "
                         r"test passes it for an annotator only where the person's advantage over it .* is below "
                         r"epsilon 0\.15.* below 0\.15 for 0, and more items only make the test surer of it: improve the "
                         r"judge first", text), text[:3000]
        screenshot(tab, "e2e_alttest_2_label_page_plan")

        # fewer than 30 items per annotator: the table, and no verdict but what is missing
        goto_page(tab, "Agreement")
        text = _section(tab)
        assert "fewer than 30 items per annotator (most: 29): the t-test needs 30 or more; the paper recommends " \
               "labeling more items" in text, text[-4000:]
        for annotator in ("ann", "bob", "carol"):
            assert re.search(rf"{annotator}\s+29\s+", text), annotator
        assert "not tested (fewer than 30 items)" in text and "No verdict for " in text
        screenshot(tab, "e2e_alttest_3_no_verdict_below_30")

        # one more label each: 30 items per annotator, and a verdict (the engine's own)
        goto_page(tab, "Label")
        settled(tab)
        for annotator, every in (("ann", 1_000), ("bob", 4)):
            _as(tab, annotator)
            _label(tab, store_path, _labels(mode, every), 1)
        goto_page(tab, "Agreement")
        text = _section(tab)
        store = geval.Store(store_path)
        expected = geval.alttest.summary(geval.alttest.run(store, "mine")).iloc[0]
        store.close()
        assert expected["passed"] in ("yes", "no", "yes, as a constant does") and expected["verdict"] in text, \
            (expected["verdict"], text[-4000:])
        for annotator in ("ann", "bob", "carol"):
            assert re.search(rf"{annotator}\s+30\s+", text), annotator
        assert "gpt-x (imported from gpt-x.csv)" in text and "as imported" in text
        screenshot(tab, "e2e_alttest_4_verdict")

        # Inspect on the imported judge (the newest): its file instead of a prompt
        goto_page(tab, "Inspect")
        tab.locator(MAIN).get_by_text(re.compile(r"Imported from gpt-x\.csv \(line \d+\), SHA-256 [0-9a-f]{64}")).first \
            .wait_for()
        assert "The exact prompt sent to the judge" not in main_text(tab)
        screenshot(tab, "e2e_alttest_5_inspect_imported")
        browser.close()
