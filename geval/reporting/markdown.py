"""`reports/<dataset>.md`: the leaderboard, the protocol tables, the people's agreement and
every signature, with the command that made it.

Plots are written as PNG beside the Markdown when plotly can export images (kaleido is
installed and works); otherwise the HTML report of `geval.report.html_report`
is saved beside it (`<dataset>.html`, loading the `plotly.min.js` written next to it) and linked.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import shlex
import sys
from collections.abc import Callable, Sequence
from importlib import metadata
from pathlib import Path

import pandas as pd

from geval.analysis.agreement import AVERAGE, MEAN_OF_ASPECTS, agree
from geval.analysis.annotators import annotator_agreement
from geval.analysis.baselines import METRICS as BASELINES
from geval.analysis.baselines import Embedder
from geval.analysis.comparison import Comparison, compare, compared_humans
from geval.analysis.disagreement import disagreements
from geval.analysis.leaderboard import CEILING, Leaderboard, leaderboard
from geval.analysis.protocols import get_protocol
from geval.errors import StoreError
from geval.reporting.figures import correlation_bars, scatter_figure
from geval.reporting.html import html_report
from geval.reporting.tables import format_p, markdown_table
from geval.store import Store
from geval.version import __version__

#: Figures to read the Topical-Chat numbers against (issue 5; PROVENANCE.md).
TOPICALCHAT_GOALS = [
    ("G-EVAL paper, GPT-4: average Pearson over the aspects", ".575"),
    ("UniEval (G-EVAL paper, Table 2): average Pearson", ".552"),
    ("USR (G-EVAL paper, Table 2): average Pearson", ".358"),
    ("seed 000, GPT-4: mean of aspects against Overall, Pearson", ".372"),
    ("same 1.5B model, plain G-EVAL prompts, instructions first: average Pearson / mean vs Overall", ".36 / .43"),
    ("same, dialogue first and instructions last", ".23 / .33"),
    ("goal for the embedded 1.5B judge: average Pearson / mean vs Overall", ">= .50 / >= .55"),
]
PACKAGES = ("geval-studio", "llama-cpp-python", "scipy", "numpy", "pandas", "krippendorff", "rouge-score",
            "sacrebleu", "plotly")


def _fmt(value: float) -> str:
    return "–" if value is None or not math.isfinite(value) else f"{value:.3f}"


def _cell(row: pd.Series) -> str:
    return f"{_fmt(row['value'])} [{_fmt(row['low'])}, {_fmt(row['high'])}]" if math.isfinite(row["value"]) else "–"


def _versions() -> str:
    found = []
    for package in PACKAGES:
        try:
            found.append(f"{package} {metadata.version(package)}")
        except metadata.PackageNotFoundError:
            pass
    return ", ".join([f"python {sys.version.split()[0]}", *found])


def _figures(store: Store, dataset: str, combos: list[tuple[str, str]], out: Path, n_boot: int) -> list[str]:
    """PNG plots when kaleido works, else the HTML report beside the Markdown; Markdown lines."""
    if not combos:
        return ["No judge has scored this dataset yet, so there are no plots."]
    try:
        import kaleido  # noqa: F401

        lines = []
        tables = {}
        for version, signature in combos:
            tables[version] = agree(store, dataset, (version, signature), levels=("item",), n_boot=n_boot)
            frame = disagreements(store, dataset, (version, signature))
            for aspect, human in frame.dropna(subset=["human"]).drop_duplicates("aspect")[["aspect", "human"]].values:
                path = out / f"{dataset}-{version}-{aspect}.png"
                scatter_figure(frame, aspect, human).write_image(path)
                lines.append(f"![{aspect} vs {human}]({path.name})")
        stacked = pd.concat([t.assign(combo=v) for v, t in tables.items()], ignore_index=True)
        path = out / f"{dataset}-bars.png"
        correlation_bars(stacked).write_image(path)
        return [f"![correlations]({path.name})", *lines]
    except Exception:  # no kaleido, or no browser for it: the HTML report instead
        path = out / f"{dataset}.html"
        path.write_text(html_report(store, dataset, combos, n_boot=n_boot, plotlyjs="directory"), "utf-8")
        from plotly.offline import get_plotlyjs

        (out / "plotly.min.js").write_text(get_plotlyjs(), "utf-8")  # shared by the reports of this folder
        return [f"Plots (scatter, |difference| and distributions per aspect, correlation bars) are in the "
                f"HTML report [{path.name}]({path.name}) (with plotly.min.js beside it; PNG export needs kaleido, not installed)."]


def markdown_report(store: Store, dataset: str, out: str | Path = "reports", command: str | None = None,
                    baselines: Sequence[str] = tuple(BASELINES), variants: Sequence[str] = ("wmean",),
                    n_boot: int = 1000, embedder: Embedder | None = None, figures: bool = True,
                    ceiling: bool = True, calibrate: bool = False, folds: int = 5,
                    on_progress: Callable[[str], None] | None = None) -> Path:
    """Write `<out>/<dataset>.md` (and its plots) for a stored dataset; returns its path."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    board = leaderboard(store, dataset, baselines=baselines, variants=variants, ceiling=ceiling, calibrate=calibrate,
                        folds=folds, n_boot=n_boot, embedder=embedder, on_progress=on_progress)
    items = store.items(dataset)
    command = command or "python -m geval " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    now = _dt.datetime.now().astimezone().isoformat(timespec="seconds")
    protocols = list(dict.fromkeys(board.cells["protocol"]))
    lines = [f"# {dataset}: agreement with people", "",
             f"Made by `{command}` on {now} with geval {__version__} ({_versions()}).", "",
             f"{len(items)} items; {len({i.group for i in items})} groups (dialogues or documents); "
             f"{len({i.system for i in items if i.system})} systems.", ""]
    for name in protocols:
        protocol = get_protocol(name)
        lines += [f"- Protocol **{protocol.title}** (`{name}`): {protocol.reference}; leaderboard metric "
                  f"{protocol.primary}. 95% intervals: bootstrap ({n_boot} resamples) over groups."]
    lines += ["", "## Leaderboard", "",
              "Cells: correlation with the people's mean score [95% interval]. `average` is the mean of the "
              "aspect correlations (Overall excluded); `mean of aspects → Overall` is seed 000's analysis (each "
              "aspect score mapped onto 0-1 by its scale, averaged, against human Overall). A baseline's own "
              "correlation with Overall is in the Overall column. The last row is the ceiling: one annotator "
              "against the mean of the others.", "",
              markdown_table(board.wide().drop(columns=["signature"])), ""]
    notes = [f"{row}: {note}" for row, note in zip(board.rows["row"], board.rows["note"]) if note]
    if notes:
        lines += ["Notes:", "", *[f"- {n}" for n in notes], ""]
    if board.skipped:
        lines += ["Left out:", "", *[f"- {s}" for s in board.skipped], ""]
    lines += _goals(board, protocols)
    lines += _comparisons(store, dataset, n_boot)
    lines += _all_metrics(board)
    lines += ["## People: how much the annotators agree", "",
              "Krippendorff's alpha over every annotator's score, and one annotator against the mean of the "
              "others (averaged over annotators). Annotator k is the k-th score of each item.", ""]
    people = annotator_agreement(items, n_boot=n_boot)
    people["value [95% CI]"] = [_cell(r) for _, r in people.iterrows()]
    lines += [markdown_table(people[["human", "statistic", "value [95% CI]", "items", "annotators", "note"]]), ""]
    judged = board.rows[board.rows["kind"] == "judge"]["signature"]
    judge_signatures = {signature for text in judged for signature in text.split("\n")}
    lines += _runs(store, dataset, judge_signatures)
    lines += ["## Signatures", ""]
    for _, row in board.rows.iterrows():
        if row["kind"] == "ceiling":
            continue
        lines += [f"**{row['row']}**", "", "```"]
        lines += row["signature"].split("\n")
        lines += ["```", "", "<details><summary>JSON</summary>", "", "```json",
                  json.dumps(json.loads(row["signature_json"]), indent=1), "```", "", "</details>", ""]
    if figures:
        scored = store.combos(dataset)
        combos = list(zip(scored["template_version"], scored["signature"]))
        lines += ["## Plots", "", *_figures(store, dataset, combos, out, n_boot), ""]
    path = out / f"{dataset}.md"
    path.write_text("\n".join(lines), "utf-8")
    return path


def _goals(board: Leaderboard, protocols: list[str]) -> list[str]:
    """For Topical-Chat: each judge row's average and mean-vs-Overall beside the reference figures."""
    if "topicalchat-turn" not in protocols:
        return []
    cells = board.cells[(board.cells["protocol"] == "topicalchat-turn") & (board.cells["metric"] == "pearson")]
    lines = ["## Against the goals (Topical-Chat USR, Pearson)", "",
             "| row | average over the aspects | mean of aspects → Overall (calibrated rows: learned combination, "
             "held out) |", "|---|---|---|"]
    for label in board.rows["row"]:
        if label == CEILING:
            continue
        mine = cells[cells["row"] == label]
        average = mine[mine["aspect"] == AVERAGE]
        mean = mine[(mine["aspect"] == MEAN_OF_ASPECTS) | mine["aspect"].str.startswith("learned combination")]
        overall = mine[mine["human"] == "Overall"]
        lines.append(f"| {label} | {_cell(average.iloc[0]) if len(average) else '–'} | "
                     + (_cell(mean.iloc[0]) if len(mean) else
                        (f"(own score vs Overall) {_cell(overall.iloc[0])}" if len(overall) else "–")) + " |")
    lines += ["", "Reference figures:", "", *[f"- {what}: {value}" for what, value in TOPICALCHAT_GOALS], ""]
    for label in board.rows[board.rows["kind"] == "judge"]["row"]:
        mine = cells[cells["row"] == label]
        average = mine[mine["aspect"] == AVERAGE]["value"]
        mean = mine[(mine["aspect"] == MEAN_OF_ASPECTS) | mine["aspect"].str.startswith("learned combination")]["value"]
        four = mine[mine["human"].isin(["Natural", "Maintains Context", "Engaging", "Uses Knowledge"])]
        if len(average) and len(mean) and len(four) == 4:  # the goals are about all four aspects
            a, m = float(average.iloc[0]), float(mean.iloc[0])
            lines.append(f"- {label}: average {a:.3f} is {_versus(a, 0.50)} the goal .50 and {_versus(a, 0.36)} "
                         f"the reference .36; mean vs Overall {m:.3f} is {_versus(m, 0.55)} the goal .55 and "
                         f"{_versus(m, 0.43)} the reference .43.")
    return lines + [""]


def _comparisons(store: Store, dataset: str, n_boot: int) -> list[str]:
    """Per human aspect scored by several templates or judges: each against the first one scored,
    on the items both scored (paired bootstrap over groups, and Williams' test)."""
    combos = store.combos(dataset).sort_values("first", ignore_index=True)  # first scored: the reference
    by_human: dict[str, list] = {}
    for _, combo in combos.iterrows():
        for human in compared_humans(store, dataset, (combo["template_version"], combo["signature"])):
            by_human.setdefault(human, []).append(combo)
    rows = []
    for human, scored in by_human.items():
        reference = scored[0]
        for other in scored[1:]:
            a, b = (reference["template_version"], reference["signature"]), (other["template_version"], other["signature"])
            try:
                c = compare(store, dataset, a, b, human, n_boot=n_boot)
            except StoreError as exc:
                rows.append(f"| {human} | {reference['label']} | {other['label']} | {exc} ||||||")
                continue
            rows.append(f"| {human} | {reference['label']} | {other['label']} | {_fmt(c.a)} | {_fmt(c.b)} | "
                        f"{_difference(c)} | {format_p(c.p_bootstrap)} | "
                        f"{format_p(c.williams_p)} | {c.n_items} / {c.n_groups} |")
    if not rows:
        return []
    return ["## Template comparisons", "",
            "Each template (or judge) against the first one scored on the same human aspect (A), on the items both "
            "scored: Pearson of A and of B with the people's mean, B − A with its paired-bootstrap 95% interval "
            f"over groups ({n_boot} resamples) and two-sided p-value, and Williams' test for dependent "
            "correlations (it treats items as independent, so trust the bootstrap where items share a group).", "",
            "| human | A | B | r(A) | r(B) | B − A [95% CI] | p (bootstrap) | p (Williams) | items / groups |",
            "|---|---|---|---|---|---|---|---|---|", *rows, ""]


def _difference(c: Comparison) -> str:
    """B − A with its interval, or why there is none."""
    if math.isfinite(c.low):
        return f"{c.difference:+.3f} [{c.low:+.3f}, {c.high:+.3f}]"
    return f"{c.difference:+.3f} ({c.note})"


def _versus(value: float, target: float) -> str:
    return "at or above" if value >= target else "below"


def _runs(store: Store, dataset: str, signatures: set[str]) -> list[str]:
    """The runs that made the judgments in the leaderboard: template, items, status, settings as given."""
    runs = store.runs(dataset)
    runs = runs[runs["signature"].isin(signatures)] if len(runs) else runs
    if runs.empty:
        return []
    lines = ["## Runs", "", "The `geval score` runs that made these judgments (from the store's runs table).", "",
             "| run | template | items | status | started | settings as given | git commit |",
             "|---|---|---|---|---|---|---|"]
    for _, run in runs.sort_values("id").iterrows():
        environment = json.loads(run["environment"] or "{}")
        started = _dt.datetime.fromtimestamp(run["started"]).astimezone().isoformat(timespec="seconds")
        lines.append(f"| {run['id']} | {run['template']} | {run['n_items']} | {run['status']} | {started} | "
                     f"`{run['settings_given']}` | {environment.get('git_commit', '')[:12]} |")
    return lines + [""]


def _all_metrics(board: Leaderboard) -> list[str]:
    """Pearson, Spearman and Kendall of every row and column, for readers who want all three."""
    cells = board.cells.copy()
    cells["value [95% CI]"] = [_cell(r) for _, r in cells.iterrows()]
    wide = cells.pivot_table(index=["row", "column"], columns="metric", values="value [95% CI]", aggfunc="first",
                             sort=False)
    wide = wide.reindex(columns=[m for m in ("pearson", "spearman", "kendall") if m in wide.columns]).reset_index()
    n = cells.groupby(["row", "column"], sort=False)["n"].first().reset_index()
    wide = wide.merge(n, on=["row", "column"], how="left")
    return ["## Every metric", "", "Pearson, Spearman and Kendall of every cell, with n (items, or groups "
            "averaged, or systems).", "", markdown_table(wide), ""]
