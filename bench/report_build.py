"""Figure (h): the HTML report of all 360 Topical-Chat USR responses, built cold and with its baselines
stored, side by side in one process, beside the agreement it reports.

A fresh store (a temporary file) holds the dataset scored by the scripted judge with the four
one-prompt-per-aspect templates and an edited naturalness version (five combinations, as a
student's demo: an edit against the original). `geval.reporting.report(...).html()` with the report's default
baselines (or `--baselines`) is timed twice on it: cold (every baseline computed and stored) and
stored (read back: what every later build costs). The script fails unless both builds give the
same page (but for its date line). The agreement printed beside the times is the leaderboard's
average Pearson of the one-prompt-per-aspect row, and of each baseline, as the report has it.

    OPENBLAS_NUM_THREADS=1 nice -n 10 python bench/report_build.py [--baselines rouge-l,bleu,chrf,length]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import tempfile
import time
from pathlib import Path

from _common import SHARED_DATA, fail, header

import geval

TEMPLATES = ("topicalchat-naturalness", "topicalchat-coherence", "topicalchat-engagingness", "topicalchat-groundedness")


def scored_store(path: Path) -> geval.Store:
    """The store of the figure: Topical-Chat USR scored by the scripted judge with five combinations."""
    store = geval.Store(path)
    dataset = geval.load_dataset(SHARED_DATA / "tc_usr_data.json", store=store)
    judge = geval.make_judge("scripted")
    for name in TEMPLATES:
        geval.score(store, dataset.items, geval.Template.load(name), judge, dataset.name)
    original = geval.Template.load(TEMPLATES[0])
    edited = geval.Template.parse(original.text.replace("Evaluation Steps:", "Evaluation Steps (read closely):"),
                                  source=original.name)
    store.save_template(edited, comment="an edit")
    geval.score(store, dataset.items, edited, judge, dataset.name)
    return store


def timed_report(store: geval.Store, baselines: list[str]) -> tuple[float, str, list[str]]:
    """Seconds to build the report and its HTML page, the page, and the steps it said."""
    steps: list[str] = []
    started = time.perf_counter()
    page = geval.reporting.report(store, "tc_usr_data", baselines=baselines, on_progress=steps.append).html()
    return time.perf_counter() - started, page, steps


def averages(store: geval.Store, baselines: list[str]) -> str:
    """Each row's average Pearson over the aspects, as the report's leaderboard reads it."""
    board = geval.leaderboard(store, "tc_usr_data", baselines=baselines, ceiling=False, primary_only=True)
    wide = board.wide()
    column = next(c for c in wide.columns if c == "average")
    return "; ".join(f"{row} {cell}" for row, cell in zip(wide["row"], wide[column]))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--baselines", default=",".join(geval.OPTIONS.baselines),
                        help="comma-separated (default: the report's, every baseline)")
    parser.add_argument("--store", help="a copy of this store (tc_usr_data scored, with whatever baseline scores it "
                                        "holds: the first build is then not cold) instead of a fresh one")
    args = parser.parse_args()
    baselines = [name for name in args.baselines.split(",") if name]
    if not (SHARED_DATA / "tc_usr_data.json").is_file():
        fail(f"{SHARED_DATA / 'tc_usr_data.json'} is not there")
    header("HTML report of Topical-Chat USR (360 responses, 5 combinations): cold and with its baselines stored")
    print(f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', '(unset)')}; baselines: {', '.join(baselines)}")
    with tempfile.TemporaryDirectory() as folder:
        if args.store:
            shutil.copyfile(args.store, Path(folder) / "store.sqlite")
            store = geval.Store(Path(folder) / "store.sqlite")
            print(f"store: a copy of {args.store} (the first build reads what it holds)")
        else:
            store = scored_store(Path(folder) / "store.sqlite")
        try:
            cold, cold_page, steps = timed_report(store, baselines)
            stored, stored_page, _ = timed_report(store, baselines)
        except geval.GevalError as exc:
            fail(str(exc))
        made = re.compile(r"<p class=meta>Made [^<]*</p>")
        if made.sub("", cold_page) != made.sub("", stored_page):
            fail("the build with stored baselines gives another page than the cold one")
        print(f"steps shown: {len(steps)} ({steps[0]} ... {steps[-1]})")
        print(f"report build, first: {cold:.1f} s; with its baselines stored: {stored:.1f} s "
              f"({len(stored_page) / 1e6:.1f} MB, one file)")
        print(f"average Pearson over the aspects: {averages(store, baselines)}")
        print(f"FIGURE h: report build with stored baselines {stored:.1f} s (target < 10 s); first / stored = "
              f"{cold / stored:.1f}x")
        store.close()
