"""The report's HTML page kept in the store until the store changes (`report_page`): asked for again with the
same choices on the same store (the Agreement page after a reload, `geval report --html` run twice, the CLI after
the page), it is read back instead of made again, which takes half a minute at a million judgments. It is kept
under a key of everything the page is made from besides the store: the choices, the dataset as the caller
gave it, the code of this package and the versions of the packages it names
(`Store.keep_derived`; a page made while another process wrote to the store is not kept)."""

from __future__ import annotations

import hashlib
import html
import json
import re
from collections.abc import Callable
from functools import cache
from pathlib import Path

from geval.data.dataset import Dataset
from geval.reporting.dataset_report import PACKAGES, dataset_name, made_by, now, report
from geval.store import Store
from geval.version import installed_versions

#: Written where the page says how and when it was made, and put back as it is read: the kept page says how and
#: when it was asked for.
MADE = "\x00made\x00"
_MADE = re.compile(r"<p class=meta>(Made [^<]*? on (\S+)) with geval ")


def report_page(store: Store, dataset: str | Dataset, *, command: str | None = None,
                on_progress: Callable[[str], None] | None = None, **choices) -> str:
    """`geval.reporting.report(store, dataset, command=command, **choices).html()`, read from the store when it was
    made with the same choices since the store last changed, and kept there when it was not. `choices` are
    `report`'s other keyword arguments but `out`; a page made with an `embedder` of the caller's is not kept (its
    model is not told by the key), and the `tables` given are not in the key (they are read from this very store)."""
    key = None if choices.get("embedder") is not None else _key(dataset, choices)
    kept = store.derived(key) if key else None
    if kept is not None:
        if on_progress:
            on_progress(f"{dataset_name(dataset)}: the store is unchanged since this report was made: "
                        "read as it was kept")
        return kept.decode("utf-8").replace(MADE, html.escape(f"{made_by(command)} on {now()}"), 1)
    made_at = store.content_version()
    page = report(store, dataset, command=command, on_progress=on_progress, **choices).html()
    line = _MADE.search(page)  # the page's first paragraph: "Made by `<command>` on <time> with geval …"
    if key and line and line.group(1) == html.escape(f"{made_by(command)} on {line.group(2)}"):  # as it was said
        store.keep_derived(key, f"{page[:line.start(1)]}{MADE}{page[line.end(1):]}".encode("utf-8"), made_at)
    return page


def _key(dataset: str | Dataset, choices: dict) -> str:
    """What the page is made from besides the store's content and the command it names, hashed."""
    told = {name: value for name, value in sorted(choices.items()) if name not in ("tables", "embedder")}
    given = dataset if isinstance(dataset, str) else {
        "name": dataset.name, "path": dataset.path, "layout": dataset.layout, "items": len(dataset.items),
        "skipped": sorted(dataset.skipped.items())}  # what its summary in the report is made from beside its items
    text = json.dumps(["report page", _code(), installed_versions(PACKAGES), given, told], default=repr,
                      sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@cache
def _code() -> str:
    """A digest of this package's source files and the plotly.js it inlines: a page kept by other code is not read
    back."""
    digest = hashlib.sha256()
    root = Path(__file__).parents[1]
    for path in sorted([*root.rglob("*.py"), *root.rglob("*.js")]):
        digest.update(f"{path.relative_to(root)}\n".encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()
