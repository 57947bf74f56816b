"""A fresh server's first page, whichever it is, shows the app's one navigation and its shared
sidebar: the first request of each page below goes to a server that has served nothing yet.
(With the pages in a folder named pages/, Streamlit ran such a first deep link without app.py,
in its legacy multipage mode, and drew another navigation.) Nothing is fetched from elsewhere (a
material icon as the page's icon was fetched from fonts.gstatic.com). Photographs go to tests/artifacts/."""

from __future__ import annotations

from pathlib import Path

import pytest
from e2e_helpers import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS, VIEWPORT, streamlit_server, wait_idle

pytestmark = pytest.mark.e2e

NAVIGATION = ["Data", "Label", "Prompts", "Score", "Inspect", "Agreement", "Tune"]  # as the Data page's steps
PAGES = [("", "Data"), ("data", "Data"), ("prompts", "Prompts"), ("score", "Score"), ("inspect", "Inspect"),
         ("agreement", "Agreement"), ("tune", "Tune"), ("label", "Label"),
         ("queues", "Queues")]  # a queue's link on a store with no accounts: what a team needs, not "Page not found"


@pytest.mark.parametrize("path, title", PAGES, ids=[p or "main" for p, _ in PAGES])
def test_a_fresh_servers_first_deep_link_shows_the_one_navigation(tmp_path, path, title):
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is not installed (tests/run.sh installs Debian's chromium package)")
    from playwright.sync_api import sync_playwright

    with streamlit_server(tmp_path / "store.sqlite", tmp_path / "streamlit.log") as url, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            tab = browser.new_page(viewport=VIEWPORT)
            asked: list[str] = []  # every address the page asks for: the app works offline, nothing is fetched
            tab.on("request", lambda request: asked.append(request.url))
            tab.goto(f"{url}/{path}")
            tab.locator('[data-testid="stMain"] h1').filter(has_text=title).first.wait_for(timeout=90_000)
            wait_idle(tab)
            assert tab.get_by_text("Page not found").count() == 0  # /data was answered so: Data was served at / only
            if path == "queues":
                assert tab.get_by_text("The Queues page is for a team: this store has no accounts yet.").count() == 1
            address = tab.url.split("?")[0].rstrip("/")  # the page at the address asked (the root: Data's own too)
            assert address == f"{url}/{path}".rstrip("/") or (not path and address == f"{url}/data")
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            tab.screenshot(path=str(ARTIFACTS / f"deep-link-{path or 'main'}.png"))
            links = tab.locator('[data-testid="stSidebarNavLink"]').all_inner_texts()
            assert [link.strip().splitlines()[-1] for link in links] == NAVIGATION  # after the icon's name
            sidebar = tab.locator('[data-testid="stSidebar"]').inner_text()
            assert "Judge settings" in sidebar and "Dataset" in sidebar  # app.py's shared sidebar was drawn
            assert [a for a in asked if not a.startswith((url, "data:", "blob:"))] == []  # the favicon was fetched
        finally:
            browser.close()
