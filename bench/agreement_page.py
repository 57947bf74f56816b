"""Figure (e3): the Agreement page's build time with 10,000 and 100,000 judgments, side by side.

For each size, N synthetic items (6 per group, 3 systems, two annotators each) are written as a
JSONL table, loaded, and scored by the scripted judge through the real runner into a fresh store
(`PRAGMA synchronous = OFF` on that connection only, to make the setup quick). Then, for each
size in turn and `--repeats` times over (interleaved, so both sizes see the same load): every
st.cache_data is cleared, the app is opened under streamlit.testing.v1.AppTest on that store
with that dataset and run once on its default page (which loads the dataset), and the first
run of views/5_agreement.py is timed: default settings (3 levels, 1,000 bootstrap resamples),
every table and figure built, nothing cached. Right after it, on the same store, the reference
is timed: the same judgments read with plain sqlite3 beside their human scores and Pearson,
Spearman and Kendall computed with pandas. The fastest of the repeats counts; e3 is their
ratio at each size (target <= 3x). The script fails unless the table counts every item, all 8
charts are there (the systems' forest and how the judge errs with them) and the scatter is WebGL. A rerun (its caches hit) is shown as context. A
small unreported measurement first takes the one-off costs (imports, first runs).

    python bench/agreement_page.py [--sizes 10000,100000] [--repeats 2]
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
import streamlit as st
from _common import REPO, SYNTHETIC_MAPPING, fail, header, synthetic_dataset, synthetic_template
from streamlit.testing.v1 import AppTest

import geval

APP = str(REPO / "app.py")
PAGE = "views/5_agreement.py"
DATASET = "synthetic"
#: correlation bars, the systems' forest, scatter, |difference|, distributions; how the judge errs: confusion,
#: Bland-Altman, use of the scale
CHARTS = 8
WARM_UP = 120  # items of a first, unreported measurement


def fill_store(dataset: geval.Dataset, path: Path) -> None:
    """The dataset and one judgment per item, written by the runner with the scripted judge."""
    store = geval.Store(path)
    try:
        store.db.execute("PRAGMA synchronous = OFF")  # setup only: no fsync per judgment while filling the store
        store.save_dataset(dataset)
        progress = geval.score(store, dataset.items, synthetic_template(), geval.make_judge("scripted"), DATASET)
        if progress.done != len(dataset.items):
            fail(f"scoring {len(dataset.items)} items: {progress.done} done")
    finally:
        store.close()


def opened_app(store: Path, dataset: Path) -> AppTest:
    """The app on `store` with `dataset` chosen, run once on its default page."""
    at = AppTest.from_file(APP, default_timeout=3600)
    at.session_state["store_path"] = str(store)
    at.session_state["dataset_source"] = {"path": str(dataset), "layout": None, "mapping": SYNTHETIC_MAPPING,
                                          "name": DATASET}
    timed_run(at, "the Data page")
    return at


def timed_run(at: AppTest, where: str) -> float:
    """Seconds of one run of `at`; exit 1 when it times out, raises or shows an error."""
    started = time.perf_counter()
    try:
        at.run()
    except RuntimeError as exc:  # AppTest's time limit
        fail(f"{where}: {exc}")
    seconds = time.perf_counter() - started
    if at.exception:
        fail(f"{where} raised: {at.exception[0].message}")
    if at.error:
        fail(f"{where} showed an error: {at.error[0].value}")
    return seconds


def check_page(at: AppTest, size: int) -> None:
    """Exit 1 unless the Agreement page shows the table on every item and all its figures, a large scatter in WebGL."""
    table = at.dataframe[0].value
    n = int(table.loc[(table["metric"] == "pearson") & (table["level"] == "item"), "n"].iloc[0])
    charts = at.get("plotly_chart")
    if n != size or len(charts) != CHARTS:
        fail(f"{PAGE} at {size}: the table counts {n} items, {len(charts)} of {CHARTS} charts")
    figures = [json.loads(chart.proto.spec) for chart in charts]
    scatter = next({trace["type"] for trace in figure["data"]} for figure in figures
                   if "judge vs human" in figure["layout"].get("title", {}).get("text", ""))
    if size > geval.reporting.WEBGL_ABOVE and scatter != {"scattergl"}:
        fail(f"{PAGE} at {size}: the scatter is drawn as {', '.join(sorted(scatter))}, not with WebGL")


def prepared(size: int, folder: Path) -> tuple[Path, Path]:
    """A fresh store holding `size` scored synthetic items, and their dataset file."""
    store_path, dataset_path = folder / f"store-{size}.sqlite", folder / f"synthetic-{size}.jsonl"
    fill_store(synthetic_dataset(size, dataset_path, name=DATASET), store_path)
    return store_path, dataset_path


def build_seconds(size: int, store_path: Path, dataset_path: Path) -> tuple[float, float]:
    """Seconds of the Agreement page's first run (nothing cached) and of a rerun (its caches hit)."""
    st.cache_data.clear()  # tables and frames of any earlier measurement
    st.cache_resource.clear()  # the dataset, and the store with the items it has read
    at = opened_app(store_path, dataset_path)
    at.switch_page(PAGE)
    build = timed_run(at, PAGE)
    check_page(at, size)
    rerun = timed_run(at, PAGE)
    check_page(at, size)
    return build, rerun


def plain_seconds(store_path: Path) -> float:
    """The reference: the same judgments read with plain sqlite3 beside their items' human
    scores, then Pearson, Spearman and Kendall over them with pandas (no intervals, no figures)."""
    started = time.perf_counter()
    with sqlite3.connect(store_path) as conn:
        frame = pd.read_sql_query("SELECT j.item_id, j.score, i.human FROM judgments j "
                                  "JOIN items i ON i.id = j.item_id WHERE j.dataset = ? AND j.status = 'ok'",
                                  conn, params=[DATASET])
    human = frame["human"].map(lambda text: float(np.mean(json.loads(text)["Natural"])))
    values = [frame["score"].corr(human, method=method) for method in ("pearson", "spearman", "kendall")]
    seconds = time.perf_counter() - started
    if len(frame) == 0 or not all(np.isfinite(values)):
        fail(f"plain read of {store_path}: {len(frame)} rows, correlations {values}")
    return seconds


def short(size: int) -> str:
    """100000 -> '100k'."""
    return f"{size // 1000}k" if size % 1000 == 0 else str(size)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--repeats", type=int, default=2, help="first runs per size, interleaved; the fastest counts")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    header(f"Agreement page build time under AppTest, scripted judge, sizes {sizes}, {args.repeats} repeats")
    with tempfile.TemporaryDirectory() as tmp:
        paths = {}
        for size in [WARM_UP, *sizes]:
            started = time.perf_counter()
            paths[size] = prepared(size, Path(tmp))
            print(f"{size:>7} items written, loaded and scored in {time.perf_counter() - started:.1f}s", flush=True)
        build_seconds(WARM_UP, *paths[WARM_UP])  # imports and first-run costs, so that they are in no figure
        runs = {size: [] for size in sizes}
        plain = {size: [] for size in sizes}
        for _ in range(args.repeats):
            for size in sizes:  # side by side: the page, then the plain reference, on the same store
                runs[size].append(build_seconds(size, *paths[size]))
                plain[size].append(plain_seconds(paths[size][0]))
    best = {size: min(build for build, _ in runs[size]) for size in sizes}
    reference = {size: min(plain[size]) for size in sizes}
    for size in sizes:
        print(f"{size:>7} judgments: Agreement page first run {best[size]:.2f}s (runs: "
              f"{', '.join(f'{build:.2f}s' for build, _ in runs[size])}); rerun (cached) "
              f"{min(rerun for _, rerun in runs[size]):.2f}s; plain SQLite read + pandas correlations "
              f"{reference[size]:.2f}s (runs: {', '.join(f'{s:.2f}s' for s in plain[size])})")
    for size in sizes:
        print(f"FIGURE e3 at {short(size)}: first build / plain read and correlations = "
              f"{best[size] / reference[size]:.1f}x (target <= 3x)")
    small, large = sizes[0], sizes[-1]
    print(f"build time {short(large)} / {short(small)} = {best[large] / best[small]:.1f}x (linear: {large / small:g}x)")
