"""End to end in a real browser: `streamlit run app.py`, driven in Debian's chromium with Playwright.

The tests below are the steps of one user story and share one server, one fresh store and one
browser tab, so they run in file order: load the Topical-Chat sample, edit the prompt, score five
items with the real embedded judge, inspect the worst disagreement, read the agreement, then make
sure a broken upload and a hostile CSV cannot break (or script) the app.

Every page is photographed (full height) into tests/artifacts/; the README's shots are copied to
docs/screenshots/. Run: python3 -m pytest tests/test_e2e_browser.py -q -x -s
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from e2e_helpers import (
    CHROMIUM,
    CHROMIUM_ARGS,
    VIEWPORT,
    alert_after_work,
    dataset_uploader,
    goto_page,
    main_text,
    multiselect_add,
    patient,
    screenshot,
    select_option,
    selected,
    streamlit_server,
    wait_idle,
)

from geval.analysis.disagreement import normalized

pytestmark = pytest.mark.e2e

DATASET = "topicalchat_usr_sample"
LABEL = re.compile(r"topicalchat-naturalness@[0-9a-f]{12}")
TEMPLATE_AREA = '[data-testid="stTextArea"]'
CHARTS = '[data-testid="stPlotlyChart"], .js-plotly-plot, [data-testid="stVegaLiteChart"], ' \
         '[data-testid="stArrowVegaLiteChart"]'
SCORED = 5
XSS = "<script>window.__xss=1</script><b>bold</b>"


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("e2e")


@pytest.fixture(scope="module")
def server(workdir):
    """The app on a free local port, with a fresh store; stopped after the module."""
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is not installed (tests/run.sh installs Debian's chromium package)")
    with streamlit_server(workdir / "e2e.sqlite", workdir / "streamlit.log") as url:
        yield {"url": url, "store": workdir / "e2e.sqlite", "log": workdir / "streamlit.log"}


@pytest.fixture(scope="module")
def page(server):
    """One browser tab shared by the steps (one Streamlit session, like one user)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        tab = browser.new_page(viewport=VIEWPORT)
        patient(tab)
        tab.page_errors = []
        tab.on("pageerror", lambda error: tab.page_errors.append(str(error)))
        tab.goto(server["url"])
        try:
            yield tab
        finally:
            if tab.page_errors:
                print("\nJavaScript errors on the page:\n  " + "\n  ".join(tab.page_errors))
            browser.close()


def _metric(page, label: str) -> str:
    metric = page.locator('[data-testid="stMetric"]').filter(
        has=page.locator('[data-testid="stMetricLabel"]', has_text=re.compile(rf"^{re.escape(label)}$")))
    return metric.locator('[data-testid="stMetricValue"]').first.inner_text().strip()


def _template_area(page):
    return page.locator(TEMPLATE_AREA).filter(has_text="Template (TOML header").locator("textarea")


def _set_template(page, text: str) -> None:
    """Type into the template editor and commit it the way a user does (Ctrl+Enter)."""
    area = _template_area(page)
    area.fill(text)
    area.press("Control+Enter")
    wait_idle(page)


def _alert(page, kind: str, pattern, timeout: float = 60_000) -> str:
    """The text of the first `kind` alert (success, error, info, warning) matching `pattern`, once shown."""
    alert = page.locator(f'[data-testid="stMain"] [data-testid="stAlertContent{kind.capitalize()}"]').filter(
        has_text=pattern).first
    alert.wait_for(timeout=timeout)
    return alert.inner_text()


def _sidebar_template(page) -> str:
    return page.locator('[data-testid="stSidebarUserContent"]').inner_text()


# -- 1. Data ---------------------------------------------------------------------------------------------------------

def test_1_data_page_shows_the_bundled_topicalchat_sample(page):
    page.locator('[data-testid="stMain"] h1').filter(has_text="Data").wait_for(timeout=90_000)
    wait_idle(page)
    if not selected(page, "Dataset").startswith(DATASET):
        select_option(page, "Dataset", re.compile(rf"^\s*{DATASET}\b"))
    assert selected(page, "Dataset").startswith(DATASET)
    page.locator('[data-testid="stMain"] h3').filter(has_text=DATASET).wait_for()
    assert _metric(page, "Items") == "60"
    assert _metric(page, "Groups") == "10"
    assert _metric(page, "Systems") == "6"
    page.locator('[data-testid="stMain"] [data-testid="stDataFrame"]').wait_for()
    page.locator('[data-testid="stMain"] [data-testid="stDataFrame"] [role="gridcell"], '
                 '[data-testid="stMain"] [data-testid="stDataFrame"] td').filter(
        has_text="87864b135e8f854b").first.wait_for(state="attached")
    # one histogram per human aspect of the USR annotation
    page.locator('[data-testid="stMain"] .js-plotly-plot').nth(5).wait_for()
    assert "60 items" in page.locator('[data-testid="stSidebarUserContent"]').inner_text()
    screenshot(page, "01_data", publish_as="data")


# -- 2. Prompts ------------------------------------------------------------------------------------------------------

def test_2_prompts_edit_gives_a_new_version_and_bad_placeholders_are_caught(page):
    goto_page(page, "Prompts")
    area = _template_area(page)
    area.wait_for()
    original = area.input_value()
    assert original.startswith("+++") and "Naturalness (1-3) Is the response naturally written?" in original
    before = LABEL.search(_alert(page, "success", LABEL)).group(0)
    # the preview renders the prompt on the first item of the dataset
    page.locator('[data-testid="stMain"] [data-testid="stCode"]').filter(
        has_text="i recently met a girl who lives in that area").first.wait_for()

    edited = original.replace("Is the response naturally written?", "Is the response fluently and naturally written?")
    assert edited != original
    _set_template(page, edited)
    page.wait_for_function(
        """([sel, old]) => [...document.querySelectorAll(sel)].some(e => /topicalchat-naturalness@[0-9a-f]{12}/.test(
               e.innerText) && !e.innerText.includes(old))""",
        arg=['[data-testid="stMain"] [data-testid="stAlertContentSuccess"]', before],
    )
    after = LABEL.search(_alert(page, "success", LABEL)).group(0)
    assert after != before, "editing the criteria line must give a new template version"
    assert after in _sidebar_template(page), "the sidebar shows the editor's template version"
    screenshot(page, "02_prompts_edited")

    _set_template(page, edited + "\nAlso: {{nope}}\n")
    error = _alert(page, "error", "unknown placeholder")
    assert "{{nope}}" in error
    assert page.locator('[data-testid="stMain"] [data-testid="stAlertContentSuccess"]').filter(
        has_text=LABEL).count() == 0
    assert "Fix the template to see the preview" in main_text(page)
    screenshot(page, "02_prompts_error")

    _set_template(page, edited)
    assert LABEL.search(_alert(page, "success", LABEL)).group(0) == after
    assert page.locator('[data-testid="stMain"] [data-testid="stAlertContentError"]').count() == 0
    screenshot(page, "02_prompts", publish_as="prompts")


# -- 3. Score --------------------------------------------------------------------------------------------------------

def test_3_score_five_items_with_the_embedded_judge(page):
    # the first visit creates the embedded judge (on a fresh machine: assembles and verifies its weights)
    goto_page(page, "Score", timeout=300_000)
    assert LABEL.search(page.locator('[data-testid="stMultiSelect"]').filter(has_text="Templates").inner_text())
    limit = page.get_by_label("At most (0 = no limit)")
    limit.fill(str(SCORED))
    limit.press("Enter")
    _alert(page, "info", re.compile(rf"@[0-9a-f]{{12}}: {SCORED} items: 0 cached, {SCORED} judge calls"))
    wait_idle(page)
    page.get_by_role("button", name="Start scoring").click()
    # catch the progress bar while the judge loads or scores
    progress = page.locator('[data-testid="stMain"] [data-testid="stProgress"]').first
    try:
        progress.wait_for(timeout=30_000)
        screenshot(page, "03_score_running")
    except Exception as exc:  # the run may finish between two redraws; the result is what counts
        print(f"\n(no progress bar caught: {exc.__class__.__name__})")
    done = alert_after_work(page, "success", re.compile(r"Run \d+ \(\S+\): \d+/\d+ items"))
    assert re.search(rf"Run \d+ \(\S+\): {SCORED}/{SCORED} items, 0 cached, {SCORED} judge calls, 0 failed", done), done
    wait_idle(page)
    assert page.locator('[data-testid="stMain"] [data-testid="stAlertContentError"]').count() == 0
    screenshot(page, "03_score", publish_as="score")


# -- 4. Inspect ------------------------------------------------------------------------------------------------------

def _expected_disagreement(store_path: Path):
    """From the engine: the scored items with |judge - human| on 0-1, largest first."""
    import geval

    store = geval.Store(store_path)
    try:
        frame = store.judgments(DATASET)
        template = store.template(frame["template_version"].iloc[0])
        items = {item.id: item for item in store.items(DATASET)}
    finally:
        store.close()
    aspect = template.aspects[0]
    human = f"human:{aspect.human or aspect.name}"
    frame = frame[frame["aspect"] == aspect.key].copy()
    frame[human] = [items[i].human_mean(aspect.human or aspect.name) for i in frame["item_id"]]
    frame["gap"] = np.abs(normalized(frame["score"], aspect.min, aspect.max)
                          - normalized(frame[human], aspect.min, aspect.max))
    frame = frame.sort_values("gap", ascending=False)
    return frame, items


def _snippet(text: str) -> str:
    return " ".join(text.split())[:40]


def test_4_inspect_shows_the_largest_disagreement_first(page, server):
    goto_page(page, "Inspect")
    # The item renders after the judgments are joined with the human scores (slow on a loaded machine).
    page.locator('[data-testid="stMain"] h3').filter(has_text="Response").first.wait_for(timeout=120_000)
    wait_idle(page, timeout=120_000)
    frame, items = _expected_disagreement(server["store"])
    assert len(frame) == SCORED
    top_gap = frame["gap"].iloc[0]
    top = set(frame.loc[np.isclose(frame["gap"], top_gap), "item_id"])
    text = " ".join(main_text(page).split())
    found = {item_id: text.find(_snippet(items[item_id].response)) for item_id in frame["item_id"]}
    shown = {item_id: at for item_id, at in found.items() if at >= 0}
    assert shown, "no scored item's response is shown on the Inspect page"
    first = min(shown, key=shown.get)
    assert first in top, (f"first item shown is {first} (gap {frame.set_index('item_id')['gap'][first]:.3f}); "
                          f"the largest disagreement is {sorted(top)} (gap {top_gap:.3f})")
    assert first in text, f"the id of the item shown first ({first}) is not on the page"
    score = frame.set_index("item_id")["score"][first]
    assert any(f in text for f in {f"{score:.1f}", f"{score:.2f}", f"{score:.3f}", f"{score:g}"}), \
        f"the judge score {score} of {first} is not shown"
    charts = page.locator(f'[data-testid="stMain"] :is({CHARTS})')
    charts.first.wait_for()
    assert charts.first.is_visible()
    screenshot(page, "04_inspect", publish_as="inspect")


# -- 5. Agreement ----------------------------------------------------------------------------------------------------

def test_5_agreement_shows_pearson_and_a_chart(page):
    goto_page(page, "Agreement")
    # a Pearson row with a defined value (five items with varied human and judge scores); the table's
    # cells reach the DOM a moment after the grid is drawn
    row = re.compile(r"\bpearson\s+[-+]?[01]\.\d+", re.IGNORECASE)
    page.locator('[data-testid="stMain"] [data-testid="stDataFrame"] td').filter(
        has_text=re.compile(r"^pearson$", re.IGNORECASE)).first.wait_for(state="attached")
    assert row.search(main_text(page)), main_text(page)[-2000:]
    chart = page.locator('[data-testid="stMain"] :is([data-testid="stPlotlyChart"], .js-plotly-plot)').first
    chart.wait_for()
    assert chart.is_visible()
    assert chart.bounding_box()["height"] > 100
    screenshot(page, "05_agreement", publish_as="agreement")


# -- 6. A broken upload ----------------------------------------------------------------------------------------------

def _choose_upload(page) -> None:
    goto_page(page, "Data")
    page.locator('[data-testid="stRadio"]').filter(has_text="Source").get_by_text("Upload a file").click()
    dataset_uploader(page).wait_for(state="attached")
    wait_idle(page)


def test_6_malformed_upload_is_reported_and_the_app_keeps_working(page, workdir):
    broken = workdir / "broken.json"
    broken.write_text('{"broken": [1, 2')
    _choose_upload(page)
    dataset_uploader(page).set_input_files(str(broken))
    error = _alert(page, "error", "invalid JSON")
    assert "broken.json" in error, error
    wait_idle(page)
    screenshot(page, "06_upload_error")

    goto_page(page, "Prompts")
    assert LABEL.search(_alert(page, "success", LABEL))
    assert page.locator('[data-testid="stException"]').count() == 0


def test_6b_an_upload_over_the_size_limit_is_refused_with_a_message(page, workdir):
    """.streamlit/config.toml caps uploads at 50 MB; the browser refuses a bigger file and says so."""
    huge = workdir / "huge.jsonl"
    with huge.open("wb") as handle:
        handle.truncate(51 * 1024 * 1024)
    _choose_upload(page)
    dataset_uploader(page).set_input_files(str(huge))
    message = page.get_by_text(re.compile(r"File must be 50(\.0)? ?MB or smaller"))
    message.wait_for(timeout=60_000)
    assert "huge.jsonl" in main_text(page) and "CSV, JSON or JSONL, up to 50 MB" in main_text(page)
    screenshot(page, "06b_upload_too_large")
    goto_page(page, "Prompts")
    assert LABEL.search(_alert(page, "success", LABEL))
    assert page.locator('[data-testid="stException"]').count() == 0


# -- 7. A hostile CSV ------------------------------------------------------------------------------------------------

def test_7_html_in_an_uploaded_csv_is_shown_as_text_never_run(page, workdir):
    hostile = workdir / "xss.csv"
    hostile.write_text(
        "context,fact,response,overall\n"
        f'"A: hi there","a harmless fact","{XSS}",3\n'
        '"A: and then?","another fact","a plain answer",1\n'
    )
    _choose_upload(page)
    dataset_uploader(page).set_input_files(str(hostile))
    _alert(page, "info", "not a known layout")
    form = page.locator(".st-key-data_mapping")
    select_option(page, "Response or summary", "response", scope=form)
    select_option(page, "Context (dialogue so far)", "context", scope=form)
    select_option(page, "Grounding", "fact", scope=form)
    multiselect_add(page, "Human score columns", "overall", scope=form)
    screenshot(page, "07_xss_mapping")
    page.get_by_role("button", name="Load with this mapping").click()
    page.locator('[data-testid="stMain"] h3').filter(has_text="xss").wait_for()
    wait_idle(page)
    assert _metric(page, "Items") == "2"
    text = main_text(page)
    assert "<script>window.__xss=1</script>" in text, "the response's markup is not shown as text in the preview"
    assert page.evaluate("() => typeof window.__xss") == "undefined"
    assert page.locator('[data-testid="stMain"] b', has_text="bold").count() == 0
    screenshot(page, "07_xss_data")

    # the prompt preview renders the hostile response into the prompt: as text, too
    goto_page(page, "Prompts")
    page.locator('[data-testid="stMain"] [data-testid="stCode"]').first.wait_for()
    assert XSS in main_text(page)
    assert page.evaluate("() => typeof window.__xss") == "undefined"
    assert page.locator('[data-testid="stMain"] b', has_text="bold").count() == 0
    screenshot(page, "07_xss_prompts")


# -- 8. The editor's text is the session's template on every page ----------------------------------------------------

def test_8_template_edits_survive_a_page_change(page):
    goto_page(page, "Prompts")
    area = _template_area(page)
    edited = area.input_value().replace("Evaluation Steps:", "Evaluation steps, in order:")
    _set_template(page, edited)
    label = LABEL.search(_alert(page, "success", LABEL)).group(0)
    goto_page(page, "Score")
    sidebar = _sidebar_template(page)
    chosen = page.locator('[data-testid="stMultiSelect"]').filter(has_text="Templates").inner_text()
    goto_page(page, "Prompts")
    kept = _template_area(page).input_value() == edited
    screenshot(page, "08_prompts_after_page_change")
    assert label in sidebar, f"on the Score page the sidebar shows {LABEL.findall(sidebar)}, not the edited {label}"
    assert label in chosen, f"the Score page offers {LABEL.findall(chosen)}, not the edited {label}"
    assert kept, "the Prompts editor lost the edit after visiting another page"


# -- 9. Visiting the Data page keeps the dataset the user loaded ------------------------------------------------------

def test_9_revisiting_the_data_page_keeps_the_uploaded_dataset(page):
    """After step 7 the session's dataset is the uploaded xss.csv; looking at another page and coming back
    to Data must not swap it for the bundled default."""
    goto_page(page, "Prompts")
    assert "xss (table): 2 items" in page.locator('[data-testid="stSidebarUserContent"]').inner_text()
    goto_page(page, "Data")
    heading = page.locator('[data-testid="stMain"] h3').first.inner_text()
    screenshot(page, "09_data_revisited")
    goto_page(page, "Prompts")  # the sidebar is drawn before the page, so read it on the next run
    sidebar = page.locator('[data-testid="stSidebarUserContent"]').inner_text()
    assert heading == "xss", f"the Data page now shows {heading!r} instead of the uploaded xss.csv"
    assert "xss (table): 2 items" in sidebar, f"the session's dataset changed: {sidebar.splitlines()[2]!r}"


def test_10_a_nested_json_upload_is_mapped_with_a_dotted_path(page, workdir):
    """A UniEval-style file: the human scores sit in a nested object; the preview names its fields as dotted
    paths and `scores.naturalness` maps one onto an aspect."""
    from tests.test_loaders import NESTED

    nested = workdir / "unieval.json"
    nested.write_text(json.dumps(NESTED))
    _choose_upload(page)
    dataset_uploader(page).set_input_files(str(nested))
    _alert(page, "info", "not a known layout")
    assert "scores.naturalness" in main_text(page)  # the preview's columns
    form = page.locator(".st-key-data_mapping")
    select_option(page, "Response or summary", "system_output", scope=form)
    select_option(page, "Context (dialogue so far)", "src", scope=form)
    select_option(page, "Group (dialogue or document id)", "doc_id", scope=form)
    multiselect_add(page, "Human score columns", "scores.naturalness", scope=form)
    screenshot(page, "10_nested_mapping")
    page.get_by_role("button", name="Load with this mapping").click()
    page.locator('[data-testid="stMain"] h3').filter(has_text="unieval").wait_for()
    wait_idle(page)
    assert _metric(page, "Items") == "9"
    goto_page(page, "Prompts")  # the sidebar is drawn before the page, so read it on the next run
    assert "unieval (table): 9 items" in page.locator('[data-testid="stSidebarUserContent"]').inner_text()
    screenshot(page, "10_nested_loaded")
