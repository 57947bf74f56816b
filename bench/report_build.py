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

Figure (h2), `--summeval`: the report a supervisor opens, SummEval (1600 summaries) with the six LLMs of the
alternative annotator test's release imported, built by this code and by another (`--before`, a git ref:
today's main), side by side on one store (its baselines stored first), each build in a process of its
own: the page's size, the build's time (wall and CPU), built as `geval report --html` does (every table
computed) and as the Agreement page does (its agreement tables given); then each page opened in Chromium
(Playwright, 1400 x 900: to its load event and two frames after), its first screen saved as a PNG. The
agreement beside: both pages' leaderboard cells must be the same, and the new page's bottom line is printed.

    nice -n 10 python bench/report_build.py --summeval --before main [--shared ../shared/data] [--shots DIR]
"""

from __future__ import annotations

import argparse
import html
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import REPO, SHARED_DATA, fail, header

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


#: The Agreement page's baselines (views/5_agreement.py), which its report is built with.
PAGE_BASELINES = ("rouge-l", "bleu", "chrf", "length")
#: One build in a process of its own, with the code on its PYTHONPATH: argv store, out, "cli" or "page".
BUILD = """
import json, sys, time
import geval
store, out, how = geval.Store(sys.argv[1]), sys.argv[2], sys.argv[3]
combos = store.combos("summeval")
pairs = list(zip(combos["template_version"], combos["signature"]))
tables = {pair: geval.agree(store, "summeval", pair) for pair in pairs} if how == "page" else None
wall, cpu = time.perf_counter(), time.process_time()
page = geval.reporting.report(store, "summeval", combos=pairs if how == "page" else None, tables=tables,
                              baselines=%r, alttest_epsilon=0.2).html()
wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
open(out, "w", encoding="utf-8").write(page)
print(json.dumps({"wall": wall, "cpu": cpu, "bytes": len(page.encode())}))
""" % (PAGE_BASELINES,)
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]


def summeval_store(path: Path, shared: Path) -> geval.Store:
    """SummEval with the six LLMs of the alternative annotator test's release imported as judges."""
    store = geval.Store(path)
    geval.load_dataset(shared / "summeval.json", store=store)
    geval.alttest.import_judge(store, "summeval", shared / "alttest" / "summeval" / "llm_annotations.json")
    return store


def exported(ref: str, folder: Path) -> Path:
    """The code of git ref `ref` of this repository, exported into `folder` (its geval package and prompts)."""
    archive = subprocess.run(["git", "archive", ref, "geval", "prompts", "data"], cwd=REPO, capture_output=True)
    if archive.returncode:
        fail(f"git archive {ref}: {archive.stderr.decode().strip()}")
    folder.mkdir(parents=True)
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive.stdout, check=True)
    return folder


def build(code: Path, store: Path, out: Path, how: str) -> dict:
    """One build by the code in `code`, in a process of its own: its wall and CPU seconds and bytes."""
    done = subprocess.run([sys.executable, "-c", BUILD, str(store), str(out), how], cwd=code, capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": str(code)})
    if done.returncode:
        fail(f"the build by {code} failed: {done.stderr.strip().splitlines()[-1:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def opened(pages: dict[str, Path], shots: Path, times: int = 3) -> dict[str, tuple[float, int]]:
    """Each page opened `times` in Chromium (1400 x 900): the median seconds to its load event and two frames
    after, and the figures drawn by then; its first screen saved as `<shots>/report-<name>-first-screen.png`."""
    from playwright.sync_api import sync_playwright

    found = {}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        for name, path in pages.items():
            seconds = []
            for _ in range(times):
                page = browser.new_page(viewport={"width": 1400, "height": 900})
                start = time.perf_counter()
                page.goto(path.resolve().as_uri(), wait_until="load", timeout=600_000)
                page.evaluate("() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))")
                seconds.append(time.perf_counter() - start)
                drawn = page.evaluate("document.querySelectorAll('.js-plotly-plot').length")
                page.screenshot(path=str(shots / f"report-{name}-first-screen.png"))
                page.close()
            found[name] = (statistics.median(seconds), drawn)
        browser.close()
    return found


def leaderboard_cells(page: str) -> list[str]:
    """The cells of a report page's leaderboard table (its first table after the heading)."""
    part = page[page.index(">Leaderboard</h2>"):]
    table = part[part.index("<table>"):part.index("</table>")]
    return re.findall(r"<td>(.*?)</td>", table)


def bottom_lines(page: str) -> list[str]:
    """The new page's bottom line, as list items."""
    part = page[page.index(">Bottom line</h2>"):page.index("<details class=section>")]
    return [html.unescape(re.sub(r"<[^>]+>", "", item)) for item in re.findall(r"<li>(.*?)</li>", part)]


def summeval_figure(args) -> None:
    """Figure (h2): the SummEval six-judge report by this code and by `args.before`, side by side."""
    shared = Path(args.shared)
    for name in ("summeval.json", "alttest/summeval/llm_annotations.json"):
        if not (shared / name).is_file():
            fail(f"{shared / name} is not there")
    header("The SummEval report with six imported judges: size, build and opening, before and after")
    shots = Path(args.shots)
    shots.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary)
        store = summeval_store(folder / "store.sqlite", shared)
        started = time.perf_counter()
        geval.reporting.report(store, "summeval", baselines=PAGE_BASELINES, alttest_epsilon=0.2, figures=False)
        print(f"store: SummEval, {len(store.combos('summeval'))} judges imported; baselines stored by a first build "
              f"({time.perf_counter() - started:.1f} s)")
        store.close()
        codes = {"before": exported(args.before, folder / "before"), "after": REPO}
        results: dict[tuple[str, str], list[dict]] = {}
        for round_ in range(args.rounds):
            for how in ("cli", "page"):
                for name, code in codes.items():  # side by side: the two alternate
                    out = folder / f"{name}-{how}-{round_}.html"
                    results.setdefault((name, how), []).append(build(code, folder / "store.sqlite", out, how))
        for how, said in (("cli", "as geval report --html (every table computed)"),
                          ("page", "as the Agreement page (its agreement tables given)")):
            row = {name: results[(name, how)] for name in codes}
            wall = {name: statistics.median(r["wall"] for r in runs) for name, runs in row.items()}
            cpu = {name: statistics.median(r["cpu"] for r in runs) for name, runs in row.items()}
            size = {name: runs[-1]["bytes"] / 1e6 for name, runs in row.items()}
            print(f"build {said}, median of {args.rounds}: before {wall['before']:.1f} s (CPU {cpu['before']:.1f} s), "
                  f"{size['before']:.2f} MB; after {wall['after']:.1f} s (CPU {cpu['after']:.1f} s), "
                  f"{size['after']:.2f} MB; after / before: time {wall['after'] / wall['before']:.2f}x, CPU "
                  f"{cpu['after'] / cpu['before']:.2f}x, size {size['after'] / size['before']:.2f}x")
        pages = {name: folder / f"{name}-page-{args.rounds - 1}.html" for name in codes}
        texts = {name: path.read_text("utf-8") for name, path in pages.items()}
        same = leaderboard_cells(texts["before"]) == leaderboard_cells(texts["after"])
        print(f"agreement: the leaderboard's {len(leaderboard_cells(texts['after']))} cells "
              + ("the same in both pages" if same else "DIFFER between the pages"))
        for line in bottom_lines(texts["after"]):
            print(f"  bottom line: {line}")
        found = opened(pages, shots)
        for name, (seconds, drawn) in found.items():
            print(f"opened in Chromium ({name}): {seconds:.2f} s to its load event and two frames, {drawn} figures "
                  f"drawn; first screen: {shots / f'report-{name}-first-screen.png'}")
        after = results[("after", "page")]
        print(f"FIGURE h2: the SummEval six-judge report {after[-1]['bytes'] / 1e6:.2f} MB (target < 3), built in "
              f"{statistics.median(r['wall'] for r in after):.1f} s as the page does (target < 15), opened in "
              f"{found['after'][0]:.2f} s (target < 3); before {found['before'][0]:.2f} s")
        if not same:
            fail("the two pages report other leaderboard figures")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--baselines", default=",".join(geval.OPTIONS.baselines),
                        help="comma-separated (default: the report's, every baseline)")
    parser.add_argument("--store", help="a copy of this store (tc_usr_data scored, with whatever baseline scores it "
                                        "holds: the first build is then not cold) instead of a fresh one")
    parser.add_argument("--summeval", action="store_true", help="figure h2: the SummEval six-judge report, before "
                                                                "and after (see above)")
    parser.add_argument("--before", default="main", help="with --summeval: the git ref of the code to compare with")
    parser.add_argument("--shared", default=str(SHARED_DATA), help="with --summeval: the shared data folder")
    parser.add_argument("--rounds", type=int, default=1, help="with --summeval: builds of each kind and code")
    parser.add_argument("--shots", default=str(REPO / "tests" / "artifacts"),
                        help="with --summeval: where the first screens go (default tests/artifacts, not tracked)")
    args = parser.parse_args()
    if args.summeval:
        summeval_figure(args)
        raise SystemExit(0)
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
