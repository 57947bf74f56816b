"""Figure (n): the labels a second a scripted typist reaches on the Label page, every one on the item
whose text was on screen as its digit was pressed, side by side at several paces.

A table of 60 Topical-Chat responses with no human score (the e2e tests' "mine") is scored by the
scripted judge into a fresh store; `streamlit run` serves the app and Debian's chromium (Playwright)
opens the Label page. At each spacing in turn (seconds between keys), the typist presses a digit and
Enter `--labels` times, each key logged in the page with the response on screen as it was pressed
(tests/test_e2e_label.py's log). Per spacing: the items per second typed (first key to last), the
items per second stored (first key to the last of them in the store), and the agreement: labels
stored on the item on screen as their digit was pressed, out of the digits pressed, and the keys the
page refused (a key before its item was painted, a digit under 0.15 s after it appeared, or a key with no item on
screen). With `--load`, one core
is kept busy meanwhile (as the browser tests do). FIGURE n: the fastest pace with every label on its
item, in items per second stored, against the issue's 2 items a second.

    python bench/label_speed.py [--labels 12] [--spacings 0.3,0.25,0.2,0.15] [--load]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from contextlib import nullcontext
from pathlib import Path

from _common import REPO, fail, header

sys.path.insert(0, str(REPO / "tests"))
from e2e_helpers import CHROMIUM, CHROMIUM_ARGS, VIEWPORT, streamlit_process  # noqa: E402
from test_e2e_label import (KEY_LOG, cpu_burner, labels_in, not_taken_said, open_label_page,  # noqa: E402
                            pressed_on, scored_store, stored_labels)

ITEMS = 60
TARGET = 2.0  # items a second (issue 44)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--labels", type=int, default=12, help="labels typed at each spacing")
    parser.add_argument("--spacings", default="0.3,0.25,0.2,0.15", help="seconds between keys, comma-separated")
    parser.add_argument("--load", action="store_true", help="keep one core busy meanwhile")
    args = parser.parse_args()
    spacings = [float(s) for s in args.spacings.split(",")]
    if args.labels * len(spacings) > ITEMS - 1:
        fail(f"{args.labels} labels at {len(spacings)} spacings need more than the {ITEMS} items")
    if not Path(CHROMIUM).exists():
        fail(f"{CHROMIUM} is not installed (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    header("Label page: labels a second a scripted typist reaches (digit, Enter), each on the item on screen")
    print(f"{args.labels} labels per spacing; {'one core kept busy' if args.load else 'no load added'}")
    tmp = Path(tempfile.mkdtemp(prefix="label-speed-"))
    store_path = scored_store(tmp, n=ITEMS, per_group=6)
    rows = []
    with streamlit_process(store_path, tmp / "streamlit.log") as (url, _), sync_playwright() as playwright, \
            cpu_burner() if args.load else nullcontext():
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        tab = browser.new_context(viewport=VIEWPORT).new_page()
        tab.set_default_timeout(60_000)
        open_label_page(tab, url)
        tab.evaluate(KEY_LOG)
        for spacing in spacings:
            tab.evaluate("() => { window.gevalKeyLog = []; }")
            before, refused = len(labels_in(store_path)), not_taken_said(tab)
            start = time.monotonic()
            for index in range(args.labels):
                tab.keyboard.press(str(1 + index % 3))
                tab.wait_for_timeout(spacing * 1000)
                tab.keyboard.press("Enter")
                tab.wait_for_timeout(spacing * 1000)
            typed = time.monotonic() - start
            wanted = {item: int(key) for key, item in pressed_on(tab, store_path) if key.isdigit() and item}
            last = time.monotonic()
            while len(labels_in(store_path)) < before + len(wanted) and time.monotonic() - last < 30:
                tab.wait_for_timeout(100)
            stored_at = time.monotonic() - start
            stored = stored_labels(store_path)
            on_item = sum(stored.get(item) == value for item, value in wanted.items())
            tab.wait_for_timeout(1500)  # the page's answer and notice drawn
            rows.append((spacing, args.labels / typed, on_item / stored_at, on_item, args.labels,
                         not_taken_said(tab) - refused))
        browser.close()
    print(f"{'spacing s':>9}  {'typed items/s':>13}  {'stored items/s':>14}  {'on their item':>13}  {'refused':>7}")
    for spacing, typed, saved, on_item, total, refused in rows:
        print(f"{spacing:>9.3f}  {typed:>13.2f}  {saved:>14.2f}  {f'{on_item}/{total}':>13}  {refused:>7}")
    best = max((row for row in rows if row[3] == row[4]), key=lambda row: row[2], default=None)
    if best is None:
        fail("no pace put every label on its item")
    print(f"FIGURE n: {best[2]:.2f} items/s stored, every label on its item ({best[3]}/{best[4]}), at "
          f"{best[0]:.3f} s between keys = {best[2] / TARGET:.2f}x the issue's {TARGET:.0f} items/s")


if __name__ == "__main__":
    main()
