"""A team in a real browser (Playwright driving Debian's chromium): two annotators signed in, in two
browser contexts, label the same queue at the same time, every label lands on its item under its
annotator; one of them tries the lead's pages and the other's work by URL and is refused, and
nothing of the other's labels or the judge reaches their browser; a reload keeps them signed in
(the signed cookie), "Sign out" ends it; the lead reads the queue's alpha and kappa.

Photographs go to tests/artifacts/ (team_sign_in, team_my_queue, team_refused, team_queues)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from e2e_helpers import CHROMIUM, CHROMIUM_ARGS, VIEWPORT, main_text, screenshot, streamlit_server, wait_idle
from helpers import REPO, make_template, scripted

import geval

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
    geval.labeling.queues.create(store, "pilot", dataset.name, geval.labeling.parse_aspects("Natural 1-3"),
                                 ["ann", "bob"], "random", ITEMS, 2, "none", seed=2, created_by="lena")
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
    tab.get_by_role("button", name="Sign in").click()
    tab.locator(f"{MAIN} h1").filter(has_text=heading).first.wait_for(timeout=90_000)
    wait_idle(tab)
    return context, tab, frames


def label_one(tab, score: int, reason: str) -> None:
    """Pick `score` on the form's scale, type the reason and press Enter (no wait for the page's run)."""
    form = tab.locator(f'{MAIN} [data-testid="stForm"]')
    form.locator('[data-testid="stRadio"] [role="radiogroup"] label').filter(has_text=re.compile(rf"^\s*{score}\s*$")).click()
    form.get_by_label("Reason").fill(reason)
    form.get_by_label("Reason").press("Enter")


def test_two_annotators_label_at_once_and_one_cannot_reach_the_other_or_the_lead_by_url(tmp_path):
    from playwright.sync_api import sync_playwright

    path = tmp_path / "store.sqlite"
    store = team_store(path)
    with streamlit_server(path, tmp_path / "streamlit.log") as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        first = browser.new_context(viewport=VIEWPORT).new_page()
        first.goto(url)
        first.get_by_role("button", name="Sign in").wait_for(timeout=90_000)
        wait_idle(first)
        assert "sign in with the name and password" in main_text(first)
        screenshot(first, "team_sign_in", publish_as="team_sign_in")
        first.context.close()

        ann_context, ann, ann_frames = signed_in(browser, url, "ann", "ann-password", "My queue")
        bob_context, bob, _ = signed_in(browser, url, "bob", "bob-password", "My queue")
        for n in range(ITEMS):  # both send a label before either page has run again: the server runs them at once
            label_one(ann, 1 + n % 3, f"ann-reason-{n}")
            label_one(bob, 1 + (n + 1) % 3, f"bob-reason-{n}")
            for tab, name in ((ann, "ann"), (bob, "bob")):
                tab.locator(MAIN).get_by_text(f"{n + 1} of {ITEMS} items labeled").wait_for(timeout=90_000)
                wait_idle(tab)
        labels = geval.Store(path).queue_labels("pilot")
        assert len(labels) == 2 * ITEMS and not labels.duplicated(["item_id", "annotator"]).any()
        for annotator in ("ann", "bob"):
            mine = labels[labels["annotator"] == annotator]
            assert set(mine["item_id"]) == set(store.assignments("pilot", annotator)["item_id"])
            assert all(reason.startswith(f"{annotator}-reason-") for reason in mine["reason"])
        assert "Every item of your queue is labeled" in main_text(ann)
        screenshot(ann, "team_my_queue", publish_as="team_my_queue")

        ann.reload()  # the signed cookie keeps her signed in
        ann.locator(f"{MAIN} h1").filter(has_text="My queue").first.wait_for(timeout=90_000)
        wait_idle(ann)
        for page in ("agreement", "inspect", "score", "prompts", "tune", "label", "queues"):
            ann.goto(f"{url}/{page}")
            ann.locator(MAIN).get_by_text("is for the lead").wait_for(timeout=90_000)
            wait_idle(ann)
            shown = main_text(ann)
            assert "you are signed in as ann, an annotator" in shown and len(shown.strip().splitlines()) <= 3, shown
        screenshot(ann, "team_refused", publish_as="team_refused")
        ann.goto(f"{url}/?annotator=bob&judge=x")  # another's labels by query parameter
        ann.locator(MAIN).get_by_text("are for the lead's pages").wait_for(timeout=90_000)
        wait_idle(ann)
        assert "annotator, judge" in main_text(ann) and "bob" not in ann.url
        received = b"".join(ann_frames)
        assert b"items labeled" in received  # the frames are read: her own page's words are in them
        assert b"bob-reason" not in received and b"test-naturalness" not in received
        assert b"Naturalness" not in received and b"lead-password" not in received

        ann.locator('[data-testid="stSidebar"]').get_by_role("button", name="Sign out").click()
        ann.get_by_role("button", name="Sign in").wait_for(timeout=90_000)
        wait_idle(ann)
        ann.reload()  # the cookie is gone: signed out for good
        ann.get_by_role("button", name="Sign in").wait_for(timeout=90_000)
        ann_context.close()
        bob_context.close()

        _, lead, _ = signed_in(browser, url, "lena", "lead-password", "Data")
        lead.goto(f"{url}/queues")  # a link, in a new session signed in by the cookie, opens the page it names
        lead.locator(f"{MAIN} h1").filter(has_text="Queues").first.wait_for(timeout=90_000)
        wait_idle(lead)
        lead.locator(MAIN).get_by_text("Krippendorff's alpha (ordinal)").first.wait_for()
        shown = main_text(lead)
        assert f"on {ITEMS} items labeled by two or more" in shown and "bob-reason" in shown
        screenshot(lead, "team_queues", publish_as="team_queues")
        browser.close()
    log = (tmp_path / "streamlit.log").read_text()
    assert not [word for word in ("ann-password", "bob-password", "lead-password") if word in log]  # never logged
