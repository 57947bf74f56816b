"""Your own labels in a real browser (Playwright driving Debian's chromium): a CSV with no human
score is uploaded, 12 of its items are labeled with the keyboard only (a digit, then Enter), with
a reload in the middle; the Agreement page then compares the judge with "you" on n = 12 and says
why there is no interval (4-item conversations: 12 labels fall in fewer than 10 groups); a 13th
label is in the store after the app is killed (SIGKILL) right after it. Then the labeling unit at a
keyboard's pace on a loaded machine: 40 labels 0.3 s apart, each on the item on screen as its digit
was pressed; a digit 0.1-0.5 s after Enter on the item on screen; keys not taken said until
dismissed; labels kept in the tab while the server does not answer, stored once it does.

The judge is the scripted one, run on the server's store from the test (what the Score page
would do). Photographs go to tests/artifacts/."""

from __future__ import annotations

import csv
import os
import re
import signal
import subprocess
import sys
import time
from contextlib import contextmanager, nullcontext
from pathlib import Path

import pytest
from e2e_helpers import (
    CHROMIUM,
    CHROMIUM_ARGS,
    VIEWPORT,
    dataset_uploader,
    goto_page,
    item_shown,
    main_text,
    patient,
    screenshot,
    streamlit_process,
    wait_growing,
    wait_idle,
)
from helpers import run_cli, scripted
from test_page_label import MAPPING, write_unscored_table

import geval

pytestmark = pytest.mark.e2e

MAIN = '[data-testid="stMain"]'
ITEM = re.compile(r"item ([0-9a-f]{16}) · ")


def labels_in(store_path: Path) -> list[str]:
    """The item ids labeled, as another process reads the store (committed writes only)."""
    store = geval.Store(store_path)
    try:
        return store.labels("mine")["item_id"].tolist()
    finally:
        store.close()


def settled(tab) -> None:
    """After a page switch or a reload: the keys work once the labeling unit has drawn its item and the
    item has been painted (Streamlit loads its elements' code lazily: a key pressed before is not heard,
    or refused as pressed before its item was on screen; a user reading the item does not press that fast)."""
    tab.locator(f'{MAIN} [data-label-keys="ready"]').first.wait_for()
    tab.locator(f'{MAIN} [data-testid="label-unit"][data-shown]').first.wait_for()
    wait_idle(tab)


def shown(tab) -> str:
    """The id of the item the Label page shows."""
    tab.locator(MAIN).get_by_text(ITEM).first.wait_for(timeout=60_000)
    return ITEM.search(main_text(tab)).group(1)


def wait_until(tab, condition, what: str, timeout: float = 60.0) -> None:
    for _ in range(int(timeout * 4)):
        if condition():
            return
        tab.wait_for_timeout(250)
    raise AssertionError(f"{what} did not happen within {timeout:.0f}s; the page says:\n{main_text(tab)[-1500:]}")


def label_by_keyboard(tab, store_path: Path, value: int) -> str:
    """Press a digit on the item shown, wait until its label is in the store; returns the item's id."""
    item = shown(tab)
    before = len(labels_in(store_path))
    tab.keyboard.press(str(value))
    wait_until(tab, lambda: len(labels_in(store_path)) == before + 1, f"label {before + 1} ({value} on {item})")
    tab.locator(MAIN).get_by_text(re.compile(rf"\S {value} · judge \d\.\d\d")).first.wait_for()  # "ann 2 · judge …"
    wait_idle(tab)
    return item


def go_on(tab, previous: str) -> None:
    """Enter goes on: the next item shows at once, from the items the browser holds."""
    def moved() -> bool:
        found = ITEM.search(main_text(tab))
        return bool(found) and found.group(1) != previous

    tab.keyboard.press("Enter")
    wait_until(tab, moved, "the next item (Enter)")
    settled(tab)


def test_twelve_labels_by_keyboard_with_a_reload_then_agreement_against_you_then_a_sigkill(tmp_path):
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is not installed (tests/run.sh installs Debian's chromium package)")
    from playwright.sync_api import sync_playwright

    store_path = tmp_path / "store.sqlite"
    table = write_unscored_table(tmp_path / "mine.csv", n=24, per_group=4)  # 6 conversations of 4 responses
    with streamlit_process(store_path, tmp_path / "streamlit.log") as (url, server), sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        tab = browser.new_context(viewport=VIEWPORT).new_page()
        patient(tab)
        tab.goto(url)
        tab.locator(f"{MAIN} h1").filter(has_text="Data").first.wait_for(timeout=90_000)
        wait_idle(tab)

        # an upload with no human score column loads
        tab.locator('[data-testid="stRadio"]').filter(has_text="Source").get_by_text("Upload a file").click()
        dataset_uploader(tab).set_input_files(str(table))
        tab.get_by_text("not a known layout").first.wait_for()
        wait_idle(tab)
        tab.get_by_role("button", name="Load with this mapping").click()
        tab.locator(f"{MAIN} h3").filter(has_text="mine").first.wait_for()
        wait_idle(tab)
        assert "mine has no human score of its own" in main_text(tab)
        screenshot(tab, "e2e_label_1_upload_without_scores")
        store = geval.Store(store_path)
        geval.score(store, store.items("mine"), geval.Template.load("topicalchat-naturalness"), scripted(), "mine")
        store.close()

        # 12 labels, by keyboard only, with a reload after the sixth
        goto_page(tab, "Label")
        tab.locator(MAIN).get_by_text("0 labeled; a 95% interval of ±0.10").first.wait_for()
        settled(tab)
        assert not re.search(r"judge \d\.\d\d", main_text(tab))  # blind until the label is saved
        assert "would score it" not in main_text(tab)  # nor its system's mean, which names the system
        seen = []
        for index in range(12):
            if index == 6:
                tab.reload()
                tab.locator(f"{MAIN} h1").filter(has_text="Label").first.wait_for(timeout=90_000)
                settled(tab)
                assert shown(tab) not in seen and "6 labeled" in main_text(tab)
            response = tab.locator('[data-label-part="response"]').first
            top = response.bounding_box()["y"]
            assert top + 20 < VIEWPORT["height"], top  # the item first on the page: its response in view
            seen.append(label_by_keyboard(tab, store_path, 1 + index % 3))
            assert response.bounding_box()["y"] == top  # what follows a label goes beside the keys, not above the item
            if index == 3:
                assert "as you would score it" in main_text(tab)  # labeled: its system's line, your labels' mean
                screenshot(tab, "e2e_label_2_labeled_and_shown")
            go_on(tab, seen[-1])
        assert labels_in(store_path) == seen and len(set(seen)) == 12
        store = geval.Store(store_path)
        labels = store.labels("mine")
        store.close()
        assert labels["score"].tolist() == [float(1 + i % 3) for i in range(12)]
        assert (labels["seconds"] > 0).all() and (labels["annotator"] == "you").all()

        # Agreement: the judge against you, n = 12, and why there is no interval
        goto_page(tab, "Agreement")
        tab.locator(f'{MAIN} [data-testid="stDataFrame"]').first.wait_for()
        wait_idle(tab)
        text = main_text(tab)
        assert "Compared with: your labels (Naturalness: 12 items labeled by you)" in text, text[:2000]
        row = re.search(r"naturalness\s+Naturalness\s+item\s+pearson\s+(-?\d\.\d{3}) \(no interval: (\d) groups\)\s+12",
                        text)
        assert row and int(row.group(2)) < 10, text[-3000:]
        screenshot(tab, "e2e_label_3_agreement_against_you")

        # a 13th label, then the app is killed before the next one: the label is in the store
        goto_page(tab, "Label")
        settled(tab)
        thirteenth = label_by_keyboard(tab, store_path, 2)
        os.kill(server.pid, signal.SIGKILL)
        server.wait(timeout=30)
        browser.close()
    after = labels_in(store_path)
    assert len(after) == 13 and after[-1] == thirteenth


def scored_store(tmp_path: Path, n: int = 24, per_group: int = 4) -> Path:
    """A store holding the dataset "mine" (no human score), scored by the scripted judge."""
    store_path = tmp_path / "store.sqlite"
    store = geval.Store(store_path)
    dataset = geval.load_dataset(write_unscored_table(tmp_path / "mine.csv", n=n, per_group=per_group),
                                 mapping=MAPPING, store=store)
    geval.score(store, dataset.items, geval.Template.load("topicalchat-naturalness"), scripted(), "mine")
    store.close()
    return store_path


def open_label_page(tab, url: str) -> None:
    """The Label page on "mine", as a link opens it (a new session)."""
    tab.goto(f"{url}/label?dataset=mine")
    tab.locator(f"{MAIN} h1").filter(has_text="Label").first.wait_for(timeout=90_000)
    settled(tab)


@contextmanager
def label_page(tmp_path: Path, store_path: Path, loaded: bool = False):
    """The Label page of "mine" in chromium, on a server of its own on `store_path` (and with `loaded`,
    one core kept busy meanwhile): yields (the tab, the server's process)."""
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is not installed (tests/run.sh installs Debian's chromium package)")
    from playwright.sync_api import sync_playwright

    with streamlit_process(store_path, tmp_path / "streamlit.log") as (url, server), sync_playwright() as playwright, \
            cpu_burner() if loaded else nullcontext():
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            tab = browser.new_context(viewport=VIEWPORT).new_page()
            patient(tab)
            open_label_page(tab, url)
            yield tab, server
        finally:
            browser.close()


def stored_score(store_path: Path, item: str) -> int | None:
    return stored_labels(store_path).get(item)


REASON = "3 turns in, still on topic; s u 1"  # keys that would label, skip and undo, typed as a reason's text


def test_labels_given_right_after_a_page_load_or_a_reload_store_their_seconds_not_the_clock(tmp_path):
    """The first label of a session is timed from when its item was shown, not from 1970 (it
    once stored 1,795,716,532 s, and the mean label time read 171 million s); a reason typed after its
    digit (Tab, the text, Enter) is stored with it, its keys never taken as ratings or moves, and
    `geval labels export` writes it. Then ← shows the item before with its label, a digit corrects it,
    u takes the correction back, s skips an item."""
    store_path = scored_store(tmp_path)
    with label_page(tmp_path, store_path) as (tab, _):
        first = label_by_keyboard(tab, store_path, 2)  # right after the page opened
        tab.keyboard.press("Tab")
        tab.keyboard.type(REASON)
        screenshot(tab, "e2e_label_11_a_reason_after_the_digit")
        tab.keyboard.press("Enter")  # saves the label with its reason, and goes on
        wait_until(tab, lambda: shown(tab) != first, "the next item (Enter in the reason box)")
        settled(tab)
        wait_until(tab, lambda: stored_reasons(store_path).get(first) == REASON, "the reason stored")
        tab.reload()
        tab.locator(f"{MAIN} h1").filter(has_text="Label").first.wait_for(timeout=90_000)
        settled(tab)
        second = label_by_keyboard(tab, store_path, 3)  # right after a reload
        go_on(tab, second)
        tab.keyboard.press("ArrowLeft")
        wait_until(tab, lambda: shown(tab) == second and "you 3 · judge" in main_text(tab), "← to the item before")
        settled(tab)
        tab.keyboard.press("1")
        wait_until(tab, lambda: stored_score(store_path, second) == 1, "the correction stored")
        assert "Changed Naturalness from 3 to 1." in main_text(tab) and shown(tab) == second
        tab.keyboard.press("u")
        wait_until(tab, lambda: stored_score(store_path, second) == 3, "the correction undone")
        go_on(tab, second)
        third = shown(tab)
        tab.keyboard.press("s")
        wait_until(tab, lambda: shown(tab) not in (first, second, third), "the item skipped")
        assert third not in stored_labels(store_path)
    store = geval.Store(store_path)
    labels = store.labels("mine")
    store.close()
    assert len(labels) == 2 and labels["seconds"].between(0, 3600).all(), labels[["item_id", "seconds"]]
    assert stored_labels(store_path)[first] == 2 and stored_reasons(store_path) == {first: REASON, second: ""}
    out = tmp_path / "labels.csv"
    exported = run_cli("labels", "export", "mine", "--out", str(out), "--store", str(store_path))
    assert exported.returncode == 0, exported.stderr
    with out.open(encoding="utf-8") as handle:
        assert {row["item_id"]: row["reason"] for row in csv.DictReader(handle)} == {first: REASON, second: ""}


def stored_reasons(store_path: Path) -> dict[str, str]:
    store = geval.Store(store_path)
    labels = store.labels("mine")
    store.close()
    return dict(zip(labels["item_id"], labels["reason"]))


NOT_TAKEN = re.compile(r"(\d+) keys? not taken so far in this session")


@contextmanager
def cpu_burner():
    """A process that keeps one core busy (the machine loaded, as under a test suite), ended after."""
    burner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        yield
    finally:
        burner.kill()
        burner.wait(timeout=30)



KEY_LOG = """() => {
    window.gevalKeyLog = [];
    window.addEventListener('keydown', (event) => {
        const shown = document.querySelector('[data-label-part="response"]');
        window.gevalKeyLog.push({key: event.key, response: shown ? shown.innerText : null});
    }, {capture: true});
}"""  # every key pressed, with the response on screen as it was pressed (before the page's own listener hears it)


def words(text: str | None) -> str:
    return " ".join((text or "").split())


def pressed_on(tab, store_path: Path) -> list[tuple[str, str | None]]:
    """The keys logged by KEY_LOG, each with the id of the item whose response was on screen as it was
    pressed (None: no response was on screen)."""
    store = geval.Store(store_path)
    by_response = {words(item.response): item.id for item in store.items("mine")}
    store.close()
    return [(entry["key"], by_response.get(words(entry["response"]))) for entry in tab.evaluate("window.gevalKeyLog")]


def stored_labels(store_path: Path) -> dict[str, int]:
    store = geval.Store(store_path)
    labels = store.labels("mine")
    store.close()
    return {item: int(score) for item, score in zip(labels["item_id"], labels["score"])}


def wait_for_store(tab, store_path: Path, count: int, still: float = 30.0) -> float:
    """Wait until the store holds `count` labels, failing when their number has not grown for `still`
    seconds; returns the seconds waited."""
    return wait_growing(tab, lambda: len(labels_in(store_path)), count, "labels in the store", still)


def not_taken_said(tab) -> int:
    found = NOT_TAKEN.search(main_text(tab))
    return int(found.group(1)) if found else 0


def test_forty_labels_typed_at_a_keyboards_pace_on_a_loaded_machine_land_on_the_items_on_screen(tmp_path):
    """A practiced annotator types digit and Enter, 0.15 s apart (a label every 0.3 s), 40 times, while
    the machine is loaded: every label is in the store, on the item whose text was on screen as its
    digit was pressed. Once the page answered each label with a round trip to the server (1-1.5 s
    for the next item) and took one key in ten at this pace. The annotator reads each item before
    labeling it: a digit waits until the item has been painted 0.15 s (a key pressed before its item is on
    screen, or a digit sooner after it appeared, is refused by design, and holds the rest)."""
    store_path = scored_store(tmp_path, n=60, per_group=6)
    with label_page(tmp_path, store_path, loaded=True) as (tab, _):
        tab.evaluate(KEY_LOG)
        start = time.monotonic()
        previous = None
        for index in range(40):
            previous = item_shown(tab, previous)
            tab.keyboard.press(str(1 + index % 3))
            tab.wait_for_timeout(150)
            tab.keyboard.press("Enter")
            tab.wait_for_timeout(150)
        typed = time.monotonic() - start
        try:
            waited = wait_for_store(tab, store_path, 40)
        finally:
            screenshot(tab, "e2e_label_7_forty_at_a_keyboards_pace")
        pressed = pressed_on(tab, store_path)
    wanted = {item: int(key) for key, item in pressed if key.isdigit()}
    print(f"40 labels typed in {typed:.1f} s ({40 / typed:.2f} items/s), all in the store {waited:.1f} s after the "
          "last key")
    assert None not in wanted and len(wanted) == 40, pressed
    assert stored_labels(store_path) == wanted


def test_a_digit_pressed_soon_after_enter_lands_on_the_item_on_screen_or_is_refused_never_on_the_next(tmp_path):
    """The annotator presses a digit 0.1-0.5 s after Enter, and now and then a second one to correct it
    (sees the item with its 1 and presses 3): each lands on the item whose text was on screen as it was
    pressed, or is refused and said (one under 0.15 s after its item appeared: too soon to be meant for it),
    then Esc; never on another item. Once, for 0.3-1.3 s after Enter the page named the next item above the
    previous one's text, and a digit pressed then went to the next item."""
    store_path = scored_store(tmp_path, n=30, per_group=6)
    gaps = [100, 300, 200, 500, 150, 400, 250]
    with label_page(tmp_path, store_path, loaded=True) as (tab, _):
        tab.evaluate(KEY_LOG)
        tab.keyboard.press("2")
        for index in range(14):
            wait_idle(tab)
            if "Keys are held" in main_text(tab):  # a key refused as typed ahead: the annotator looks again
                tab.keyboard.press("Escape")
            tab.keyboard.press("Enter")
            tab.wait_for_timeout(gaps[index % len(gaps)])
            tab.keyboard.press(str(1 + index % 3))
            if index % 3 == 2:  # a correction, as the digit shows
                tab.wait_for_timeout(200)
                tab.keyboard.press(str(3 - index % 3))
        pressed = pressed_on(tab, store_path)
        digits = [(item, int(key)) for key, item in pressed if key.isdigit()]
        last = {item: value for item, value in digits if item}
        wait_until(tab, lambda: tab.evaluate("window.gevalLabelUnit.outbox.length") == 0, "every label answered")
        wait_idle(tab)
        said = not_taken_said(tab)
        screenshot(tab, "e2e_label_8_digit_soon_after_enter")
    stored = stored_labels(store_path)
    misplaced = {item: value for item, value in stored.items() if (item, value) not in set(digits)}
    assert not misplaced, f"labels on items not on screen as they were typed: {misplaced}; keys {pressed}"
    lost = [item for item, value in last.items() if stored.get(item) != value]
    assert len(lost) <= said, f"{len(lost)} digits not on their item, the page says {said} keys not taken; {pressed}"


PRESS_AT_ONCE = """(keys) => {
    for (const key of keys) document.dispatchEvent(new KeyboardEvent('keydown', {key, bubbles: true}));
}"""  # keys pressed in one task of the page: no frame is painted between them
PRESS_SOON_AFTER = """async ([first, then, ms]) => {
    document.dispatchEvent(new KeyboardEvent('keydown', {key: first, bubbles: true}));
    await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(() => requestAnimationFrame(done))));
    await new Promise((done) => setTimeout(done, ms));
    document.dispatchEvent(new KeyboardEvent('keydown', {key: then, bubbles: true}));
}"""  # the second key `ms` after the first one's next item was painted (its two frames, and one more)


def test_keys_not_taken_are_said_until_dismissed_and_labels_wait_in_the_tab_while_the_server_does_not_answer(tmp_path):
    """A digit pressed with Enter before the next item could be painted is refused, and holds the keys
    typed after it until Esc: a digit pressed once the item is painted is not taken (typed ahead, it was
    meant for a later item: once it labeled the one on screen). Then a digit off the scale and Enter on an
    item not labeled are refused: the notice counts them and stays through the labels
    given after it and a visit to another page, until dismissed (it once vanished at the next label).
    Then the server stops answering (SIGSTOP): the annotator goes on labeling the items the browser
    holds, the page says the labels are not saved yet and keeps them; once the server answers again
    (SIGCONT) every one is stored on its item and the page says nothing more."""
    store_path = scored_store(tmp_path)
    with label_page(tmp_path, store_path) as (tab, server):
        unread = label_by_keyboard(tab, store_path, 2)
        tab.evaluate(PRESS_SOON_AFTER, ["Enter", "3", 40])  # the 3 0.04 s after the next item appeared: unread
        wait_until(tab, lambda: not_taken_said(tab) == 1, "the key pressed too soon after its item appeared, said")
        first = shown(tab)
        assert first != unread and labels_in(store_path) == [unread]  # once it labeled the item nobody had read
        assert f"The latest: 3 on item {first} (too soon after it appeared)." in main_text(tab)
        tab.keyboard.press("Escape")
        wait_until(tab, lambda: "Keys are taken again" in main_text(tab), "the keys taken again (Esc)")
        settled(tab)  # the annotator reads the item
        assert label_by_keyboard(tab, store_path, 2) == first
        tab.evaluate(PRESS_AT_ONCE, ["Enter", "3"])  # the 3 before the next item was on screen
        wait_until(tab, lambda: not_taken_said(tab) == 2, "the key pressed before its item was on screen, said")
        second = shown(tab)
        assert second != first and labels_in(store_path) == [unread, first]
        assert (f"The latest: 3 on item {first} (too soon after it appeared); 3 on item {second} (before it was on "
                "screen). A key goes to the item on screen as it is "
                "pressed. Keys are held, as one was typed ahead of its item: look at the item on screen, then press "
                "Esc to label again.") in main_text(tab)
        settled(tab)
        tab.keyboard.press("1")  # the item painted, but the keys typed ahead are held
        wait_until(tab, lambda: not_taken_said(tab) == 3, "the digit typed after it, held")
        tab.keyboard.press("Escape")
        wait_until(tab, lambda: main_text(tab).count("Keys are taken again") == 1 and not_taken_said(tab) == 3,
                   "the keys taken again (Esc)")
        tab.keyboard.press("9")  # off the 1-3 scale
        tab.keyboard.press("Enter")  # not labeled yet: the item stays
        wait_until(tab, lambda: not_taken_said(tab) == 5, "five keys not taken, said")
        assert shown(tab) == second and labels_in(store_path) == [unread, first]
        assert ("5 keys not taken so far in this session: 1 pressed under 0.15 s after its item appeared, too soon to "
                "be meant for it; 1 pressed before its item was on screen; 1 held after a key typed ahead of its item; "
                "1 a digit not on the aspect's scale; 1 Enter or → on an item not labeled yet (a digit labels it, s "
                "skips it).") in main_text(tab)
        for value in (1, 3):
            item = label_by_keyboard(tab, store_path, value)
            go_on(tab, item)
        goto_page(tab, "Data")
        goto_page(tab, "Label")
        settled(tab)
        assert not_taken_said(tab) == 5, main_text(tab)[-1500:]  # through two labels and another page
        screenshot(tab, "e2e_label_9_keys_not_taken_kept")
        tab.locator(MAIN).get_by_role("button", name="Dismiss").click()
        wait_until(tab, lambda: not not_taken_said(tab), "the notice dismissed")

        tab.evaluate(KEY_LOG)
        stored = len(labels_in(store_path))
        os.kill(server.pid, signal.SIGSTOP)
        try:
            for value in (1, 2, 3):  # at a person's pace: a digit 0.2 s after Enter fell within the 0.15 s after
                tab.keyboard.press(str(value))  # its item appeared on a busy machine, and was refused as too soon
                tab.wait_for_timeout(200)
                tab.keyboard.press("Enter")
                tab.wait_for_timeout(500)
            wait_until(tab, lambda: "3 labels not saved yet: the server has not answered" in main_text(tab),
                       "the labels said not saved")
            screenshot(tab, "e2e_label_10_server_not_answering")
            assert len(labels_in(store_path)) == stored
        finally:
            os.kill(server.pid, signal.SIGCONT)
        wait_for_store(tab, store_path, stored + 3)
        wait_until(tab, lambda: "not saved yet" not in main_text(tab) and "Saving" not in main_text(tab),
                   "the page saying every label is saved")
        pressed = pressed_on(tab, store_path)
    wanted = {item: int(key) for key, item in pressed if key.isdigit()}
    assert len(wanted) == 3 and {i: stored_labels(store_path)[i] for i in wanted} == wanted
