"""Can the judge replace an annotator? The alternative annotator test (Calderon, Reichart & Dror,
"The Alternative Annotator Test for LLM-as-a-Judge", ACL 2025, arXiv 2501.10970).

Each annotator is left out in turn; on every item they scored, who represents the remaining
annotators better, the judge or the left-out person, is read by an alignment score (`accuracy`:
the share of the others who gave the same label; `neg-rmse`: minus the root mean squared
difference from the others' scores; `rank`: the same on each one's ranks of the items). Per item,
the judge "wins" when its alignment is at least the person's, and the person when theirs is at
least the judge's (a tie counts for both). Per annotator, a one-sided t-test of the paired
indicators asks whether the person's advantage is below `epsilon`, the cost-benefit margin a
judge is granted (the paper's guidance: .2 for experts, .15 for skilled annotators, .1 for crowd
workers); Benjamini-Yekutieli across annotators at q = .05. The **winning rate** is the share of
annotators whose test rejects: the judge passes at .5 or more. The **advantage probability** is
the mean over annotators of how often the judge is at least as good as the person: it compares
judges.

The paper's conditions: items with at least two annotators (the left-out one and one other),
annotators with at least 30 items (fewer: the t-test's normality is not to be trusted; the paper
recommends labeling more, or a Wilcoxon signed-rank test); three or more annotators (with two the
test only asks which of the two the judge is nearer). Where they do not hold, `verdict` says what
is missing instead of deciding.

A G-EVAL judge's score is a probability-weighted mean, a continuous value, while people give whole
scores and often agree exactly; a tie counts for both sides, so how the judge is read decides the
outcome. The test reads it on the annotators' own scale by default, as its most probable score
(`READINGS`); the others are shown beside it (docs/statistics.md).
"""

from __future__ import annotations

import json
import math
import warnings
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats

from geval.analysis.agreement import human_aspect_for, judge_scores
from geval.analysis.categorical import accuracy_row
from geval.analysis.correlation import correlate
from geval.analysis.disagreement import human_ranges
from geval.decisions.alttest_power import Plan, plan_study
from geval.analysis.held_out import held_out, searched_versions
from geval.errors import GevalError
from geval.scoring.imports import Imported, JudgeImportError, import_judge
from geval.store import Store

__all__ = ["ALIGNMENTS", "ANNOTATORS_BY_LAYOUT", "CONSTANT", "EPSILONS", "MIN_ITEMS", "MIN_PER_ITEM", "Q", "READINGS", "AltTest",
           "AltTestError", "Annotator", "Imported", "JudgeImportError", "Plan", "alt_test", "benjamini_yekutieli",
           "annotators_of", "caveat", "import_judge", "plan", "plan_study", "ranking", "run", "summary"]

ALIGNMENTS = {"accuracy": "the share of the other annotators who gave the same label",
              "neg-rmse": "minus the root mean squared difference from the other annotators' scores",
              "rank": "minus the root mean squared difference of ranks (each one's ranks of the items, 0-1)"}
#: The paper's cost-benefit margin by who the annotators are.
EPSILONS = {"experts": 0.2, "skilled": 0.15, "crowd": 0.1}
READINGS = {"mode": "its most probable score (on the annotators' scale)",
            "rounded": "its probability-weighted mean rounded to the scale",
            "continuous": "its probability-weighted mean as it is"}
Q = 0.05
MIN_ITEMS = 30
MIN_PER_ITEM = 2
MIN_ANNOTATORS = 3
#: Who annotated a layout's datasets, where its paper says so (SummEval: experts): the default epsilon.
ANNOTATORS_BY_LAYOUT = {"summeval": "experts"}
#: How the ranking names the baseline of each aspect: a judge that always gives the commonest label.
CONSTANT = "always the people's commonest label (a baseline)"


class AltTestError(GevalError):
    """The alternative annotator test cannot be run as asked (an unknown alignment, a numeric
    alignment on categories, no judge or no annotator)."""


@dataclass
class Annotator:
    """One left-out annotator: the items compared, how often the judge and the person won (a tie
    counts for both), the one-sided p-value, and whether Benjamini-Yekutieli rejects it (the judge
    "beats" this annotator). `tested` is False below the items the t-test needs."""

    name: str
    items: int
    judge_wins: float
    person_wins: float
    p: float
    rejected: bool = False
    tested: bool = True


@dataclass
class AltTest:
    """The test of one judge against the annotators of one aspect: its settings, the winning rate,
    the advantage probability, each annotator's line, and the verdict in words (`passed` is None
    when the conditions above do not hold: `missing` says what is missing)."""

    epsilon: float
    alignment: str
    annotators: list[Annotator]
    items: int
    dropped: int  # items with fewer than MIN_PER_ITEM annotators (or no judge score), left out
    q: float = Q
    judge: str = ""
    aspect: str = ""
    reading: str = ""
    model: str = ""  # the judge without its template ("embedded: qwen2.5-...", an imported judge's name)
    baseline: bool = False  # a judge that always gives the commonest label, not a judge of the items
    item_ids: frozenset[str] = frozenset()  # the items it was read on (`run`)
    scale: str = ""  # how its scores were put on the annotators' scale, when its own differs
    missing: list[str] = field(default_factory=list)

    @property
    def tested(self) -> list[Annotator]:
        """The annotators with enough items for the t-test."""
        return [a for a in self.annotators if a.tested]

    @property
    def winning_rate(self) -> float:
        """The share of tested annotators the judge beats (NaN when none is tested)."""
        tested = self.tested
        return sum(a.rejected for a in tested) / len(tested) if tested else math.nan

    @property
    def advantage_probability(self) -> float:
        """The mean over tested annotators of the share of items where the judge is at least as good."""
        tested = self.tested
        return float(np.mean([a.judge_wins for a in tested])) if tested else math.nan

    @property
    def passed(self) -> bool | None:
        """Whether the judge passes (winning rate >= .5); None when the test's conditions do not hold."""
        return None if self.missing else bool(self.winning_rate >= 0.5)

    def verdict(self) -> str:
        """One sentence: what was decided, and under which conditions (or what is missing)."""
        counts = f"{sum(a.rejected for a in self.tested)} of {len(self.tested)} annotators"
        if self.missing:
            return f"No verdict for {self.judge or 'the judge'}: " + "; ".join(self.missing) + "."
        outcome = "can replace" if self.passed else "cannot be shown to replace"
        return (f"{self.judge or 'The judge'} {outcome} an annotator here: it beats {counts} "
                f"(winning rate {self.winning_rate:.2f}, "
                f"{'at least' if self.passed else 'below'} .50) at epsilon {self.epsilon:g}, "
                f"{self.alignment} alignment, q = {self.q:g} (Benjamini-Yekutieli), on {self.items} items; it is at "
                f"least as good as a person on {self.advantage_probability:.0%} of the items (advantage probability)."
                + (f" {self.scale}." if self.scale else ""))

    def table(self) -> pd.DataFrame:
        """One row per annotator: items, judge wins, person wins, p, whether BY rejects."""
        return pd.DataFrame([{"annotator": a.name, "items": a.items, "judge wins": a.judge_wins,
                              "person wins": a.person_wins, "p": a.p,
                              "judge beats": ("yes" if a.rejected else "no") if a.tested else
                              f"not tested (fewer than {MIN_ITEMS} items)"} for a in self.annotators],
                            columns=["annotator", "items", "judge wins", "person wins", "p", "judge beats"])


def alt_test(people: Mapping[str, Mapping[str, object]], judge: Mapping[str, object], alignment: str = "accuracy",
             epsilon: float = 0.15, q: float = Q, min_items: int = MIN_ITEMS, min_per_item: int = MIN_PER_ITEM,
             ranks_from: Mapping[str, Mapping[str, float]] | None = None) -> AltTest:
    """The test of `judge` ({item: label}) against `people` ({annotator: {item: label}}), both on
    the same scale. Items with fewer than `min_per_item` annotators, or without a judge label, are
    left out; annotators with fewer than `min_items` items are not tested (as the paper does).
    `alignment`: ALIGNMENTS (`rank` ranks each one's labels over the items they labeled)."""
    if alignment not in ALIGNMENTS:
        raise AltTestError(f"alignment '{alignment}' is unknown; use one of {', '.join(ALIGNMENTS)}")
    if alignment == "rank":
        people, judge = _ranks(people, judge)
        alignment_of = _neg_rmse
    else:
        alignment_of = _accuracy if alignment == "accuracy" else _neg_rmse
    raters: dict[str, list[str]] = {}
    for name, labels in people.items():
        for item in labels:
            raters.setdefault(item, []).append(name)
    kept = {item for item, names in raters.items() if len(names) >= min_per_item and _present(judge.get(item))}
    annotators, p_values = [], []
    for name, labels in people.items():
        items = [item for item in labels if item in kept]
        judge_wins, person_wins = [], []
        for item in items:
            others = [people[other][item] for other in raters[item] if other != name]
            person, machine = alignment_of(labels[item], others), alignment_of(judge[item], others)
            judge_wins.append(machine >= person)
            person_wins.append(person >= machine)
        tested = len(items) >= min_items
        p = _one_sided_p(np.array(person_wins, float) - np.array(judge_wins, float), epsilon) if tested else math.nan
        annotators.append(Annotator(str(name), len(items), float(np.mean(judge_wins)) if items else math.nan,
                                    float(np.mean(person_wins)) if items else math.nan, p, tested=tested))
        if tested:
            p_values.append(p)
    for index in benjamini_yekutieli(p_values, q):
        [a for a in annotators if a.tested][index].rejected = True
    result = AltTest(epsilon, alignment, annotators, len(kept), len(raters) - len(kept), q)
    result.missing = _missing(result, len(people), min_items)
    return result


def benjamini_yekutieli(p_values: Sequence[float], q: float = Q) -> list[int]:
    """The indexes of the p-values the Benjamini-Yekutieli step-up procedure rejects at FDR `q`
    (valid under any dependence); a NaN p-value is never rejected."""
    p = np.asarray(p_values, dtype=float)
    m = len(p)
    if not m:
        return []
    order = np.argsort(np.where(np.isnan(p), np.inf, p), kind="stable")
    thresholds = np.arange(1, m + 1) / m * q / np.sum(1.0 / np.arange(1, m + 1))
    below = np.flatnonzero(p[order] <= thresholds)
    return sorted(order[: below[-1] + 1].tolist()) if len(below) else []


def _one_sided_p(differences: np.ndarray, epsilon: float) -> float:
    """p of the one-sided t-test that the mean of person-minus-judge indicators is below `epsilon`
    (as scipy gives it: 0 when they do not vary and lie below it, NaN when they all equal it)."""
    with np.errstate(divide="ignore", invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return float(stats.ttest_1samp(differences, epsilon, alternative="less").pvalue)


def _accuracy(label: object, others: list[object]) -> float:
    return sum(label == other for other in others) / len(others)


def _neg_rmse(label: object, others: list[object]) -> float:
    value = float(label)
    return -math.sqrt(sum((value - float(other)) ** 2 for other in others) / len(others))


def _present(value: object) -> bool:
    return value is not None and not (isinstance(value, float) and math.isnan(value))


def _ranks(people: Mapping[str, Mapping[str, object]], judge: Mapping[str, object]):
    """Each annotator's and the judge's labels replaced by their ranks over the items they labeled,
    scaled to 0-1 (ties share their mean rank), so that annotators of different items compare."""
    def ranked(labels: Mapping[str, object]) -> dict[str, float]:
        items = [item for item, value in labels.items() if _present(value)]
        if len(items) < 2:
            return {item: 0.5 for item in items}
        order = stats.rankdata([float(labels[item]) for item in items])
        return dict(zip(items, (order - 1) / (len(items) - 1)))
    return {name: ranked(labels) for name, labels in people.items()}, ranked(judge)


def _missing(result: AltTest, annotators: int, min_items: int) -> list[str]:
    """What the paper's conditions lack, each with what it recommends (empty when they hold)."""
    missing = []
    if annotators < MIN_ANNOTATORS:
        missing.append(f"{annotators} annotator{'s' if annotators != 1 else ''} (the test needs at least 2, and with 2 "
                       "it only asks which of the two the judge is nearer: the paper recommends 3 or more)")
    if not result.tested:
        most = max((a.items for a in result.annotators), default=0)
        missing.append(f"fewer than {min_items} items per annotator (most: {most}): the t-test needs {min_items} or "
                       "more; the paper recommends labeling more items (or a Wilcoxon signed-rank test meanwhile)")
    return missing


def run(store: Store, dataset: str, combos: Sequence[tuple[str, str]] | None = None,
        aspects: Sequence[str] | None = None, epsilon: float = EPSILONS["skilled"], alignment: str | None = None,
        reading: str = "mode", q: float = Q, min_items: int = MIN_ITEMS, baseline: bool = False,
        same_items: bool = True) -> list[AltTest]:
    """The test of each scored combination (template version, signature; default: every one on
    `dataset` but a prompt search's variants) on each human aspect it is compared with (or those of
    `aspects`), against the dataset's annotators as its human side has them (your labels each under
    your annotator's name). A G-EVAL judge is read as `reading` (READINGS); a judge imported from a
    file as it was imported. `alignment` defaults to accuracy for a categorical aspect and neg-rmse
    for scores. Read without the groups a prompt search chose a version on, as every table is.
    `baseline`: also test, per aspect, a judge that always gives the people's commonest label on
    the items the first judge scored: what the test grants a judge that knows nothing of the items
    (ties count for both sides, so on a skewed scale it may grant much). `same_items`: every judge
    of an aspect read on the items all of them scored (judges compared on the same items); else
    each on its own."""
    if reading not in READINGS:
        raise AltTestError(f"reading '{reading}' is unknown; use one of {', '.join(READINGS)}")
    found = store.combos(dataset)
    if combos is None:
        found = found[~found["searched"]]
    else:
        wanted = set(map(tuple, combos))
        found = found[[(v, s) in wanted for v, s in zip(found["template_version"], found["signature"])]]
    if found.empty:
        raise AltTestError(f"no judge is scored or imported on '{dataset}': score one, or import one "
                           "(python -m geval judge import FILE --dataset ...)")
    categories, searched, every = store.categories(dataset), searched_versions(store, dataset), store.items(dataset)
    ranges = human_ranges(every)
    read: list[tuple] = []  # (combo, human aspect, alignment, the judge's values, the items it is read on, ...)
    for combo in found.itertuples():
        imported = json.loads(combo.signature_json or "{}").get("backend") == "imported"
        items, _ = held_out(every, [combo.template_version], searched)
        scored = judge_scores(store, dataset, (combo.template_version, combo.signature),
                              "wmean" if imported or reading != "mode" else "argmax", items=items)
        human_aspects = list(dict.fromkeys(a for item in items for a in item.human))
        for key in scored.scores.columns:
            human = human_aspect_for(scored.template, key, human_aspects)
            if human is None or (aspects and human not in aspects):
                continue
            chosen = alignment or ("accuracy" if human in categories else "neg-rmse")
            if human in categories and chosen != "accuracy":
                raise AltTestError(f"{human} is categorical ({', '.join(categories[human])}): only accuracy "
                                   "alignment reads categories")
            values, scale = _on_their_scale(scored.scores[key].astype(float), scored.scales[key],
                                            None if human in categories else ranges.get(human),
                                            reading != "continuous" and not imported)
            read.append((combo, human, chosen, values.dropna(), items, imported, scale))
    common: dict[str, set[str]] = {}  # each aspect's items every judge of it scored
    for _, human, _, values, items, *_ in read:
        judged = set(values.index) & {item.id for item in items}
        common[human] = common[human] & judged if human in common else judged
    results: list[AltTest] = []
    for combo, human, chosen, values, items, imported, scale in read:
        on = [item for item in items if item.id in common[human]] if same_items else items
        result = alt_test(_people(on, human), values.to_dict(), chosen, epsilon, q, min_items)
        result.judge, result.aspect, result.model = combo.label, human, combo.model
        result.reading, result.item_ids = "as imported" if imported else reading, frozenset(i.id for i in on)
        result.scale = scale
        results.append(result)
    for human in dict.fromkeys(h for _, h, *_ in read) if baseline else ():
        combo, _, chosen, values, items, *_ = next(entry for entry in read if entry[1] == human)
        on = [item for item in items if item.id in (common[human] if same_items else set(values.index))]
        people = _people(on, human)
        counts = Counter(s for labels in people.values() for s in labels.values())
        if not counts:  # no person scored these items: nothing for a constant to copy
            continue
        commonest = counts.most_common(1)[0][0]
        shown = categories[human][int(commonest)] if human in categories else f"{commonest:g}"
        result = alt_test(people, {item.id: commonest for item in on}, chosen, epsilon, q, min_items)
        result.judge, result.model = f"always {shown} (the people's commonest label: a baseline)", CONSTANT
        result.aspect, result.reading, result.baseline = human, "a constant", True
        results.append(result)
    return results


def annotators_of(store: Store, dataset: str) -> str | None:
    """Who the annotators of a stored dataset are (a key of EPSILONS), where its layout's paper says
    so; None when the data does not say (then the paper's middle, skilled annotators, is the default)."""
    return ANNOTATORS_BY_LAYOUT.get(store.dataset_layout(dataset))


def _on_their_scale(values: pd.Series, own: tuple[float, float], theirs: tuple[float, float] | None,
                    whole: bool) -> tuple[pd.Series, str]:
    """A judge's scores on the annotators' scale, and how they were put there in words ("" when
    already on it). A judge on another scale (SummEval's fluency asked 1-3 of experts who gave 1-5;
    a judge imported with its own 1-5) is mapped linearly onto the whole-number range of the
    people's scores; `whole`: then rounded to that scale's points (the `mode` and `rounded`
    readings), as on its own scale."""
    low, high = own
    target = (math.floor(theirs[0]), math.ceil(theirs[1])) if theirs else (low, high)
    said = ""
    if target != (low, high) and high > low:
        values = target[0] + (values - low) * (target[1] - target[0]) / (high - low)
        said = (f"Its scores, on {low:g}-{high:g}, are mapped linearly onto the annotators' {target[0]:g}-{target[1]:g}"
                + (" and rounded to it" if whole else ""))
    return (values.round().clip(*target) if whole else values), said


def caveat(result: AltTest, results: Sequence[AltTest]) -> str:
    """What the constant baseline of the same aspect says of `result` ("" when it says nothing):
    ties count for both sides, so on a scale where most people give one label a judge that
    always gives it may pass, or come close to the judge."""
    constant = next((r for r in results if r.baseline and r.aspect == result.aspect), None)
    if constant is None or result.baseline or result.passed is None:
        return ""
    answer = constant.judge.split(" (")[0].removeprefix("always ")
    figures = f"winning rate {constant.winning_rate:.2f}, advantage probability {constant.advantage_probability:.2f}"
    if constant.passed and result.passed:
        return (f"A judge that always answers {answer} passes {result.aspect} too ({figures}): here the test cannot "
                "tell a judge from a constant, so this pass says little.")
    if constant.passed:
        return (f"A judge that always answers {answer} passes {result.aspect} ({figures}) where this one does not: "
                "on this aspect the test rewards giving the commonest label more than telling items apart.")
    if constant.advantage_probability >= result.advantage_probability:
        return (f"A judge that always answers {answer} is at least as good as a person on "
                f"{constant.advantage_probability:.0%} of the {result.aspect} items (its advantage probability), as "
                f"often as this judge ({result.advantage_probability:.0%}) or more: on this aspect the advantage "
                "probability rewards giving the commonest label.")
    return ""


def _people(items: list, aspect: str) -> dict[str, dict[str, float]]:
    """{annotator: {item id: score}} of `aspect` on `items`."""
    people: dict[str, dict[str, float]] = {}
    for item in items:
        for name, score in item.ratings(aspect).items():
            people.setdefault(name, {})[item.id] = score
    return people


def plan(store: Store, dataset: str, aspect: str, combo: tuple[str, str] | None = None,
         epsilon: float = EPSILONS["skilled"], alignment: str | None = None, annotators: int | None = None,
         runs: int = 200) -> Plan | None:
    """How many items a study like `dataset`'s needs for the test to pass with an 80% chance
    (`alttest_power`): its annotators' agreement on `aspect`, the judge's (`combo`, read as its most
    probable score; none: a judge as good as an annotator), `annotators` of them (default: as many
    as there are, at least 3). None when no two annotators labeled the same item yet."""
    items, categorical = store.items(dataset), aspect in store.categories(dataset)
    people = _people(items, aspect)
    judge = None
    if combo is not None:
        scored = judge_scores(store, dataset, combo, "argmax", items=items)
        key = next((k for k in scored.scores.columns if human_aspect_for(scored.template, k, [aspect])), None)
        if key:  # on the annotators' scale, as the test reads it
            values, _ = _on_their_scale(scored.scores[key].astype(float), scored.scales[key],
                                        None if categorical else human_ranges(items, [aspect]).get(aspect), True)
            judge = values.dropna().to_dict()
    chosen = alignment or ("accuracy" if categorical else "neg-rmse")
    return plan_study(people, judge, annotators, epsilon, chosen, runs=runs)


def ranking(store: Store, dataset: str, results: Sequence[AltTest]) -> pd.DataFrame:
    """Judges ranked by advantage probability, beside their correlation: one row per judge (its
    template versions taken together: one prompt per aspect is one judge), with the aspects it was
    tested on, its advantage probability and winning rate averaged over them, on how many it
    passed, and the mean of its item-level correlations with the people on the items the test read
    (Pearson; accuracy on a categorical aspect)."""
    combos = store.combos(dataset).set_index("label")
    categories, items = store.categories(dataset), store.items(dataset)
    by_model: dict[str, list[AltTest]] = {}
    for result in results:
        by_model.setdefault(result.model or result.judge, []).append(result)
    rows = []
    for model, tested in by_model.items():
        agreement = []
        for label in dict.fromkeys(r.judge for r in tested if not r.baseline):  # a constant correlates with nothing
            combo = (combos.loc[label, "template_version"], combos.loc[label, "signature"])
            scored = judge_scores(store, dataset, combo, items=items)
            for key in scored.scores.columns:
                human = human_aspect_for(scored.template, key, [r.aspect for r in tested if r.judge == label])
                if human is not None:  # on the items the test read it on
                    on = next(r.item_ids for r in tested if r.judge == label and r.aspect == human)
                    values = scored.scores[key][[i in on for i in scored.scores.index]] if on else scored.scores[key]
                    agreement.append(_agreement(values, items, human, human in categories))
        passed = [r.passed for r in tested]
        rows.append({"judge": model, "aspects": ", ".join(r.aspect for r in tested),
                     "advantage probability": _mean([r.advantage_probability for r in tested]),
                     "winning rate": _mean([r.winning_rate for r in tested]),
                     "passed": f"{sum(p is True for p in passed)} of {len(passed)}"
                               + (f" ({sum(p is None for p in passed)} without a verdict)" if None in passed else ""),
                     "agreement": _mean(agreement),
                     "reading": ", ".join(dict.fromkeys(r.reading for r in tested))})
    table = pd.DataFrame(rows)
    return table.sort_values("advantage probability", ascending=False, ignore_index=True) if rows else table


def _mean(values: Sequence[float]) -> float:
    """The mean of the defined values, NaN when none is."""
    defined = [v for v in values if math.isfinite(v)]
    return sum(defined) / len(defined) if defined else math.nan


def _agreement(judge: pd.Series, items: list, human: str, categorical: bool) -> float:
    """The judge's item-level Pearson with the people's mean (accuracy against their majority on
    a categorical aspect), without an interval: the ranking's column beside the test."""
    if categorical:
        return accuracy_row(judge, items, human, human)["value"]
    means = pd.Series({item.id: item.human_mean(human) for item in items})
    both = pd.concat([judge.astype(float), means], axis=1, join="inner").dropna()
    return correlate("pearson", both.iloc[:, 0].to_numpy(), both.iloc[:, 1].to_numpy()) if len(both) > 2 else math.nan


def summary(results: Sequence[AltTest]) -> pd.DataFrame:
    """One row per judge and aspect, ranked by advantage probability: the judge, aspect, reading,
    items, annotators, those tested (with enough items), winning rate, passed, advantage probability,
    verdict."""
    rows = [{"judge": r.judge, "aspect": r.aspect, "reading": r.reading, "alignment": r.alignment,
             "epsilon": r.epsilon, "items": r.items, "annotators": len(r.annotators), "tested": len(r.tested),
             "winning rate": r.winning_rate,
             "passed": {True: "yes", False: "no", None: "no verdict"}[r.passed],
             "advantage probability": r.advantage_probability, "verdict": r.verdict()} for r in results]
    table = pd.DataFrame(rows)
    return table.sort_values("advantage probability", ascending=False, ignore_index=True) if rows else table
