"""The report's section "Can the judge replace an annotator?": the alternative annotator test
(`geval.decisions.alttest`) of every judge on every aspect with several annotators, the judges
ranked by advantage probability beside their agreement, each verdict in words, each annotator's
line, and how many items a study like this one needs for an 80% chance to pass."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pandas as pd

from geval.decisions import alttest
from geval.reporting.document import Bullets, Heading, Table, Text
from geval.reporting.tables import format_p
from geval.store import Store

METHOD = ("The alternative annotator test (Calderon, Reichart & Dror, ACL 2025): each annotator is left out in turn "
          "and, item by item, the judge and the left-out person are compared by how well each represents the "
          "remaining annotators ({alignment}); a tie counts for both. Per annotator, a one-sided t-test asks whether "
          "the person's advantage is below epsilon = {epsilon:g} ({kind}), the margin the judge's lower cost earns "
          "it; where the items fall in groups (dialogues, documents), whose items are not independent, the t-test "
          "takes its standard error over the annotator's groups (cluster-robust; 10 groups or more), else over items "
          "as the paper does. Benjamini-Yekutieli across annotators at q = {q:g}. The winning rate is the share of annotators the "
          "judge beats: it passes at .50 or more. The advantage probability, how often the judge is at least as good "
          "as a person, compares judges. A G-EVAL judge is read as {reading}: its probability-weighted mean is a "
          "continuous value, people give whole scores, and a tie counts for both sides, so the reading decides much "
          "(the other readings are beside it); a judge imported from a file is read as imported. The paper's "
          "conditions: 2 or more annotators per "
          "item, 30 or more items per annotator, 3 or more annotators; where they do not hold no verdict is given.")


def replacement_section(store: Store, dataset: str, epsilon: float, on_progress: Callable[[str], None],
                        alignment: str | None = None, by: str | None = None,
                        combos: Sequence[tuple[str, str]] | None = None,
                        results: list[alttest.AltTest] | None = None) -> tuple[list, list[str]]:
    """The section's blocks, and per aspect the verdict on each judge, highest advantage probability first
    (none when no judge is scored or no aspect has two annotators). The test as the Agreement page chose it:
    `epsilon`, `alignment` (None: by the aspect), `by` (None: by the data), of the judges `combos` (template
    version, signature; None: every one); `results`: the test already run so (`tests`)."""
    if results is None:  # else said as they were run
        on_progress(f"{dataset}: can the judge replace an annotator?")
    try:
        results = results if results is not None else tests(store, dataset, epsilon, alignment, by, combos)
    except alttest.AltTestError:
        return [], []
    results = [r for r in results if r.annotators and len(r.annotators) >= 2]
    if not [r for r in results if not r.baseline]:
        return [], []
    kind = next((k for k, v in alttest.EPSILONS.items() if v == epsilon), "chosen by hand")
    summary = alttest.summary(results)
    if (~summary["reading"].isin([*alttest.STORED, "a constant"])).any():  # a G-EVAL judge: its other readings beside
        on_progress(f"{dataset}: can the judge replace an annotator? its other readings")
        for reading in (r for r in alttest.READINGS if r != "mode"):
            values = {(r.judge, r.aspect): r.advantage_probability
                      for r in alttest.run(store, dataset, combos, epsilon=epsilon, alignment=alignment,
                                           reading=reading, by=by)}
            summary[f"read {reading}"] = [values.get((j, a)) if r not in alttest.STORED else None
                                          for j, a, r in zip(summary["judge"], summary["aspect"], summary["reading"])]
    per_annotator = _per_annotator([r for r in results if not r.baseline])
    blocks = [Heading("Can the judge replace an annotator?"),
              Text(METHOD.format(alignment=ALIGNED.get(alignment, alignment or ""),
                                 epsilon=epsilon, kind=kind, q=alttest.Q,
                                 reading=alttest.READINGS["mode"].replace(" (on the annotators' scale)",
                                                                          ", on the annotators' own scale"))),
              Text("Judges by advantage probability, one row per template version and judge, beside their agreement "
                   "with people (item-level Pearson over the same aspects; accuracy on a categorical aspect). The "
                   "baseline always gives one label: every label of each aspect's scale is tried, and the best of "
                   "them shown; it knows nothing of the items, so a judge should stand well above it."),
              Table(rounded(alttest.ranking(store, dataset, results))),
              Text("Each judge on each aspect (advantage probability under the other readings beside it):"),
              Table(rounded(summary.drop(columns=["verdict"]))),
              Bullets(tuple(alttest.full_verdict(r, results)
                            for r in sorted(results, key=lambda r: -r.advantage_probability) if not r.baseline)),
              Text("Each annotator left out in turn:"),
              Table(rounded(per_annotator))]
    plans = _plans(store, dataset, results, epsilon)
    if plans:
        blocks += [Text("How many items a study like this one needs (studies like it drawn many times at each size; "
                        "docs/statistics.md, \"How many items\"):"),
                   Bullets(tuple(plans))]
    judges = [r for aspect in dict.fromkeys(r.aspect for r in results)  # each judge's, the best first
              for r in sorted((r for r in results if r.aspect == aspect and not r.baseline),
                              key=lambda r: -r.advantage_probability)]
    return blocks, [f"{r.aspect}: {alttest.full_verdict(r, results)}" for r in judges]


#: Each alignment as the report says it (None: by the aspect).
ALIGNED = {None: "accuracy for categories, else minus the RMSE from the others' scores",
           **{name: f"{name}: {what}" for name, what in alttest.ALIGNMENTS.items()}}


def tests(store: Store, dataset: str, epsilon: float, alignment: str | None = None, by: str | None = None,
          combos: Sequence[tuple[str, str]] | None = None) -> list[alttest.AltTest]:
    """The alternative annotator test of every judge of `combos` (None: every one) with the constant beside
    it, as the report reads it (`replacement_section`, the bottom line, the systems' advantage column)."""
    return alttest.run(store, dataset, combos, epsilon=epsilon, alignment=alignment, baseline=True, by=by)


def _plans(store: Store, dataset: str, results: list[alttest.AltTest], epsilon: float) -> list[str]:
    """Per aspect, the planning sentence for the judge of highest advantage probability on it."""
    combos = store.combos(dataset).set_index("label")
    lines = []
    for aspect in dict.fromkeys(r.aspect for r in results):
        best = max((r for r in results if r.aspect == aspect and not r.baseline), key=lambda r: r.advantage_probability)
        combo = (combos.loc[best.judge, "template_version"], combos.loc[best.judge, "signature"])
        found = alttest.plan(store, dataset, aspect, combo, epsilon=epsilon, alignment=best.alignment, by=best.by)
        if found is not None:
            lines.append(f"{aspect} ({best.judge}): {alttest.plan_line(best, results, found)}")
    return lines


def _per_annotator(results: list[alttest.AltTest]) -> pd.DataFrame:
    """Each judge's and aspect's annotators, one table: their groups where its test was over groups
    (a whole number), "–" where it was over items."""
    table = pd.concat([r.table().assign(judge=r.judge, aspect=r.aspect) for r in results], ignore_index=True)
    if "groups" in table:
        table["groups"] = [f"{g:.0f}" if g == g else "–" for g in table["groups"]]
    return table[["judge", "aspect", *(c for c in ("annotator", "items", "groups", "judge wins", "person wins", "p",
                                                   "judge beats") if c in table)]]


def rounded(frame: pd.DataFrame) -> pd.DataFrame:
    """Numbers to three decimals, as the report's other tables print them; p-values as the page prints
    them ("< 0.001", not "0.000")."""
    return frame.apply(lambda column: column.map(format_p) if column.name == "p" else column.map(
        lambda v: f"{v:.3f}" if isinstance(v, float) and v == v else ("–" if v is None or isinstance(v, float) else v)))
