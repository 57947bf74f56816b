"""Your own files reach the templates made for them, in a real browser (Playwright driving Debian's
chromium), with no hand edit: an `article,summary` CSV with no score is read at the summary level
and scored with summeval-consistency; a `context,response` CSV with no fact is labeled on an aspect
the Label page offers (10 items, by keyboard), scored with a generic template offered for it, and
the Agreement page compares the judge with those labels.

The judge is the OpenAI-compatible stub of stubs/openai_stub.py, started in this process and
chosen by the link the tests open. Photographs go to tests/artifacts/.
"""

from __future__ import annotations

import csv
import re
from pathlib import Path
from urllib.parse import urlencode

import pytest
from e2e_helpers import (alert_after_work, dataset_uploader, goto_page, label_settings, main_text, multiselect_add,
                         screenshot, select_option,
                         selected, wait_idle)
from test_e2e_label import go_on, labels_in, settled, shown, wait_until
from test_e2e_session import alert, browser, fresh_tab, open_url, server, sidebar, stub_judge  # noqa: F401 (fixtures)

import geval

pytestmark = pytest.mark.e2e

MAIN = '[data-testid="stMain"]'
LEVEL = re.compile(r"^Level$")  # the menu's label alone
ARTICLES = [
    ("The council voted on Tuesday to close the old bridge for repairs. Work starts in May and lasts a year.",
     "The old bridge closes for a year of repairs from May."),
    ("A storm cut power to 3,000 homes in the north of the county overnight; most were back by noon.",
     "A storm cut power to homes in the north."),
    ("The museum reopens on Friday after a two-year renovation, with a new wing for modern art.",
     "The museum closes on Friday for two years."),
    ("Local schools will start half an hour later from September, the education board said.",
     "Schools start later from September."),
]


def upload(tab, path: Path) -> None:
    """Choose "Upload a file" on the Data page and give it `path`; wait for the mapping."""
    tab.locator('[data-testid="stRadio"]').filter(has_text="Source").get_by_text("Upload a file").click()
    dataset_uploader(tab).set_input_files(str(path))
    alert(tab, "info", "not a known layout")
    alert(tab, "info", "is not loaded yet: below is")  # the dataset before it, with its import boxes, read as the file's
    wait_idle(tab)


def load_mapped(tab, name: str) -> None:
    tab.get_by_role("button", name="Load with this mapping").click()
    tab.locator(f"{MAIN} h3").filter(has_text=name).first.wait_for()
    wait_idle(tab)


def chosen_templates(tab) -> list[str]:
    """The template versions chosen in the Score page's menu (its chips, without where each comes from)."""
    chips = tab.locator('[data-testid="stMultiSelect"]').filter(has_text="Templates").first.get_by_role("button")
    names = [chips.nth(i).get_attribute("aria-label") or "" for i in range(chips.count())]
    return [re.sub(r"^Remove (\S+).*$", r"\1", name) for name in names if name.startswith("Remove ")]


def start_and_wait(tab, template: str, items: int) -> str:
    """Press Start scoring and wait for the run's green line on `template`; returns it."""
    tab.get_by_role("button", name="Start scoring").click()
    done = alert_after_work(tab, "success",
                            re.compile(rf"Run \d+ \({re.escape(template)}@[0-9a-f]{{12}}\): {items}/{items} items"))
    wait_idle(tab)
    return done


def test_an_article_summary_csv_is_read_as_summaries_and_scores_with_summeval_consistency(server, browser, stub,
                                                                                         tmp_path):
    stub.configure("logprobs", hashed=True, distribution={1: 0.1, 2: 0.1, 3: 0.2, 4: 0.3, 5: 0.3})
    table = tmp_path / "summaries.csv"
    with table.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows([("article", "summary"), *ARTICLES])
    tab = fresh_tab(browser)
    open_url(tab, f"{server['url']}/?" + urlencode(stub_judge(stub)), "Data")
    upload(tab, table)
    form = tab.locator(".st-key-data_mapping")
    assert selected(tab, LEVEL, scope=form) == "summary"
    text = main_text(tab)
    assert "The columns suggest summary: a source document column ('article') and no context" in text
    fitting = re.search(r"At the summary level, \d+ templates in prompts/ fit these rows: ([^\n]*)", text)
    assert fitting and "summeval-consistency" in fitting.group(1), text[-2000:]
    screenshot(tab, "e2e_own_1_summaries_mapping")
    load_mapped(tab, "summaries")
    assert "Read at level summary, inferred" in main_text(tab)

    # Label and Score open on a template written for summaries (once, Label opened on Topical-Chat's, listed as
    # fitting news summaries)
    goto_page(tab, "Label")
    settled(tab)
    opened = selected(tab, "Template", scope=label_settings(tab))
    assert opened.startswith("summeval-"), opened
    goto_page(tab, "Score")
    assert opened in chosen_templates(tab), chosen_templates(tab)
    assert tab.locator(f'{MAIN} [data-testid="stAlertContentError"]').count() == 0, main_text(tab)
    consistency = geval.Template.load("summeval-consistency").label
    multiselect_add(tab, "Templates", f"{consistency} (prompts/)")
    if not opened.startswith("summeval-consistency@"):  # a file's, or the editor's (it holds one for summaries)
        tab.get_by_role("button", name=re.compile(rf"^Remove {re.escape(opened)} \((prompts\/|the editor)\)$")).click()
        wait_idle(tab)
    tab.wait_for_function(
        """() => [...document.querySelectorAll('[data-testid="stAlertContentInfo"]')]
                 .some(e => /summeval-consistency@[0-9a-f]{12}: 4 items: 0 cached, 4 judge calls to make/.test(
                     e.innerText))""", timeout=60_000)
    assert tab.locator(f'{MAIN} [data-testid="stAlertContentError"]').count() == 0, main_text(tab)
    screenshot(tab, "e2e_own_2_summaries_score")
    start_and_wait(tab, "summeval-consistency", 4)
    screenshot(tab, "e2e_own_3_summaries_scored")
    store = geval.Store(server["store"])
    try:
        judged = store.judgments("summaries", geval.Template.load("summeval-consistency").version)
    finally:
        store.close()
    assert len(judged) == 4 and set(judged["status"]) == {"ok"}
    assert judged["prompt"].str.contains("Source Text:\nThe council voted").any()  # the article as its document
    tab.context.close()


def test_a_context_response_csv_is_labeled_scored_and_compared_with_no_hand_edit(server, browser, stub, tmp_path):
    stub.configure("logprobs", hashed=True)
    table = tmp_path / "mine.csv"
    with table.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["context", "response"])
        for i in range(16):
            writer.writerow([f"A: Have you been to the coast lately?\nB: Not since the spring, number {i}.\n"
                             f"A: I went last weekend and the water was warm {i}.",
                             ["That sounds lovely, was it busy?", "I do not like water.", "ok",
                              f"Warm in week {i}? I should go too."][i % 4]])
    tab = fresh_tab(browser)
    open_url(tab, f"{server['url']}/?" + urlencode(stub_judge(stub)), "Data")
    upload(tab, table)
    assert selected(tab, LEVEL, scope=tab.locator(".st-key-data_mapping")) == "turn"
    assert "response-naturalness" in main_text(tab)  # among the templates that fit at the turn level
    load_mapped(tab, "mine")

    # Label: the template menu offers templates that fit, and opens on one; 10 labels of Naturalness (on a file of
    # your own, the template's name for it), by keyboard
    goto_page(tab, "Label")
    opened = selected(tab, "Template", scope=label_settings(tab))
    assert opened.startswith("response-"), opened
    select_option(tab, "Template", re.compile(r"^\s*response-naturalness@[0-9a-f]{12}\s*$"))
    tab.locator(MAIN).get_by_text("0 labeled").first.wait_for()
    assert "no judge has scored these items yet" in main_text(tab)
    tab.locator(f"{MAIN} h1").first.click()  # the menu lets go of the keys: they rate again
    settled(tab)
    seen = []
    for index in range(10):
        item, before = shown(tab), len(labels_in(server["store"]))
        tab.keyboard.press(str(1 + index % 3))
        wait_until(tab, lambda: len(labels_in(server["store"])) == before + 1, f"label {before + 1} on {item}")
        wait_idle(tab)
        seen.append(item)
        if index == 2:
            screenshot(tab, "e2e_own_4_labeling")
        go_on(tab, item)
    store = geval.Store(server["store"])
    try:
        labels = store.labels("mine")
    finally:
        store.close()
    assert len(labels) == 10 and set(labels["aspect"]) == {"Naturalness"} and labels["item_id"].tolist() == seen

    # Score: opens on the one labeled with; the editor holds one that renders here, not Topical-Chat's (with a fact)
    goto_page(tab, "Score")
    naturalness = geval.Template.load("response-naturalness").label
    alert(tab, "info", re.compile(r"response-naturalness@[0-9a-f]{12}: 16 items: 0 cached, 16 judge calls"))
    assert chosen_templates(tab) == [naturalness], chosen_templates(tab)
    assert tab.locator(f'{MAIN} [data-testid="stAlertContentError"]').count() == 0, main_text(tab)
    assert "topicalchat-" not in sidebar(tab) and "cannot render" not in main_text(tab), sidebar(tab)
    screenshot(tab, "e2e_own_5_score")
    start_and_wait(tab, "response-naturalness", 16)

    # Agreement: the judge against your 10 labels
    goto_page(tab, "Agreement")
    tab.locator(f'{MAIN} [data-testid="stDataFrame"]').first.wait_for()
    wait_idle(tab)
    text = main_text(tab)
    assert "Compared with: your labels (Naturalness: 10 items labeled by you)" in text, text[:2000]
    assert re.search(r"naturalness\s+Naturalness\s+item\s+pearson\s+-?\d\.\d{3}", text), text[-3000:]
    screenshot(tab, "e2e_own_6_agreement")
    tab.context.close()
