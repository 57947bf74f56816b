"""A dataset's report, made by one function (`report`) for the app's download and `geval report`
alike. It opens with a summary a supervisor reads in a minute (`geval.reporting.summary`: what was
judged, the main correlation with its interval, the verdict in words, how far each judge is from
people's own agreement), then the main tables: what was judged (each row's readable name beside
its exact template version and judge), the leaderboard beside baselines and the people's ceiling,
the agreement of each template version and judge with people (table and bars in the app's
colours), each version against another on the same human aspect with a verdict in words, how each
judge errs (`geval.reporting.how_it_errs`: kappa and confusion, offset and scale use, length); then
the learning curves, the annotators' agreement, prompt searches, the flagged items and notes, each
combination's plots, and every metric, the runs and every signature. Long listings (per-item
tables, template texts and diffs, signatures) are `Details`: folded in the HTML page, at the end
of the Markdown page. This project's own goals go in only when asked for (`goals`).

It is one `Document` (`geval.reporting.document`), its rows named readably
(`geval.reporting.names`), rendered to one self-contained HTML page (`Report.html`) and to a
PDF-friendly Markdown page (`Report.markdown`); `Report.write` puts both in a folder.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from geval.analysis.agreement import AVERAGE, MEAN_OF_ASPECTS, agree
from geval.decisions.alttest import EPSILONS
from geval.analysis.annotators import COLUMNS as ANNOTATOR_COLUMNS
from geval.analysis.annotators import NOMINAL, annotator_agreement, annotator_matrix, krippendorff_alpha
from geval.analysis.baselines import METRICS as BASELINES
from geval.analysis.categorical import METRIC as ACCURACY
from geval.analysis.baselines import Embedder
from geval.analysis.comparison import compare, compared_humans
from geval.analysis.correlation import (LEVELS, MIN_GROUP_ITEMS, MIN_GROUPS, counts_shared, difference_reading,
                                      reading)
from geval.analysis.disagreement import disagreements, most_disagreeing
from geval.analysis.held_out import held_out, searched_versions
from geval.decisions.labeling import HUMAN_SIDES, MIN_FIT, SystemsError, counts, curve
from geval.analysis.leaderboard import NO_CELL, ONE_PROMPT_PER_ASPECT, Leaderboard, leaderboard
from geval.analysis.protocols import GENERIC, get_protocol
from geval.data.columns import columns as item_columns
from geval.data.dataset import Dataset
from geval.data.declared import aspect_words, category_word
from geval.data.labels import COMPARED_WITH, MAJORITY_OF
from geval.errors import GevalError, StoreError
from geval.judging.backends.openai import PRICES
from geval.judging.templates import Template
from geval.processes import cycles_uncollected
from geval.reporting import bottom_line, pairwise
from geval.reporting.document import Bullets, Code, Details, Document, Figure, Heading, Table, Text, sections
from geval.reporting.figures import aspect_rows, clip, correlation_bars, learning_curve_figure, scatter_figure
from geval.reporting.how_it_errs import report_section as how_it_errs
from geval.reporting.html import render_html
from geval.reporting.markdown import render_markdown
from geval.reporting.names import Names
from geval.reporting.replacement import replacement_section
from geval.reporting.replacement import tests as replacement_tests
from geval.reporting.systems import systems_section
from geval.reporting.summary import Judged, headline, summary_section, what_was_judged
from geval.reporting.tables import (
    curve_caption,
    curve_table,
    difference_text,
    display_table,
    format_p,
    number,
    readings,
    stack_tables,
    verdict,
)
from geval.store import Store
from geval.tuning.search import chosen_elsewhere, searched_together
from geval.version import __version__, installed_versions
from geval.wording import counted, run_status

#: Figures to read the Topical-Chat numbers against (issue 5; PROVENANCE.md): this project's own, in a
#: report only when asked for (`report(goals=True)`, `geval report --goals`).
TOPICALCHAT_GOALS = [
    ("G-EVAL paper, GPT-4: average Pearson over the aspects", ".575"),
    ("UniEval (G-EVAL paper, Table 2): average Pearson", ".552"),
    ("USR (G-EVAL paper, Table 2): average Pearson", ".358"),
    ("seed 000, GPT-4: mean of aspects against Overall, Pearson", ".372"),
    ("same 1.5B model, plain G-EVAL prompts, instructions first: average Pearson / mean vs Overall", ".36 / .43"),
    ("same, dialogue first and instructions last", ".23 / .33"),
    ("goal for the embedded 1.5B judge: average Pearson / mean vs Overall", ">= .50 / >= .55"),
]
#: How the report's intervals and p-values are made, in its words (`geval.analysis.correlation`).
JACKKNIFE = ("the delete-one-group jackknife: each dialogue or document left out in turn, Student's t on groups − 1 "
             "degrees of freedom, a correlation's interval on Fisher's z; chosen because it keeps a p < 0.05 for 5% "
             "of equally good pairs at 10-30 groups, where the percentile bootstrap gave up to 10%")
PACKAGES = ("geval-studio", "llama-cpp-python", "scipy", "numpy", "pandas", "krippendorff", "rouge-score",
            "sacrebleu", "plotly")


@dataclass
class Report:
    """A dataset's report: `html()` one self-contained page, `markdown()` a PDF-friendly page
    with the same content, `write(out)` both into a folder."""

    dataset: str
    document: Document

    def html(self) -> str:
        """The HTML page: one self-contained file (plotly.js inline, works offline), the same for the
        app's download and `geval report`."""
        return render_html(self.document)

    def markdown(self, plots: str = "") -> str:
        """The Markdown page; its plots are named and linked to the HTML page `plots`."""
        return render_markdown(self.document, plots)

    def write_html(self, path: str | Path) -> Path:
        """The HTML page alone, to `path`; returns it."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.html(), "utf-8")
        return path

    def write(self, out: str | Path) -> Path:
        """`<out>/<dataset>.md` and `<out>/<dataset>.html` (self-contained); returns the Markdown's path."""
        page = self.write_html(Path(out) / f"{self.dataset}.html")
        path = Path(out) / f"{self.dataset}.md"
        path.write_text(self.markdown(plots=page.name), "utf-8")
        return path


@dataclass
class _Scored:
    """One (template version, judge) of the report: its judgments item by item and its table."""

    label: str
    judge: str
    version: str
    signature: str
    template: Template
    frame: pd.DataFrame
    table: pd.DataFrame
    judged: int
    totals: dict[str, float]  # `Store.call_totals`
    searched: str = ""  # what prompt searches did with its template version (`geval.analysis.held_out`)
    priced: bool = True  # False for a judge whose model has no known price: its cost reads "unknown", not $0
    imported: tuple[str, str] | None = None  # a judge imported from a file: (its name, the file); no template

    def cost(self) -> str:
        """What its calls cost, as the app says it: "$0.0123", or "cost unknown" for a model of no known price."""
        if not self.priced and not self.totals["cost"]:
            return "cost unknown (no price for this model)"
        return f"${self.totals['cost']:.4f}"


def report(store: Store, dataset: str | Dataset, out: str | Path | None = None, *,
           combos: Sequence[tuple[str, str]] | None = None, command: str | None = None,
           protocols: Sequence[str] | None = None, baselines: Sequence[str] = tuple(BASELINES),
           variants: Sequence[str] = ("wmean",), levels: tuple[str, ...] = LEVELS, metric: str = "pearson",
           n_boot: int = 1000, tables: dict[tuple[str, str], pd.DataFrame] | None = None,
           embedder: Embedder | None = None, figures: bool = True, ceiling: bool = True, calibrate: bool = False,
           ensemble: bool = False, against: str | None = ONE_PROMPT_PER_ASPECT, goals: bool = False,
           folds: int = 5, top: int = 10, alttest_epsilon: float | None = EPSILONS["skilled"],
           alttest_alignment: str | None = None, alttest_by: str | None = None, per_system: int | None = None,
           compared: tuple[tuple[str, str], tuple[str, str]] | None = None,
           on_progress: Callable[[str], None] | None = None) -> Report:
    """The report of a stored dataset (a name, or the Dataset), on the (template version,
    signature) pairs `combos` (default: every one scored on it); written to `out` when given.

    Agreement tables are at `levels` in the first of `variants` (`tables` may hold some
    already computed, keyed by the pair); the leaderboard has a row per judge and variant
    beside `baselines` under `protocols` (default: the published ones of the dataset's layout,
    else the generic one), each judge row compared pairwise with the row `against` (see
    `geval.leaderboard`). `goals`: add this project's goals and reference figures for Topical-Chat
    (`TOPICALCHAT_GOALS`: the G-EVAL paper, seed 000, the embedded judge's goal); a report for
    others leaves them out. The choices of the Agreement page the report was built from:
    `alttest_epsilon`, the alternative annotator test's margin (None: no such section),
    `alttest_alignment` and `alttest_by` (None: by the aspect, by the data), the judges (`combos`),
    and `per_system`, the labels per system the systems' means are read at where people scored every
    item (None: `geval.labeling.default_labels`), and `compared`, its Compare's (A, B): the combination the others
    are compared with and the first of them (None: the original, `Store.combos`' origin, and the others in turn).
    `command` is how it was made (the CLI's command line). Raises StoreError when the dataset is not stored or a
    pair has no judgments on it.

    It opens with the bottom line (`geval.reporting.bottom_line`: per aspect the judge worth most
    labels, what it saves, whether it may replace an annotator, where the orders differ; which
    systems differ); every other part follows as a `Section`, folded in the HTML page.
    """
    # the sections read the same judgments, draw the same groups; no collection walks a million items' objects
    with store.reading_again(), counts_shared(), cycles_uncollected():
        return _report(store, dataset, out, combos=combos, command=command, protocols=protocols, baselines=baselines,
                       variants=variants, levels=levels, metric=metric, n_boot=n_boot, tables=tables, embedder=embedder,
                       figures=figures, ceiling=ceiling, calibrate=calibrate, ensemble=ensemble, against=against,
                       goals=goals, folds=folds, top=top, alttest_epsilon=alttest_epsilon,
                       alttest_alignment=alttest_alignment, alttest_by=alttest_by, per_system=per_system,
                       compared=compared, on_progress=on_progress)


def _report(store: Store, dataset: str | Dataset, out: str | Path | None, *, combos, command, protocols, baselines,
            variants, levels, metric, n_boot, tables, embedder, figures, ceiling, calibrate, ensemble, against, goals,
            folds, top, alttest_epsilon, alttest_alignment, alttest_by, per_system, compared, on_progress) -> Report:
    """`report`'s work, its arguments as given there."""
    name = dataset_name(dataset)
    items = store.items(name)
    if not items:
        raise store.not_stored(name)
    described = (Dataset(name, "", store.dataset_layout(name) or "stored", items) if isinstance(dataset, str) else
                 dataset).summary()
    names = Names(store.combos(name), store.template_comments())
    say = (lambda message: on_progress(names(message))) if on_progress else (lambda message: None)
    scored, searched, unread = _scored(store, name, items, combos, tables or {}, variants[0], levels, n_boot, say)
    if not scored:
        say(f"{name}: nothing is judged yet: the report holds the baselines and the people's own agreement "
            "(score the items first for a judge's)")
    say(f"{name}: leaderboard")
    try:
        board = leaderboard(store, name, protocols=protocols, baselines=baselines, variants=variants,
                            ceiling=ceiling, calibrate=calibrate, ensemble=ensemble, folds=folds, n_boot=n_boot,
                            embedder=embedder, against=against, on_progress=say)
    except GevalError as exc:  # the rest of the report still says what it can; a protocol asked for must apply
        if protocols:
            raise
        board, left_out = None, str(exc)
    else:
        left_out = ""
    say(f"{name}: how much the annotators agree")
    categorical = store.categories(name)
    scored_aspects = [a for a in item_columns(items).human_aspects if a not in categorical]
    people = annotator_agreement(items, scored_aspects, n_boot=n_boot) if scored_aspects else \
        pd.DataFrame(columns=ANNOTATOR_COLUMNS)
    say(f"{name}: comparisons")
    comparisons, verdicts = _comparisons(store, name, scored, metric, compared)
    pairs = [(one.version, one.signature) for one in scored] if combos is not None else None
    tested = None
    if alttest_epsilon is not None:
        say(f"{name}: can the judge replace an annotator?")
        try:
            tested = replacement_tests(store, name, alttest_epsilon, alttest_alignment, alttest_by, pairs)
        except GevalError:  # no annotators to test against: the section is left out, the rest stands
            tested = None
    aspects, left_out_aspects = bottom_line.read(store, name, items, tested, per_system,
                                                 [one.label for one in scored] if combos is not None else None, say)
    replacement, replaced = replacement_section(store, name, alttest_epsilon, say, alttest_alignment, alttest_by,
                                                pairs, tested) if tested is not None else ([], [])
    judged = _what_was_judged(described, items, scored, store.human_side(name))
    document = Document(f"{name}: agreement with {COMPARED_WITH[store.human_side(name)]}")  # "your labels" too
    agreement = {one.label: one.table for one in scored}
    opening = [Heading(document.title, 1), Text(_made(command), meta=True),
               *bottom_line.section(what_was_judged(judged, people), aspects, left_out_aspects, tested,
                                    headline(judged, board, agreement, people, metric, verdicts),
                                    COMPARED_WITH[judged.side])]
    document.add(*summary_section(judged, board, agreement, people, metric, verdicts, replaced))
    document.add(*_judged(items, described, scored, searched, unread, judged.judged))
    document.add(*_leaderboard(board, left_out, n_boot))
    document.add(*replacement)
    advantage = {(r.judge, r.aspect): r.advantage_probability for r in tested or () if not r.baseline}
    estimated = systems_section(store, name, say, per_system, figures,
                                {a.aspect: a.result or SystemsError(a.error) for a in aspects},
                                advantage if tested is not None else None)
    if estimated and (line := bottom_line.defaults_line(aspects)):
        estimated.insert(2, Text(line))  # after the section's heading and method
    document.add(*estimated)
    if goals and board is not None:
        document.add(*_goals(board))
    document.add(*_overview(scored, metric, figures, store.human_side(name)), *comparisons)
    document.add(*how_it_errs(store, name, [(one.label, (one.version, one.signature)) for one in scored], variants[0],
                              figures, say))
    document.add(*pairwise.report_section(store, name, figures))
    document.add(*_labels(store, name, len(items), figures))
    document.add(*_people(people, items, categorical))
    document.add(*_searches(store, name))
    document.add(*_flagged(store, name, items))
    if scored:
        document.add(Heading("Each template version and judge"),
                     Text("Per template version and judge: its scores against people's (a bubble per pair of scores, "
                          "sized by its items), and folded, its signature, its template and the items where it and "
                          "people disagree most."))
    for one in scored:
        say(f"{name}: {'figures and ' if figures else ''}the items of largest disagreement, {one.label}")
        document.add(*_combination(one, len(items), figures, top, categorical, store.human_side(name)))
    if board is not None:
        document.add(*_all_metrics(board), *_runs(store, name, board), *_signatures(board))
    document.blocks = opening + sections(document.blocks)  # the bottom line open, every other part folded
    result = Report(name, document.renamed(names))
    if out is not None:
        result.write(out)
    return result


def dataset_name(dataset: str | Dataset) -> str:
    """The name of a dataset given by name or as a Dataset (told by str: the app's Dataset may be of a class a code
    change has reloaded since)."""
    return dataset if isinstance(dataset, str) else dataset.name


def _made(command: str | None) -> str:
    return f"{made_by(command)} on {now()} with geval {__version__} ({_versions()})."


def made_by(command: str | None) -> str:
    """How a report was made, as its first line says: the command line (None: in the app)."""
    return f"Made by `{command}`" if command else "Made in G-Eval Studio"


def now() -> str:
    """The time a report says it was made at: local, to the second."""
    return _dt.datetime.now().astimezone().isoformat(timespec="seconds")


def _versions() -> str:
    return ", ".join([f"python {sys.version.split()[0]}", *installed_versions(PACKAGES)])


def _scored(store: Store, name: str, items, combos, tables: dict, variant: str, levels: tuple[str, ...],
            n_boot: int, say: Callable[[str], None]) -> tuple[list[_Scored], list[str], list[str]]:
    """The report's combinations, the original first (`Store.combos`' origin: a prompts/ file's version, then
    saved versions as they were saved; the A of the comparisons), the names of the search variants left
    out of them, and those that cannot be compared with people here, each with why (both only when `combos` is
    not given: one named that cannot be read is a StoreError)."""
    stored = store.combos(name)
    pairs = list(zip(stored["template_version"], stored["signature"])) if combos is None else list(combos)
    searched: dict[str, str] = {}  # a search's variants by version: read on their test groups in their own section
    for version, _ in pairs if combos is None else ():
        template = store.template(version)
        if template.made_by_search:
            searched[version] = template.name
    pairs = [(version, signature) for version, signature in pairs if version not in searched]
    info = stored.set_index(["template_version", "signature"])
    tuned = searched_versions(store, name)
    found, unread = [], []
    for version, signature in pairs:
        known = (version, signature) in info.index
        say(f"{name}: judgments and agreement of {info.loc[(version, signature), 'label'] if known else version}")
        table = tables.get((version, signature))
        try:
            frame = disagreements(store, name, (version, signature), columns="scores")  # without the judgments' text
            if table is None:
                table = agree(store, name, (version, signature), variant=variant, levels=levels, n_boot=n_boot)
        except StoreError as exc:  # e.g. a template compared with an aspect people did not score here
            if combos is not None:  # asked for by name: it must be read
                raise
            unread.append(f"{info.loc[(version, signature), 'label'] if known else version}: {exc}")
            continue
        found.append((info.loc[(version, signature), "origin"] if known else len(info), _Scored(
            info.loc[(version, signature), "label"] if known else f"{version} · {signature}",
            info.loc[(version, signature), "model"] if known else signature, version, signature,
            store.template(version), frame, table, int(frame["item_id"].nunique()),  # of current items only
            store.call_totals(name, version, signature), held_out(items, [version], tuned)[1],
            _priced(info.loc[(version, signature), "signature_json"] if known else "{}"),
            _imported(info.loc[(version, signature), "signature_json"] if known else "{}"),
        )))
    return [one for _, one in sorted(found, key=lambda pair: pair[0])], sorted(set(searched.values())), unread


def _imported(signature_json: str) -> tuple[str, str] | None:
    """A judge imported from a file, as (its name, the file); None for a judge this project ran."""
    fields = json.loads(signature_json or "{}")
    return (fields.get("model", ""), fields.get("file", "a file")) if fields.get("backend") == "imported" else None


def _priced(signature_json: str) -> bool:
    """Whether a judge's calls have a known price: a local model costs nothing, an OpenAI-compatible
    server's model is priced only when it is one of PRICES (as the Score page's estimate says)."""
    fields = json.loads(signature_json or "{}")
    return fields.get("backend") != "openai" or fields.get("model") in PRICES


# --- sections -------------------------------------------------------------------------------


def _what_was_judged(described: str, items, scored: list[_Scored], side: str) -> Judged:
    ran, found = [one for one in scored if one.imported is None], item_columns(items)
    return Judged(described, len(items), _judged_items(scored), [one.judge for one in ran],
                  [one.template.label for one in ran],
                  max((int(found.rated(aspect).max(initial=0)) for aspect in found.human_aspects), default=0),
                  [one.imported for one in scored if one.imported is not None], side)


def _judged_items(scored: list[_Scored]) -> int:
    """How many of the dataset's items at least one of `scored` judged (each one's frame holds its judgments of
    the current items only: `disagreements`; one judge's own count, `_Scored.judged`, when there is one)."""
    if len(scored) == 1:
        return scored[0].judged
    return len(pd.unique(np.concatenate([one.frame["item_id"].to_numpy(object) for one in scored]))) if scored else 0


def _judged(items, described: str, scored: list[_Scored], searched: list[str], unread: list[str],
            judged: int) -> list:
    """What was judged, a row per template version and judge: its readable name beside its exact
    template version and judge (the names the rest of the report uses), and what it cost; `judged`: how many
    items at least one of them judged (`_judged_items`); then those left out (`_scored`)."""
    blocks = [Heading("What was judged")]
    left_out = [Text("Left out of this report, not comparable with people here:"), Bullets(tuple(unread))] \
        if unread else []
    if not scored:
        return blocks + [Text(f"Nothing of the {len(items)} items is judged yet: only the baselines and the people's "
                              f"own agreement follow. Dataset: {described}."), *left_out]
    blocks += [Text(f"{judged} of {len(items)} items judged, by {len(scored)} template "
                    f"version(s) and judge(s). Dataset: {described}. Each row of this report is named by its template, "
                    "its version's comment and its judge; the exact template version and judge are beside it here, "
                    "and every signature is at the end."),
               Table(pd.DataFrame({
                   "row": [one.label for one in scored],
                   "template version": [one.template.label for one in scored], "judge": [one.judge for one in scored],
                   "items judged": [f"{one.judged} of {len(items)}" for one in scored],
                   "unscored": [int((one.frame["status"] == "unscored").sum()) for one in scored],
                   "failed": [int((one.frame["status"] == "failed").sum()) for one in scored],
                   "judge calls": [f"{one.totals['calls']:.0f}" for one in scored],
                   "prompt tokens per call": [f"{one.totals['prompt_tokens'] / max(one.totals['calls'], 1):,.0f}"
                                              for one in scored],
                   "judge time per item": [f"{one.totals['seconds'] / max(one.judged, 1):.2f} s" for one in scored],
                   "cost": [one.cost() for one in scored],
                   **({"prompt searches": [one.searched or "–" for one in scored]}
                      if any(one.searched for one in scored) else {}),
               }), verbatim=("template version", "judge")),
               Text("Unscored (an answer without a readable score) and failed judgments are left out of every "
                    "statistic. What each cost: the calls behind its judgments, each counted once (a batch's call "
                    "serves every item of its group), their prompt tokens as rendered, and their time as measured "
                    "when each call was made (so under the machine's load then), over the items judged.")]
    if searched:
        blocks.append(Text(f"Left out of this report's tables: {len(searched)} template versions made by prompt "
                           f"searches ({', '.join(searched)}), each scored only on the groups its search chose; the "
                           "section on prompt searches reads each winner on its test groups."))
    return blocks + left_out


def _labels(store: Store, name: str, n_items: int, figures: bool) -> list:
    """What the judge is compared with when the user labeled items, how many are labeled, and per
    aspect with MIN_FIT labels the learning curve: the judge alone and the combination fitted on
    the labels, against the number of labels."""
    labeled = counts(store, name)
    if labeled.empty:
        return []
    side = store.human_side(name)
    blocks = [Heading("Your labels"),
              Text(f"The human side of this report: {HUMAN_SIDES[side]}. Labeled: "
                   + "; ".join(f"{row.aspect} {row.items} of {n_items} items ({row.annotators})"
                               for row in labeled.itertuples()) + ".")]
    for aspect in labeled.loc[labeled["items"] >= MIN_FIT, "aspect"]:
        try:
            learned = curve(store, name, aspect)
        except GevalError as exc:
            blocks.append(Text(f"{aspect}: no learning curve ({exc})."))
            continue
        blocks += [Heading(f"How many labels buy how much: {aspect}", 3), Text(curve_caption(learned))]
        if figures:
            blocks.append(Figure(learning_curve_figure(learned), f"learning curve of {aspect}"))
        blocks.append(Details(f"The learning curve of {aspect}, point by point", (Table(curve_table(learned)),)))
    return blocks


def _overview(scored: list[_Scored], metric: str, figures: bool, side: str) -> list:
    """Each judge's agreement with the human `side` (`Store.human_side`): its table, its bars."""
    if not scored:
        return []
    stacked = stack_tables({one.label: one.table for one in scored})
    shown = display_table(stacked)
    if len(scored) == 1:
        shown = shown.drop(columns="combo")
    labels = stacked["metric"] == ACCURACY  # aspects labeled with categories: read by accuracy, never correlated
    metric = ACCURACY if labels.all() else metric
    mine = shown[shown["metric"] == metric] if (shown["metric"] == metric).any() else shown
    accuracy = ("the share of items where the judge's nearest label is the majority's (items whose majority is tied "
                "left out), item by item, with its 95% interval: Wilson's on the items' number weighed by the "
                "design effect of their groups (the delete-one-group jackknife's variance against the binomial's)")
    blocks = [Heading(f"Agreement with {COMPARED_WITH[side]}"), Text(
        f"Accuracy of each judge aspect against {MAJORITY_OF[side]}: {accuracy}." if labels.all() else
        "Correlation of each judge aspect with the people's mean score: over all items (item level), "
        "inside each group (dialogue, document) then averaged (group level), and over the systems' mean "
        f"scores (system level). 95% intervals over groups: item and group level from {JACKKNIFE}; "
        "system level from a bootstrap of groups. With fewer than "
        f"{MIN_GROUPS} groups no interval is given (at the system level, with fewer than {MIN_GROUPS} "
        f"systems either: such cells read \"(no interval: k systems)\"), and the group level needs "
        f"{MIN_GROUPS} groups of {MIN_GROUP_ITEMS} or more items: such cells read \"n/a (k groups, "
        f"{MIN_GROUPS} needed)\" "
        "and get no bar." + (f" An aspect labeled with categories is read by accuracy instead: {accuracy}."
                             if labels.any() else ""))]
    if figures and (stacked["metric"] == metric).any():
        blocks.append(Figure(correlation_bars(stacked, metric, side), f"accuracy against {MAJORITY_OF[side]}, per "
                             "aspect" if metric == ACCURACY else f"{metric} correlation with {COMPARED_WITH[side]}, per "
                             "aspect"))
    blocks.append(Table(mine.reset_index(drop=True)))
    if len(mine) < len(shown):
        blocks.append(Details(f"Every metric at every level ({', '.join(dict.fromkeys(shown['metric']))})",
                              (Table(shown),)))
    return blocks


def _comparisons(store: Store, name: str, scored: list[_Scored], metric: str,
                 compared: tuple[tuple[str, str], tuple[str, str]] | None = None) -> tuple[list, list[str]]:
    """Per human aspect that several combinations are compared with: each (B) against the original
    of them (A: `_scored`'s first; `compared`'s A where it is compared with the aspect, its B first among the
    others), on the items both scored: B − A with its paired interval,
    p-values, a verdict in words; then the template diff of each pair compared (folded). Returns
    the blocks and the verdicts (the summary says them too)."""
    blocks = [Heading("Template versions and judges compared")]
    by_human: dict[str, list[_Scored]] = {}
    chosen = list(compared or ())
    def place(one: _Scored) -> int:  # A, B, then the rest as they came (the original first)
        pair = (one.version, one.signature)
        return chosen.index(pair) if pair in chosen else len(chosen)

    for one in sorted(scored, key=place):
        for human in compared_humans(store, name, (one.version, one.signature)):
            by_human.setdefault(human, []).append(one)
    rows, verdicts, pairs = [], [], {}
    for human, ones in by_human.items():
        reference = ones[0]
        for other in ones[1:]:
            try:
                c = compare(store, name, (reference.version, reference.signature), (other.version, other.signature),
                            human, metric=metric)
            except StoreError as exc:
                verdicts.append(f"{human}: {other.label} against {reference.label} is not compared: {exc}")
                continue
            rows.append({"human": human, "A": reference.label, "B": other.label, f"A: {c.metric}": number(c.a),
                         f"B: {c.metric}": number(c.b), "B − A [95% CI]": difference_text(c),
                         "p (jackknife t)": format_p(c.p),
                         "items / groups": f"{c.n_items} / {c.n_groups}"})
            verdicts.append(verdict(c, reference.label, other.label, human))
            pairs[(reference.label, other.label)] = (reference, other)
    if not verdicts:
        return blocks + [Text("No two template versions or judges of this report are compared with the same human "
                              "aspect: score the same items with a second version or judge to compare them.")], []
    reference = ("the one chosen as A on the Agreement page where it is compared with the aspect, else " if compared
                 else "")
    blocks += [Text(f"Per human aspect, each template version or judge (B) against the original one (A: {reference}a "
                    "prompts/ file's version, else the one saved first), "
                    f"on the items both scored: {metric} of each with the people's mean"
                    + (" (on an aspect labeled with categories, its accuracy against "
                       f"{MAJORITY_OF[store.human_side(name)]})"
                       if any(f"A: {ACCURACY}" in row for row in rows) and metric != ACCURACY else "")
                    + f", B − A with its paired 95% interval and two-sided p-value ({JACKKNIFE}).")]
    blocks += ([Table(pd.DataFrame(rows).fillna("–"))] if rows else []) + [Bullets(tuple(verdicts))]
    for reference, other in pairs.values():
        if reference.imported or other.imported:  # a judge imported from a file has no template to compare
            continue
        if other.version == reference.version:
            blocks.append(Text(f"{other.label} and {reference.label} use the same template version: only the judge "
                               "differs."))
        else:
            blocks.append(Details(f"Template text: {reference.template.label} → {other.template.label}",
                                  (Code(reference.template.diff(other.template), "diff"),)))
    return blocks, verdicts


def _leaderboard(board: Leaderboard | None, left_out: str, n_boot: int) -> list:
    blocks = [Heading("Leaderboard")]
    if board is None:
        return blocks + [Text(f"Left out: {left_out}")]
    if board.fallback:
        blocks += [Text("Read at other levels than the dataset's own protocol, which cannot be computed here:"),
                   Bullets(tuple(board.fallback))]
    for protocol in dict.fromkeys(board.cells["protocol"]):
        chosen = get_protocol(protocol)
        if chosen is GENERIC and not board.fallback:
            blocks.append(Text("No published protocol applies to this dataset: the generic one, at item, group and "
                               "system level, each where the data allows (a level it does not allow reads n/a)."))
        blocks.append(Bullets((f"Protocol {chosen.title} ({protocol}): {chosen.reference}; leaderboard metric "
                               f"{chosen.primary}. 95% intervals over groups: the jackknife with Student's t "
                               f"(system level: a bootstrap, {n_boot} resamples, from {MIN_GROUPS} systems on).",)))
    table = board.wide(supervised=False).drop(columns=["signature"])
    blocks += [Text(cells_note(table)), Table(table)]
    blocks += _supervised(board)
    notes = [f"{row}: {note}" for row, note in zip(board.rows["row"], board.rows["note"]) if note]
    if notes:
        blocks += [Text("Notes:"), Bullets(tuple(notes))]
    if board.skipped:
        blocks += [Text("Left out:"), Bullets(tuple(board.skipped))]
    return blocks + _against(board)


def cells_note(table: pd.DataFrame) -> str:
    """What the leaderboard's cells and columns are, for the columns and rows `table` has (a column the
    table lacks is not named)."""
    columns = set(table.columns)
    said = ["Cells: correlation with the people's mean score [95% interval]."]
    if AVERAGE in columns:
        said.append(f"`{AVERAGE}` is the mean of the aspect correlations (Overall excluded where the protocol names it).")
    mean = next((c for c in table.columns if str(c).startswith(MEAN_OF_ASPECTS)), None)
    if mean:
        said.append(f"`{mean}` maps each aspect score of a judge onto 0-1 by its scale, averages them and correlates "
                    "that mean with the people's Overall.")
        if "Overall" in columns:
            said.append("A baseline's own correlation with Overall is in the Overall column.")
    if (table.get("kind") == "ceiling").any():
        said.append("The ceiling row is one annotator against the mean of the others.")
    if (table == NO_CELL).any().any():
        said.append(f"{NO_CELL} where a row has no such cell (an aspect its judge does not score, the people's "
                    "average).")
    return " ".join(said)


def _supervised(board: Leaderboard) -> list:
    """The rows that use the human labels, beside the judge's but apart from them, the best said
    to be the best of k; then each of them against the row of reference, in a table of their own."""
    best = board.best_of()
    if best is None:
        return []
    table = board.wide(supervised=True).drop(columns=["signature", "kind"])
    table.insert(1, "chosen", [f"best of {best[1]}" if row == best[0] else "" for row in table["row"]])
    blocks = [Heading("Rows that use the human labels", 3),
              Text(f"These rows are fitted on the people's scores (calibration, learned combinations with the "
                   f"baselines), each on other folds' groups than those it predicts: compare them with the rows above "
                   f"side by side, but they are not the judge, and no goal set for a judge applies to them. "
                   f"{best[0]} is the best of {best[1]} such rows compared on the same items, so its lead over the "
                   f"others is partly that choice. {_FIXED_FIT}"),
              Table(table)]
    versus = board.versus(supervised=True)
    if versus.empty:
        return blocks
    return blocks + [Text(f"Each of these rows minus {versus['against'].iloc[0]}, on the items both scored (the "
                          f"difference [95% paired interval] and its p-value, from {JACKKNIFE}): apart from the judge "
                          f"rows' differences below, because a fitted row is not the judge. The row marked best of "
                          f"{best[1]} was chosen among {best[1]}, so its lead is partly that choice; and "
                          f"{_FIXED_FIT[0].lower()}{_FIXED_FIT[1:]}"),
                     Table(versus.drop(columns="against"))]


#: What a label-using row's interval leaves out, in the report's words.
_FIXED_FIT = ("Their intervals treat the held-out predictions as fixed (no refit within the jackknife): they are "
              "narrower than the fits' own uncertainty.")


def _against(board: Leaderboard) -> list:
    """Each judge row minus the row of reference, on the items both scored."""
    if board.paired.empty:
        return []
    reference = board.paired["against"].iloc[0]
    versus = board.versus()
    if versus.empty:
        return []
    return [Heading(f"Against {reference}", 3),
            Text(f"Each judge row minus this row, in the leaderboard's metric, on the items both scored: the difference "
                 f"[95% paired interval] and its two-sided p-value, both from {JACKKNIFE}, the same group left out "
                 "of both rows. Judge rows only: the rows fitted on the human labels are compared in their own "
                 "section above. `average` is the mean of the aspects' differences with the same groups left "
                 "out; `mean of aspects → Overall` compares the rows' scores against Overall. `caveat` says what a "
                 "row is beyond the judge alone (a few-shot template's prompts hold other groups' human scores; a "
                 "pair ensemble is one of k pairs). Positive: the row agrees better with people."),
            Table(versus.drop(columns="against"))]


def _searches(store: Store, name: str) -> list:
    """The prompt searches kept for the dataset: each winner on its test groups only, beside the
    start; then every search logged, finished or not."""
    kept = store.searches(name)
    if not kept:
        logged = _search_log(store, name)
        return [Heading("Prompt searches (`geval tune`)"), *logged] if logged else []
    return [Heading("Prompt searches (`geval tune`)"),
            Text("Each search split the dialogues or documents into a tune part and a test part (seeded, by group), "
                 "chose its winner on the tune part only, and is read here on the test part only: the winner's "
                 f"correlation ({kept[-1]['metric']}, {kept[-1]['level']} level) with its 95% interval over groups, "
                 "the starting template's, and the paired difference at the same level with its p-value (the jackknife "
                 "over the test groups with Student's t). `held out?` says whether another search (another seed's "
                 "split) chose the winner's template on some of these test groups."),
            Table(searches_table(store, name, kept)), *_searched_together(store, name), *_search_log(store, name)]


def searches_table(store: Store, name: str, kept: list[dict] | None = None) -> pd.DataFrame:
    """The prompt searches kept for the dataset (`Store.searches`, or `kept` as it gave them), a row each, oldest
    first: the aspect and judge, the split, what it tried and cost in calls, its start and winner, and both read on
    the test groups only, with whether another search chose the winner on some of them."""
    kept = store.searches(name) if kept is None else kept
    rows = []
    for search in kept:
        test, elsewhere = search["test"], chosen_elsewhere(store, name, search)
        rows.append({
            "human aspect": search["human"], "judge": search["judge"],
            "groups: tune / test": f"{len(search['tune_groups'])} / {len(search['test_groups'])}",
            "variants tried": search["tried"], "judge calls": search["calls"], "start": search["start"],
            "winner (chosen on the tune groups)": search["winner"],
            "winner on the test groups": reading(test["winner"], test["low"], test["high"], search["level"], test["n"]),
            "start on the test groups": f"{test['start']:.3f}" if math.isfinite(test["start"]) else "n/a",
            "winner − start": "0 (the winner is the start)" if search["winner"] == search["start"] else
                              difference_reading(test["difference"], test["diff_low"], test["diff_high"], test["p"]),
            "held out?": f"no: another search chose this template on {len(elsewhere)} of its test groups, so "
                         "there it was picked for agreeing with these people" if elsewhere else "yes",
        })
    return pd.DataFrame(rows)


def _search_log(store: Store, name: str) -> list:
    """Every prompt search logged on the dataset (`Store.search_log`), stopped and failed ones too,
    each with how many were run on its split (and how many of them reached its test groups): a winner
    from the k-th search on one split was chosen by the analyst too."""
    logged = store.search_log(name)
    if not logged:
        return []
    searches: dict[tuple, list[dict]] = {}  # per human aspect and template searched from, over every split
    for entry in logged:
        searches.setdefault((entry["human"], _start(entry)), []).append(entry)
    rows = []
    for entry in logged:
        runs = searches[(entry["human"], _start(entry))]
        tested = sum(bool(run["tested"]) for run in runs)
        splits = len({(tuple(run["tune_groups"]), tuple(run["test_groups"])) for run in runs})
        rows.append({
            "started": _dt.datetime.fromtimestamp(entry["started"]).astimezone().isoformat(timespec="seconds"),
            "human aspect": entry["human"], "judge": entry["judge"],
            "groups: tune / test": f"{len(entry['tune_groups'])} / {len(entry['test_groups'])}",
            "searches of this template": f"{len(runs)} search{'es' if len(runs) > 1 else ''} from "
                                         f"{_start(entry) or 'this template'} on {entry['human']}, over {splits} "
                                         f"split{'s' if splits > 1 else ''}"
                                         + (f" ({tested} scored on its test groups)" if tested < len(runs) else "")
                                         + f"; this is the {_ordinal(runs.index(entry) + 1)}",
            "candidates": len(entry["candidates"] or []), "rounds": entry["rounds"],
            "winner": entry["winner"] or "–", "test part": "scored" if entry["tested"] else "not scored",
            "ended": entry["status"] + (f": {entry['reason']}" if entry["reason"] else ""),
        })
    return [Details("Every prompt search run on this dataset", (
            Text("Each search is logged when it starts, before any judge call, whatever becomes of it (stopped and "
                 "failed ones too). Several searches from one template on one human aspect, on one split or on "
                 "several (other seeds), choose among their winners on the test groups as well: read a winner "
                 "against the number of searches of its template. Every table of this report "
                 "reads a template version without the tune groups of the searches that chose it (its notes say "
                 "so), and says how many tune groups it keeps of searches that tried it without choosing it."),
            Table(pd.DataFrame(rows))))]


def _start(entry: dict) -> str:
    """The template a logged search started from, as its settings name it ("" when they do not)."""
    return (entry.get("settings") or {}).get("start", "")


def _ordinal(number: int) -> str:
    """1st, 2nd, 3rd, 4th, ..., 11th, 12th, 13th, 21st."""
    suffix = "th" if 10 <= number % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(number % 10, "th")
    return f"{number}{suffix}"


def _searched_together(store: Store, name: str) -> list:
    """Searches of several human aspects on the same test groups, read together (`searched_together`)."""
    together = searched_together(store, name)
    if together.empty:
        return []
    level = together["level"].iloc[0]
    rows = [{"": column, "starts": reading(a, a_low, a_high, level, n, groups),
             "winners (each chosen on the tune groups)": reading(b, b_low, b_high, level, n, groups),
             "winners − starts": "0 (the winner is the start)" if same else difference_reading(d, low, high, p)}
            for column, a, a_low, a_high, b, b_low, b_high, d, low, high, p, n, groups, same in
            zip(*(together[c] for c in ("column", "a", "a_low", "a_high", "b", "b_low", "b_high", "difference", "low",
                                        "high", "p", "n", "groups", "same")))]
    return [Heading("The searches together, on their test groups", 3),
            Text(f"The searches above that share their judge and test groups ({int(together['groups'].iloc[0])} "
                 f"groups), each aspect's winner beside its start on those groups only, as one row of the "
                 f"leaderboard would read them ({together['metric'].iloc[0]}, {level} level): `average` is the mean "
                 "of the aspects' correlations and `mean of aspects → Overall` sets the mean of the winners' scores "
                 "(each mapped onto 0-1 by its scale) against the people's Overall. Intervals: 95%, the jackknife "
                 "over the test groups (Student's t), the same group left out of every row, the difference paired."
                 + (f" Left out: the {int(together['left_out'].iloc[0])} test groups on which another search chose "
                    "one of these winners." if together["left_out"].iloc[0] else "")),
            Table(pd.DataFrame(rows))]


def _goals(board: Leaderboard) -> list:
    """For Topical-Chat: each judge row's average and mean-vs-Overall beside the reference figures."""
    cells = board.cells[(board.cells["protocol"] == "topicalchat-turn") & (board.cells["metric"] == "pearson")]
    if cells.empty:
        return []
    rows, lines = [], []
    caveats, kinds = board.rows.set_index("row")["caveat"], board.rows.set_index("row")["kind"]
    for label in board.rows.loc[board.rows["kind"].isin(["judge", "baseline"]), "row"]:  # not people, not fitted rows
        mine = cells[cells["row"] == label]
        average = mine[mine["aspect"] == AVERAGE]
        mean = mine[(mine["aspect"] == MEAN_OF_ASPECTS) | mine["aspect"].str.startswith("learned combination")]
        overall = mine[mine["human"] == "Overall"]
        rows.append({"row": label, "what it is": (caveats[label] or "the judge alone") if kinds[label] == "judge"
                     else "a baseline (no label)",
                     "average over the aspects": _cell(average.iloc[0]) if len(average) else "–",
                     "mean of aspects → Overall (calibrated rows: learned combination, held out)":
                         _cell(mean.iloc[0]) if len(mean) else
                         (f"(own score vs Overall) {_cell(overall.iloc[0])}" if len(overall) else "–")})
    for label in board.rows[board.rows["kind"] == "judge"]["row"]:
        mine = cells[cells["row"] == label]
        average = mine[mine["aspect"] == AVERAGE]["value"]
        mean = mine[(mine["aspect"] == MEAN_OF_ASPECTS) | mine["aspect"].str.startswith("learned combination")]["value"]
        four = mine[mine["human"].isin(["Natural", "Maintains Context", "Engaging", "Uses Knowledge"])]
        if len(average) and len(mean) and len(four) == 4:  # the goals are about all four aspects
            a, m = float(average.iloc[0]), float(mean.iloc[0])
            lines.append(f"{label}: average {a:.3f} is {_versus(a, 0.50)} the goal .50 and {_versus(a, 0.36)} "
                         f"the reference .36; mean vs Overall {m:.3f} is {_versus(m, 0.55)} the goal .55 and "
                         f"{_versus(m, 0.43)} the reference .43" + (f" ({caveats[label]})." if caveats[label] else "."))
    blocks = [Heading("Against the goals (Topical-Chat USR, Pearson)", 3), Table(pd.DataFrame(rows)),
              Text("Reference figures:"), Bullets(tuple(f"{what}: {value}" for what, value in TOPICALCHAT_GOALS))]
    return blocks + ([Bullets(tuple(lines))] if lines else [])


def _versus(value: float, target: float) -> str:
    return "at or above" if value >= target else "below"


def _cell(row: pd.Series) -> str:
    return reading(row["value"], row["low"], row["high"], row.get("level", "item"), row.get("n", 0),
                   row.get("groups"))


def _flagged(store: Store, name: str, items) -> list:
    """The items flagged or with a note on the Inspect page, with their notes and the template version
    and judge each was written beside."""
    marked = [(item_id, flag, note) for item_id, (flag, note) in store.notes().items() if flag or note.strip()]
    places = item_columns(items).positions([item_id for item_id, _, _ in marked]).tolist() if marked else []
    placed = sorted(((place, entry) for place, entry in zip(places, marked) if place >= 0), key=lambda one: one[0])
    notes = [entry for _, entry in placed]  # of the dataset's items, in their order
    blocks = [Heading("Flagged items and notes")]
    if not notes:
        return blocks + [Text("No item is flagged or has a note (flag items and keep notes on the Inspect page).")]
    by_id = {item_id: items[place] for place, (item_id, _, _) in placed}
    combos = store.combos(name)
    labels, beside = dict(zip(combos["id"], combos["label"])), store.notes_beside()
    return blocks + [Text(f"{counted(len(notes), 'item')} with a flag or a note, "
                          f"{sum(flag for _, flag, _ in notes)} of them flagged."),
                     Details(f"The {len(notes)} items flagged or with a note, with their notes", (Table(pd.DataFrame({
                         "item": [i for i, _, _ in notes], "flagged": ["yes" if f else "" for _, f, _ in notes],
                         "note": [n for _, _, n in notes],
                         "written beside": [labels.get(beside.get(i, ""), beside.get(i, "")) for i, _, _ in notes],
                         "system": [by_id[i].system for i, _, _ in notes],
                         "group": [by_id[i].group for i, _, _ in notes],
                         "response": [clip(by_id[i].response, 300) for i, _, _ in notes],
                     })),))]


def _combination(one: _Scored, n_items: int, figures: bool, top: int, categorical: dict[str, tuple[str, ...]],
                 side: str) -> list:
    """One template version and judge: what it judged, its signature, its template, its plots
    and the items where it and the people disagree most (a label named by its word, `categorical`'s), read
    against the human `side` (`labeling.HUMAN_SIDES`)."""
    frame = one.frame
    blocks = [Heading(one.label, 3),
              Text(f"{one.judged} of {n_items} items judged; {int((frame['status'] == 'unscored').sum())} unscored "
                   f"and {int((frame['status'] == 'failed').sum())} failed judgments, left out of the statistics."),
              Details(f"{one.label}: its judge signature and template", (
                  Text("Judge signature:"), Code(one.signature),
                  Text(f"Template {one.template.name}, version {one.version}:"), Code(one.template.text)))]
    pairs = frame.dropna(subset=["human"]).drop_duplicates("aspect")[["aspect", "aspect_name", "human"]]
    for aspect, aspect_name, human in pairs.itertuples(index=False):
        blocks.append(Heading(f"{aspect_name} (judge) vs {human} ({COMPARED_WITH[side]})", 4))
        words = aspect_words(categorical, human)
        if figures:  # how it errs (its section) draws the differences and the use of the scale
            blocks.append(Figure(scatter_figure(frame, aspect, human, per_item=False, words=words, side=side),
                                 f"{one.label}: {aspect_name} against {human}"))
        worst = most_disagreeing(aspect_rows(frame, aspect, human), top)
        blocks.append(Details(f"{one.label}: the {len(worst)} items of largest disagreement on {aspect_name}",
                              (Table(pd.DataFrame({
                                  "item": worst["item_id"], "system": worst["system"],
                                  "judge": (worst["judge_01"] * (len(words) - 1)).round().map(  # its nearest label
                                      lambda v: category_word(v, words)) if words else worst["score"].map(number),
                                  "human": worst["human_score"].map(lambda v: category_word(v, words) if words else
                                                                    number(v)),
                                  "|difference| (0-1)": worst["disagreement"].map(number),
                                  "response": [clip(str(t), 300) for t in worst["response"]],
                              })),)))
    return blocks


def _people(people: pd.DataFrame, items, categorical: dict[str, tuple[str, ...]]) -> list:
    """How much the annotators agree (`annotator_agreement`), every aspect's statistics folded; a
    categorical aspect's nominal alpha."""
    blocks = [Heading("People: how much the annotators agree")]
    if len(people):
        shown = people.assign(**{"value [95% CI]": [reading(v, lo, hi, "item", n) for v, lo, hi, n in
                                                    zip(people["value"], people["low"], people["high"],
                                                        people["items"])]})
        blocks += [Text("Krippendorff's alpha over every annotator's score, and one annotator against the mean of the "
                        "others (averaged over annotators: the human ceiling of the summary). Annotators are told "
                        "apart by name where the file names them, else by position (#k: the k-th score of each "
                        f"item). 95% intervals from {JACKKNIFE}; for these rows too it holds 95% at 10-30 groups, "
                        "where the percentile bootstrap missed the true value up to 10.7% of the time "
                        "(docs/statistics.md)."),
                   Details(f"Alpha and leave-one-out correlations of the {counted(people['human'].nunique(), 'human aspect')}",
                           (Table(shown[["human", "statistic", "value [95% CI]", "items", "annotators", "note"]]),))]
    for aspect, found in categorical.items():
        matrix = annotator_matrix(items, aspect)
        alpha = krippendorff_alpha(matrix, NOMINAL)
        paired = bool((np.isfinite(matrix).sum(axis=0) >= 2).any())  # an item with two people's labels
        blocks.append(Text(f"{aspect} is categorical ({', '.join(found)}): Krippendorff's alpha, nominal, "
                           + (f"{alpha:.3f}." if math.isfinite(alpha) else  # it read "nan."
                              "n/a: people give one label throughout." if paired else
                              "n/a: no item has two people's labels.")))
    return blocks


def _all_metrics(board: Leaderboard) -> list:
    """Pearson, Spearman and Kendall of every row and column, for readers who want all three."""
    cells = board.cells.copy()
    cells["value [95% CI]"] = readings(cells)
    wide = cells.pivot_table(index=["row", "column"], columns="metric", values="value [95% CI]", aggfunc="first",
                             sort=False)
    wide = wide.reindex(columns=[m for m in ("pearson", "spearman", "kendall") if m in wide.columns]).reset_index()
    n = cells.groupby(["row", "column"], sort=False)["n"].first().reset_index()
    return [Heading("Every metric"),
            Details("Pearson, Spearman and Kendall of every leaderboard cell, with n (items, or groups averaged, or "
                    "systems)", (Table(wide.merge(n, on=["row", "column"], how="left")),))]


def _runs(store: Store, name: str, board: Leaderboard) -> list:
    """The runs that made the judgments in the leaderboard: template, items, status, settings as given."""
    judged = board.rows[board.rows["kind"] == "judge"]["signature"]
    signatures = {signature for text in judged for signature in text.split("\n")}
    runs = store.runs(name)
    runs = runs[runs["signature"].isin(signatures)] if len(runs) else runs
    if runs.empty:
        return []
    rows = []
    for _, run in runs.sort_values("id").iterrows():
        environment = json.loads(run["environment"] or "{}")
        rows.append({"run": run["id"], "template": run["template"], "items": run["n_items"],
                     "status": run_status(run["status"], run["went_on"]),
                     "started": _dt.datetime.fromtimestamp(run["started"]).astimezone().isoformat(timespec="seconds"),
                     "settings as given": run["settings_given"], "git commit": environment.get("git_commit", "")[:12]})
    return [Heading("Runs"), Details(f"The {len(rows)} scoring runs that made these judgments (from the store's runs "
                                     "table)", (Table(pd.DataFrame(rows), verbatim=("template",)),))]


def _signatures(board: Leaderboard) -> list:
    """Each row's full signature, string and JSON, under the row's readable name (folded)."""
    blocks = []
    for _, row in board.rows.iterrows():
        if row["kind"] == "ceiling":
            continue
        blocks += [Text(row["row"]), Code(row["signature"]),
                   Code(json.dumps(json.loads(row["signature_json"]), indent=1), "json")]
    return [Heading("Signatures"), Details(f"The signature of each of the {len(blocks) // 3} rows: every setting that "
                                           "made its scores", tuple(blocks))]
