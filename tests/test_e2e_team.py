"""A team in a real browser (Playwright driving Debian's chromium): an annotator labels her queue by
keyboard in the labeling unit, a reason typed after each digit (Tab, the text, Enter); a label at the
scale's end, and one 2 or more from another person's label of the item (decided on the server), is
held until its reason is given (Enter and ← stay on it). Then two annotators signed in, in two browser
contexts, label the same queue at the same time: every label lands on its item under its annotator with
its reason; one of them tries the lead's pages and the other's work by URL and is refused, and nothing of the other's
labels or the judge reaches their browser; a reload keeps them signed in (the signed cookie), "Sign
out" ends it; the lead, signing in at a link to Label, lands on Label; she reads the queue's alpha and
kappa.

Photographs go to tests/artifacts/ (team_sign_in, team_reason_at_the_end, team_reason_differs,
team_my_queue, team_refused, team_queues)."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from e2e_helpers import (
    CHROMIUM,
    CHROMIUM_ARGS,
    LABEL_UNIT,
    VIEWPORT,
    item_shown,
    main_text,
    screenshot,
    streamlit_server,
    wait_growing,
    wait_idle,
)
from helpers import REPO, STALL, make_template, scripted

import geval
from studio import auth

pytestmark = pytest.mark.e2e

MAIN = '[data-testid="stMain"]'
ITEMS = 6  # each annotator's queue (overlap 2 of 2: both label all of them)


def team_store(path: Path) -> geval.Store:
    """The Topical-Chat sample scored by the scripted judge, a lead, two annotators and a queue."""
    store = geval.Store(path)
    dataset = geval.load_dataset(REPO / "data" / "topicalchat_usr_sample.json", store=store)
    template = make_template(aspects=(("Naturalness", 1, 3, "Natural"),))
    geval.score(store, dataset.items, template, scripted(), dataset.name)
    store.add_user("lena", "lead", "lead-password")
    store.add_user("ann", "annotator", "ann-password")
    store.add_user("bob", "annotator", "bob-password")
    geval.labeling.queues.create(store, "pilot", dataset.name, geval.labeling.parse_aspects("Natural 1-5"),
                                 ["ann", "bob"], "random", ITEMS, 2, "differs", seed=2, created_by="lena")
    return store


def signed_in(browser, url: str, name: str, password: str, heading: str):
    """A browser context of its own (its own cookies) signed in as `name`; (context, tab, frames received)."""
    context = browser.new_context(viewport=VIEWPORT)
    tab = context.new_page()
    tab.set_default_timeout(60_000)
    frames: list[bytes] = []  # everything the server sends this browser
    tab.on("websocket", lambda ws: ws.on("framereceived", lambda payload: frames.append(
        payload if isinstance(payload, bytes) else payload.encode())))
    tab.goto(url)
    tab.get_by_label("Name", exact=True).wait_for(timeout=90_000)
    wait_idle(tab)
    tab.get_by_label("Name", exact=True).fill(name)
    tab.get_by_label("Password", exact=True).fill(password)
    press(tab, tab.get_by_role("button", name="Sign in"), tab.locator(f"{MAIN} h1").filter(has_text=heading), frames)
    wait_idle(tab)
    return context, tab, frames


def press(tab, button, shown, frames: list[bytes], lost: float = 20.0) -> None:
    """Press `button` (a locator) and wait until `shown` (a locator) is visible, for as long as the work moves (the
    server sends the browser frames, or the app says it runs); fail when nothing has moved for STALL seconds. A press
    that led nowhere, the button still there, the app idle and nothing received for `lost` seconds, is pressed again
    (twice at most), as a person would: on a busy machine a press that lands while the page is redrawn is dropped."""
    button.click()
    seen, moved, presses = len(frames), time.monotonic(), 1
    while not (shown.count() and shown.first.is_visible()):
        tab.wait_for_timeout(250)
        assert not tab.get_by_text("do not match an account").count(), "the name and password were refused"
        if len(frames) != seen or app_running(tab):
            seen, moved = len(frames), time.monotonic()
        elif time.monotonic() - moved > STALL:
            raise AssertionError(f"nothing after {presses} presses, nothing received for {STALL:g} s; the page says:\n"
                                 f"{tab.locator('body').inner_text()[-1500:]}")
        elif time.monotonic() - moved > lost and presses < 3 and button.count() and button.first.is_visible():
            button.click()
            seen, moved, presses = len(frames), time.monotonic(), presses + 1


def app_running(tab) -> bool:
    """Whether Streamlit's status says a run is going on (or the browser is connecting)."""
    status = tab.locator('[data-testid="stStatusWidget"]')
    try:
        return bool(status.count()) and bool(re.search("Running|Connecting", status.first.inner_text(timeout=2_000)))
    except Exception:  # redrawn while read: count it as moving
        return True


def session_cookie(tab) -> None:
    """Wait until the browser holds the signed session cookie: a component writes it once the run that signs
    in is drawn; a reload or a link opens a new session, signed in by the cookie it finds."""
    tab.wait_for_function("(name) => document.cookie.split('; ').some((c) => c.startsWith(`${name}=`))",
                          arg=auth.COOKIE, timeout=90_000)


def rate(tab, score: int, reason: str | None) -> None:
    """A digit, then (with a reason) Tab, the reason typed, Enter; else Enter: no wait for the server."""
    tab.keyboard.press(str(score))
    if reason is not None:
        tab.keyboard.press("Tab")
        tab.keyboard.type(reason)
    tab.keyboard.press("Enter")


def stored(path: Path, annotator: str) -> dict[str, tuple[float, str]]:
    """The annotator's labels in queue pilot, as another process reads the store: item -> (score, reason)."""
    store = geval.Store(path)
    try:
        labels = store.queue_labels("pilot", annotator)
    finally:
        store.close()
    return {item: (score, reason) for item, score, reason in zip(labels["item_id"], labels["score"], labels["reason"])}


def test_two_annotators_label_at_once_and_one_cannot_reach_the_other_or_the_lead_by_url(tmp_path):
    from playwright.sync_api import sync_playwright

    path = tmp_path / "store.sqlite"
    store = team_store(path)
    with streamlit_server(path, tmp_path / "streamlit.log") as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        first = browser.new_context(viewport=VIEWPORT).new_page()
        first.goto(url)
        first.get_by_role("button", name="Sign in").wait_for(timeout=90_000)
        # the line under the form comes after it in the same run, which a busy machine draws in parts
        first.locator(MAIN).get_by_text("sign in with the name and password").wait_for(timeout=90_000)
        wait_idle(first)
        screenshot(first, "team_sign_in", publish_as="team_sign_in")
        first.context.close()

        order = {name: store.assignments("pilot", name)["item_id"].tolist() for name in ("ann", "bob")}
        differs = order["ann"][1]  # bob labeled it 5 before: ann's 3 is 2 from it
        store.save_label(differs, "Natural", 5, "bob", 4.0, "bob-reason-early")
        ann_context, ann, ann_frames = signed_in(browser, url, "ann", "ann-password", "My queue")
        assert item_shown(ann) == order["ann"][0] and "Queue pilot: 0 of 6 items labeled." in main_text(ann)

        # a label at the scale's end is held until its reason is given, and so is one 2 from another's label
        for item, score, said, photo in ((order["ann"][0], 1, "1 is at an end of the scale (1-5)", "at_the_end"),
                                         (differs, 3, "3 differs from another annotator's label of this item by 2 or "
                                                      "more", "differs")):
            rate(ann, score, None)
            ann.locator(LABEL_UNIT).get_by_text(said).first.wait_for(timeout=90_000)
            ann.keyboard.press("Enter")  # again: it stays
            ann.keyboard.press("ArrowLeft")  # nor does ← leave it shown as labeled but not stored (it once did)
            unsaved = f"Natural {score} is not saved until its reason is given"
            ann.locator(LABEL_UNIT).get_by_text(unsaved).first.wait_for()
            wait_idle(ann)
            assert ann.locator(LABEL_UNIT).get_attribute("data-shown") == item and item not in stored(path, "ann")
            assert "bob" not in main_text(ann) and "5 " not in ann.locator(f"{LABEL_UNIT} .gl-why").first.inner_text()
            screenshot(ann, f"team_reason_{photo}")
            ann.keyboard.press("Tab")
            ann.keyboard.type(f"ann-reason-{item}")
            ann.keyboard.press("Enter")
            assert item_shown(ann, item) != item
        wait_growing(ann, lambda: len(stored(path, "ann")), 2, "labels of ann in the store")  # in the background
        assert stored(path, "ann") == {order["ann"][0]: (1.0, f"ann-reason-{order['ann'][0]}"),
                                       differs: (3.0, f"ann-reason-{differs}")}

        # both label the rest by keyboard at once, a reason after each digit: the server runs their labels at once
        bob_context, bob, _ = signed_in(browser, url, "bob", "bob-password", "My queue")
        left = {"ann": order["ann"][2:], "bob": [i for i in order["bob"] if i != differs]}
        on_screen = {"ann": item_shown(ann), "bob": item_shown(bob)}
        for n in range(max(map(len, left.values()))):
            for name, tab in (("ann", ann), ("bob", bob)):
                if n < len(left[name]):
                    assert on_screen[name] == left[name][n]
                    rate(tab, 2 + (n + (name == "bob")) % 3, f"{name}-reason-{on_screen[name]}")
            for name, tab in (("ann", ann), ("bob", bob)):
                if n + 1 < len(left[name]):
                    on_screen[name] = item_shown(tab, on_screen[name])
        for name, tab in (("ann", ann), ("bob", bob)):
            wait_growing(tab, lambda: len(stored(path, name)), ITEMS, f"labels of {name} in the store")
            tab.locator(MAIN).get_by_text("Every item of your queue is labeled").wait_for(timeout=90_000)
        labels = geval.Store(path).queue_labels("pilot")
        assert len(labels) == 2 * ITEMS and not labels.duplicated(["item_id", "annotator"]).any()
        for annotator in ("ann", "bob"):
            mine = labels[labels["annotator"] == annotator]
            assert set(mine["item_id"]) == set(order[annotator])
            assert all(reason == f"{annotator}-reason-{item}" for item, reason in zip(mine["item_id"], mine["reason"])
                       if item != differs or annotator == "ann")
        assert labels.set_index(["item_id", "annotator"]).loc[(differs, "bob"), "reason"] == "bob-reason-early"
        wait_idle(ann)
        screenshot(ann, "team_my_queue", publish_as="team_my_queue")

        session_cookie(ann)
        ann.reload()  # the signed cookie keeps her signed in
        ann.locator(f"{MAIN} h1").filter(has_text="My queue").first.wait_for(timeout=90_000)
        wait_idle(ann)
        ann.goto(f"{url}/my-queue")  # a queue's link, as docs/team.md gives it: "Page not found" over her queue
        ann.locator(f"{MAIN} h1").filter(has_text="My queue").first.wait_for(timeout=90_000)
        wait_idle(ann)
        assert "Page not found" not in ann.inner_text("body") and ann.url.endswith("/my-queue")
        for page in ("agreement", "inspect", "score", "prompts", "tune", "label", "queues"):
            ann.goto(f"{url}/{page}")
            ann.locator(MAIN).get_by_text("is for the lead").wait_for(timeout=90_000)
            # the link under the line comes after it in the same run, which a busy machine draws in parts
            ann.locator(MAIN).get_by_text("Back to my queue").wait_for(timeout=90_000)
            wait_idle(ann)
            shown = main_text(ann)
            assert "you are signed in as ann, an annotator" in shown and len(shown.strip().splitlines()) <= 3, shown
            assert "Back to my queue" in shown  # the way back, a link
        screenshot(ann, "team_refused", publish_as="team_refused")
        ann.goto(f"{url}/?annotator=bob&judge=x")  # another's labels by query parameter
        toast = ann.get_by_test_id("stToast").filter(has_text="are for the lead's pages")  # not a line kept above
        toast.wait_for(timeout=90_000)  # the queue through every label
        wait_idle(ann)
        assert "annotator, judge" in toast.inner_text() and "bob" not in ann.url
        assert "lead's pages" not in main_text(ann)
        received = b"".join(ann_frames)
        assert b"items labeled" in received and b"ann-reason" in received  # the frames are read: her own words
        assert b"bob-reason" not in received and b"test-naturalness" not in received  # bob's, even on her items
        assert b"Naturalness" not in received and b"lead-password" not in received

        press(ann, ann.locator('[data-testid="stSidebar"]').get_by_role("button", name="Sign out"),
              ann.get_by_role("button", name="Sign in"), ann_frames)
        wait_idle(ann)
        ann.reload()  # signed out for good: her cookie is refused on the server, kept by the browser or not
        ann.get_by_role("button", name="Sign in").wait_for(timeout=90_000)
        ann_context.close()
        bob_context.close()

        _, lead, _ = signed_in(browser, f"{url}/label", "lena", "lead-password", "Label")  # the page the link named
        session_cookie(lead)
        lead.goto(f"{url}/queues")  # a link, in a new session signed in by the cookie, opens the page it names
        lead.locator(f"{MAIN} h1").filter(has_text="Queues").first.wait_for(timeout=90_000)
        wait_idle(lead)
        lead.locator(MAIN).get_by_text("Krippendorff's alpha (ordinal)").first.wait_for()
        lead.locator(f'{MAIN} [data-testid="stDataFrame"] td').filter(has_text="bob-reason").first.wait_for(
            state="attached", timeout=90_000)  # the grid's cells come after the page's text
        shown = main_text(lead)
        assert f"on {ITEMS} items labeled by two or more" in shown and "bob-reason" in shown
        screenshot(lead, "team_queues", publish_as="team_queues")
        browser.close()
    log = (tmp_path / "streamlit.log").read_text()
    assert not [word for word in ("ann-password", "bob-password", "lead-password") if word in log]  # never logged
