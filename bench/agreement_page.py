"""Figure (e3): the Agreement page's build time and memory with 100,000 and 1,000,000 judgments, side by
side with a plain read; a changed control's time and the HTML report's at the largest size.

For each size, N synthetic items (6 per group, 3 systems, two annotators each) are written as a
JSONL table, loaded, and scored by the scripted judge through the real runner into a fresh store
(`PRAGMA synchronous = OFF` on that connection only, to make the setup quick; `--keep DIR` keeps
the stores for the next run, which reuses them: a million judgments take minutes). Then, for each size in turn and `--repeats` times over (interleaved, so both sizes see the
same load): every st.cache_data is cleared, the app is opened under streamlit.testing.v1.AppTest on
that store with that dataset and run once on its default page (which loads the dataset), and the
first run of views/5_agreement.py is timed: default settings (3 levels, 1,000 bootstrap resamples),
every table and figure built, nothing cached. Right after it, on the same store, the reference is
timed: the same judgments read with plain sqlite3 beside their human scores and Pearson, Spearman and
Kendall computed with pandas. The fastest of the repeats counts; e3 is their ratio at each size
(target <= 3x). The script fails unless the table counts every item, all 8 charts are there (the
systems' forest and how the judge errs with them) and the scatter is WebGL. A rerun (its caches hit)
is shown as context. A small unreported measurement first takes the one-off costs (imports, first
runs).

Memory: each size's page build and plain read again, each in a fresh process, as many times as the
repeats: the peak resident memory the Agreement page's first build adds (the app opened and its
dataset loaded before, as for the time) beside the peak the plain read adds to a process that has
imported pandas, the smallest of the repeats as for the time (target <= 1.5x; every run printed: one
page build in four or five peaks 10-40 MB higher at 100,000 judgments, cause not found).

Controls (`--controls N`, default the largest size): a store of N judgments, N/4 items of two aspects
(Natural, Engaging) scored by two scripted judges, the Agreement page built once, then each control
changed in turn and the page's run after it timed (target <= 2 s): the alternative annotator test's
epsilon, its judge and aspect, the systems' judge and aspect, the plots' aspect and version.

Report (`--report`): `python -m geval report synthetic --html` at the largest size with the fast
baselines (ROUGE-L, BLEU, chrF, length), twice: their scores computed and stored, then read back
(target <= 10 s).

Every time is given as wall seconds and, beside it, the CPU seconds of the process (and its children
for the report): on a loaded machine the first grows with the load, the second much less.

    python bench/agreement_page.py [--sizes 100000,1000000] [--repeats 2] [--controls N] [--report]
        [--keep DIR]
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import os
import re
import sqlite3
import subprocess
import sys
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
#: The correlations read on the page and by the plain read (item level).
METHODS = ("pearson", "spearman", "kendall")
WARM_UP = 120  # items of a first, unreported measurement
#: The controls' store: a second aspect and a second judge.
TWO_ASPECTS_MAPPING = [*SYNTHETIC_MAPPING, "score:Engaging=engaging"]
TWO_ASPECTS_TEMPLATE = """+++
name = "bench-two"
task = "Rate the response."
[[aspects]]
name = "Naturalness"
min = 1
max = 3
human = "Natural"
[[aspects]]
name = "Engagingness"
min = 1
max = 3
human = "Engaging"
+++
Context:
{{context}}

Fact:
{{fact}}

Response:
{{response}}

Form:
- Naturalness:
- Engagingness:
"""


class Clock:
    """Wall and CPU seconds (this process's, and its children's) since it was made."""

    def __init__(self):
        self.wall, self.cpu = time.perf_counter(), _cpu()

    def read(self) -> tuple[float, float]:
        return time.perf_counter() - self.wall, _cpu() - self.cpu


def _cpu() -> float:
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def shown(seconds: tuple[float, float]) -> str:
    """'12.3s (CPU 4.5s)'."""
    return f"{seconds[0]:.2f}s (CPU {seconds[1]:.2f}s)"


# --- the stores -------------------------------------------------------------------------------------


def fill_store(dataset: geval.Dataset, path: Path, template: geval.Template, judges: list) -> None:
    """The dataset and each judge's judgments of every item, written by the runner."""
    store = geval.Store(path)
    try:
        store.db.execute("PRAGMA synchronous = OFF")  # setup only: no fsync per judgment while filling the store
        store.save_dataset(dataset)
        for judge in judges:
            progress = geval.score(store, dataset.items, template, judge, DATASET)
            if progress.done != len(dataset.items):
                fail(f"scoring {len(dataset.items)} items: {progress.done} done")
    finally:
        store.close()


def second_script(prompt: str, aspect) -> dict[int, float]:
    """The second judge's answers: a distribution hashed from the prompt, other than the default script's."""
    digest = hashlib.sha256(f"second\n{aspect.key}\n{prompt}".encode()).digest()
    return {s: 1 + digest[i] for i, s in enumerate(aspect.scale)}


def prepared(size: int, folder: Path, two: bool = False) -> tuple[Path, Path]:
    """A store holding `size` scored synthetic items, and their dataset file (kept in `folder` and reused
    when it holds them already); `two`: two aspects scored by two judges."""
    kind = "two" if two else "one"
    store_path, dataset_path = folder / f"store-{kind}-{size}.sqlite", folder / f"synthetic-{kind}-{size}.jsonl"
    if store_path.exists() and dataset_path.exists():
        store = geval.Store(store_path)
        combos = store.combos(DATASET)
        store.close()
        if len(combos) == (2 if two else 1) and int(combos["ok"].sum()) == size * (4 if two else 1):
            return store_path, dataset_path
        store_path.unlink()
    started = Clock()
    dataset = synthetic_dataset(size, dataset_path, name=DATASET, aspects=2 if two else 1)
    judges = [geval.make_judge("scripted")]
    judges += [geval.make_judge("scripted", script=second_script, name="hashed-second")] if two else []
    fill_store(dataset, store_path, geval.Template.parse(TWO_ASPECTS_TEMPLATE, source="bench-two.txt") if two
               else synthetic_template(), judges)
    print(f"{size:>8} items{' (two aspects, two judges)' if two else ''} written, loaded and scored in "
          f"{shown(started.read())}", flush=True)
    return store_path, dataset_path


# --- the page ---------------------------------------------------------------------------------------


def opened_app(store: Path, dataset: Path, mapping: list[str] = SYNTHETIC_MAPPING) -> AppTest:
    """The app on `store` with `dataset` chosen, run once on its default page."""
    at = AppTest.from_file(APP, default_timeout=7200)
    at.session_state["store_path"] = str(store)
    at.session_state["dataset_source"] = {"path": str(dataset), "layout": None, "mapping": mapping, "name": DATASET}
    timed_run(at, "the Data page")
    return at


def timed_run(at: AppTest, where: str) -> tuple[float, float]:
    """Wall and CPU seconds of one run of `at`; exit 1 when it times out, raises or shows an error."""
    clock = Clock()
    try:
        at.run()
    except RuntimeError as exc:  # AppTest's time limit
        fail(f"{where}: {exc}")
    seconds = clock.read()
    if at.exception:
        fail(f"{where} raised: {at.exception[0].message}")
    if at.error:
        fail(f"{where} showed an error: {at.error[0].value}")
    return seconds


def check_page(at: AppTest, size: int) -> list[float]:
    """Exit 1 unless the Agreement page shows the table on every item and all its figures, a large scatter in WebGL
    (above DRAWN_ONE_BY_ONE_MOST items, as bubbles);
    the item-level Pearson, Spearman and Kendall it shows (as shown: three decimals)."""
    table = at.dataframe[0].value
    item = table[table["level"] == "item"].set_index("metric")
    n = int(item.loc["pearson", "n"])
    charts = at.get("plotly_chart")
    if n != size or len(charts) != CHARTS:
        fail(f"{PAGE} at {size}: the table counts {n} items, {len(charts)} of {CHARTS} charts")
    figures = [json.loads(chart.proto.spec) for chart in charts]
    scatter = next({trace["type"] for trace in figure["data"]} for figure in figures
                   if "judge vs human" in figure["layout"].get("title", {}).get("text", ""))
    drawn = "scatter" if size > geval.reporting.DRAWN_ONE_BY_ONE_MOST else "scattergl"  # bubbles, or WebGL points
    if size > geval.reporting.WEBGL_ABOVE and scatter != {drawn}:
        fail(f"{PAGE} at {size}: the scatter is drawn as {', '.join(sorted(scatter))}, not as {drawn}")
    return [float(str(item.loc[method, "value [95% CI]"]).split(" [")[0].replace("\u2212", "-")) for method in METHODS]


def fresh_page(store_path: Path, dataset_path: Path, mapping: list[str] = SYNTHETIC_MAPPING) -> AppTest:
    """The app opened on the Data page with nothing cached, switched to the Agreement page (not run yet)."""
    st.cache_data.clear()  # tables and frames of any earlier measurement
    st.cache_resource.clear()  # the dataset, and the store with the items it has read
    at = opened_app(store_path, dataset_path, mapping)
    at.switch_page(PAGE)
    return at


def build_seconds(size: int, store_path: Path, dataset_path: Path) -> tuple[tuple, tuple, list[float]]:
    """Seconds of the Agreement page's first run (nothing cached) and of a rerun (its caches hit), and the
    item-level correlations it shows."""
    at = fresh_page(store_path, dataset_path)
    build = timed_run(at, PAGE)
    shown_first = check_page(at, size)
    rerun = timed_run(at, PAGE)
    if check_page(at, size) != shown_first:
        fail(f"{PAGE} at {size}: the rerun shows other correlations than the first run")
    return build, rerun, shown_first


def plain_read(store_path: Path) -> list[float]:
    """The reference: the same judgments read with plain sqlite3 beside their items' human scores,
    then Pearson, Spearman and Kendall over them with pandas (no intervals, no figures)."""
    with sqlite3.connect(store_path) as conn:
        frame = pd.read_sql_query("SELECT j.item_id, j.score, i.human FROM judgments j "
                                  "JOIN items i ON i.id = j.item_id WHERE j.dataset = ? AND j.status = 'ok'",
                                  conn, params=[DATASET])
    human = frame["human"].map(lambda text: float(np.mean(json.loads(text)["Natural"])))
    values = [frame["score"].corr(human, method=method) for method in METHODS]
    if len(frame) == 0 or not all(np.isfinite(values)):
        fail(f"plain read of {store_path}: {len(frame)} rows, correlations {values}")
    return values


def plain_seconds(store_path: Path) -> tuple[tuple[float, float], list[float]]:
    """Wall and CPU seconds of `plain_read`, and its correlations."""
    clock = Clock()
    values = plain_read(store_path)
    return clock.read(), values


# --- memory, each in a fresh process ----------------------------------------------------------------


def _status(field: str) -> int:
    """A /proc/self/status field in kB (VmRSS: resident now, VmHWM: its peak)."""
    return int(re.search(rf"{field}:\s+(\d+)", Path("/proc/self/status").read_text()).group(1))


def _peak_added(work) -> float:
    """MB the peak resident memory rises above the resident memory before `work()` (the peak reset first)."""
    gc.collect()
    Path("/proc/self/clear_refs").write_text("5")  # resets VmHWM to VmRSS (Linux)
    before = _status("VmRSS")
    work()
    return (_status("VmHWM") - before) / 1024


def measure_memory(what: str, store_path: Path, dataset_path: Path, size: int) -> None:
    """(In the child process.) Print the peak memory `what` ("page" or "plain") adds, in MB, as JSON."""
    if what == "page":
        at = fresh_page(store_path, dataset_path)
        added = _peak_added(lambda: timed_run(at, PAGE))
        check_page(at, size)
    else:
        added = _peak_added(lambda: plain_read(store_path))
    print(json.dumps({"added_mb": added, "peak_mb": _status("VmHWM") / 1024}))


def _added(runs: list[dict]) -> str:
    """The MB each run of `memory` added, as printed."""
    return ", ".join(f"{run['added_mb']:.0f}" for run in runs)


def memory(what: str, store_path: Path, dataset_path: Path, size: int) -> dict:
    """`measure_memory` in a fresh process."""
    done = subprocess.run([sys.executable, __file__, "--memory", what, str(store_path), str(dataset_path), str(size)],
                          capture_output=True, text=True, cwd=REPO)
    if done.returncode:
        fail(f"memory of the {what} at {size}: {done.stderr.strip().splitlines()[-1:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


# --- controls and the report ------------------------------------------------------------------------


def controls(store_path: Path, dataset_path: Path) -> list[tuple[str, tuple]]:
    """The Agreement page's first build on the two-judge, two-aspect store, then each control changed
    and the run after it timed: [(what was changed, (wall, CPU seconds))]."""
    at = fresh_page(store_path, dataset_path, TWO_ASPECTS_MAPPING)
    found = [("first build", timed_run(at, PAGE))]
    found.append(("rerun, nothing changed", timed_run(at, PAGE)))

    changes = [("the alternative annotator test's epsilon", lambda: at.number_input(key="alttest_epsilon").set_value(0.2)),
               *((what, lambda key=key: _another(at.selectbox(key=key))) for what, key in (
                   ("the test's judge and aspect", "alttest_pick"), ("the systems' aspect", "systems_aspect"),
                   ("the systems' judge", "systems_judge"), ("the plots' aspect", "agree_aspect"),
                   ("the plots' version and judge", "agree_plot_combo")))]
    for what, change in changes:
        change()
        found.append((what, timed_run(at, f"{PAGE} after changing {what}")))
    return found


def _another(widget) -> None:
    """Choose another option of a select box (exit 1 when it offers one only)."""
    if len(widget.options) < 2:
        fail(f"{widget.key} offers one option only")
    widget.select_index(1 if widget.index == 0 else 0)


def report_seconds(store_path: Path, folder: Path) -> list[tuple[str, tuple, int]]:
    """`geval report synthetic --html` with the fast baselines, three times: made (the page kept before dropped;
    the first time on a new store its baselines computed too), made again with its baselines stored, and asked for
    again on the unchanged store (`geval.reporting.report_page`: read as it was kept). (which, seconds, page bytes)."""
    found = []
    for which, drop in (("made, baselines computed and stored on a new store", True),
                        ("made, baselines stored", True), ("asked again, the store unchanged: the page kept", False)):
        if drop:
            drop_kept(store_path)
        page = folder / "report.html"
        clock = Clock()
        done = subprocess.run([sys.executable, "-m", "geval", "report", DATASET, "--html", str(page), "--store",
                               str(store_path), "--baselines", "rouge-l,bleu,chrf,length"],
                              capture_output=True, text=True, cwd=REPO)
        seconds = clock.read()
        if done.returncode:
            fail(f"geval report at {store_path}: {done.stderr.strip().splitlines()[-1:]}")
        found.append((which, seconds, page.stat().st_size))
    return found


def drop_kept(store_path: Path) -> None:
    """Drop the pages the store keeps (`Store.keep_derived`), so that the next report is made."""
    with sqlite3.connect(store_path) as conn:
        conn.execute("DELETE FROM derived")
    conn.close()


def page_report_seconds(store_path: Path, dataset_path: Path) -> tuple[tuple, tuple, tuple]:
    """The Agreement page's first build, then its "Build the HTML report" button: (wall, CPU) of each. The report
    built where a user builds it, the page's reads held, beside `geval report --html` from a process of its own.
    Then the same button in a new session on the unchanged store (a browser reload): the page kept."""
    drop_kept(store_path)
    pages, reports = [], []
    for _ in range(2):
        at = fresh_page(store_path, dataset_path)
        pages.append(timed_run(at, PAGE))
        at.button(key="agree_report_build").click()
        reports.append(timed_run(at, f"{PAGE}'s report"))
        if not at.session_state["agree_report"][1].startswith(b"<!DOCTYPE html>"):
            fail("the page's report is not an HTML page")
    return pages[0], *reports


def short(size: int) -> str:
    """100000 -> '100k', 1000000 -> '1M'."""
    if size % 1_000_000 == 0:
        return f"{size // 1_000_000}M"
    return f"{size // 1000}k" if size % 1000 == 0 else str(size)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--memory"]:  # the child process of `memory`
        what, store_arg, dataset_arg, size_arg = sys.argv[2:6]
        measure_memory(what, Path(store_arg), Path(dataset_arg), int(size_arg))
        raise SystemExit(0)
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--repeats", type=int, default=2, help="first runs per size, interleaved; the fastest counts")
    parser.add_argument("--controls", type=int, help="judgments of the controls' store (default: the largest size; "
                                                     "0: none)")
    parser.add_argument("--report", action="store_true", help="time geval report --html at the largest size")
    parser.add_argument("--keep", help="a folder for the stores, kept and reused by the next run (default: a "
                                       "temporary one)")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    n_controls = sizes[-1] if args.controls is None else args.controls
    header(f"Agreement page build time under AppTest, scripted judge, sizes {sizes}, {args.repeats} repeats")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(args.keep or tmp)
        folder.mkdir(parents=True, exist_ok=True)
        paths = {size: prepared(size, folder) for size in [WARM_UP, *sizes]}
        build_seconds(WARM_UP, *paths[WARM_UP])  # imports and first-run costs, so that they are in no figure
        runs = {size: [] for size in sizes}
        plain = {size: [] for size in sizes}
        correlations, plain_correlations = {}, {}  # item level: the page's, the plain read's
        for _ in range(args.repeats):
            for size in sizes:  # side by side: the page, then the plain reference, on the same store
                *seconds, correlations[size] = build_seconds(size, *paths[size])
                runs[size].append(tuple(seconds))
                reference_seconds, plain_correlations[size] = plain_seconds(paths[size][0])
                plain[size].append(reference_seconds)
                print(f"{size:>8}: page {shown(runs[size][-1][0])}, plain {shown(plain[size][-1])}", flush=True)
        memories = {size: ([memory("page", *paths[size], size) for _ in range(args.repeats)],
                           [memory("plain", *paths[size], size) for _ in range(args.repeats)]) for size in sizes}
        found_controls = controls(*prepared(n_controls // 4, folder, two=True)) if n_controls else []
        reports = report_seconds(paths[sizes[-1]][0], Path(tmp)) if args.report else []
        from_page = page_report_seconds(*paths[sizes[-1]]) if args.report else None
    best = {size: min(runs[size], key=lambda r: r[0][0])[0] for size in sizes}
    reference = {size: min(plain[size]) for size in sizes}
    least = {size: tuple(min(runs, key=lambda run: run["added_mb"]) for runs in memories[size]) for size in sizes}
    print(f"machine after: load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for size in sizes:
        print(f"{size:>8} judgments: Agreement page first run {shown(best[size])} (runs: "
              f"{', '.join(f'{build[0]:.2f}s' for build, _ in runs[size])}); rerun (cached) "
              f"{shown(min((rerun for _, rerun in runs[size]), key=lambda r: r[0]))}; plain SQLite read + pandas "
              f"correlations {shown(reference[size])} (runs: {', '.join(f'{s[0]:.2f}s' for s in plain[size])})")
        print(f"{size:>8} judgments: item-level Pearson, Spearman, Kendall on the page "
              f"{', '.join(f'{v:.3f}' for v in correlations[size])}; by the plain read "
              f"{', '.join(f'{v:.3f}' for v in plain_correlations[size])}")
        page, reader = least[size]
        print(f"{size:>8} judgments: peak memory added by the page's first build {page['added_mb']:.0f} MB (process "
              f"peak {page['peak_mb']:.0f} MB, the dataset loaded before it; runs: {_added(memories[size][0])}); by "
              f"the plain read {reader['added_mb']:.0f} MB (process peak {reader['peak_mb']:.0f} MB; runs: "
              f"{_added(memories[size][1])})")
    for what, seconds in found_controls:
        print(f"controls, {n_controls} judgments ({n_controls // 4} items x 2 aspects x 2 judges): {what}: "
              f"{shown(seconds)}")
    for which, seconds, size in reports:
        print(f"geval report --html at {sizes[-1]} judgments, {which}: {shown(seconds)}, {size / 1e6:.1f} MB")
    for size in sizes:
        page, reader = (run["added_mb"] for run in least[size])
        print(f"FIGURE e3 at {short(size)}: first build / plain read and correlations = "
              f"{best[size][0] / reference[size][0]:.1f}x wall, {best[size][1] / reference[size][1]:.1f}x CPU "
              f"(target <= 3x); peak memory added {page / reader:.2f}x (target <= 1.5x)")
    if found_controls:
        slowest = max(found_controls[2:], key=lambda found: found[1][0])
        print(f"FIGURE e3 controls at {short(n_controls)}: slowest change ({slowest[0]}) {shown(slowest[1])} "
              "(target <= 2 s)")
    if from_page:
        print(f"the Agreement page at {sizes[-1]} judgments, then its report button: page {shown(from_page[0])}, "
              f"report {shown(from_page[1])}; in a new session on the unchanged store {shown(from_page[2])}")
    if reports:
        print(f"FIGURE e3 report at {short(sizes[-1])}: made {shown(reports[1][1])} with its baselines stored, "
              f"{shown(reports[2][1])} asked again on the unchanged store (target <= 10 s); built by the Agreement "
              f"page after its first build {shown(from_page[1])}, again in a new session {shown(from_page[2])}")
    small, large = sizes[0], sizes[-1]
    print(f"build time {short(large)} / {short(small)} = {best[large][0] / best[small][0]:.1f}x "
          f"(linear: {large / small:g}x)")
