"""People's reasons into the judge's prompt (`geval.labeling.reasons`): candidate templates made from
the items where people corrected the judge, each measured by the prompt search on groups it was not
made from, and adopted only when it beats the start there.

1. `corrections`: the labels that carry a reason (a queue's, or every label of the dataset) and
   differ from the judge's score of the item by MIN_GAP_SHARE of the scale's range or more, largest first.
2. Candidates, each a template of its own (`geval.tuning.variants.with_block`):
   - *corrected examples*: k corrected items of k different groups shown before the item to rate,
     each with the people's score and their reason;
   - *rubric*: where the judge follows instructions (an OpenAI-compatible model), a few rubric
     sentences it drafts from the reasons (`draft_rubric`), shown the same way. When the judge,
     asked by default, answers no rubric sentence (a model that only scores), the corrected examples
     are measured alone and the result says why there is no rubric (`rubric_note`).
3. The groups a candidate was made from (its examples' groups; for the rubric, every reason's group)
   take no part in the search: `geval.tune` splits the other groups into tune and test groups, tries
   the candidates against the start on the tune groups (successive halving, its multiple-comparison
   honesty: the winner is read on the test groups only), and reads the winner minus the start on the
   test groups with its 95% interval (paired over groups).
4. A candidate is adopted only when it won and its gain's interval on the test groups lies above 0.
   When the start (or its argmax read) won, the best candidate from reasons on the tune groups is read
   on the test groups all the same (one candidate, chosen on the tune groups only), so that what the
   reasons gained is said with its interval, adopted or not.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

import pandas as pd

import numpy as np

from geval.analysis.agreement import judge_scores
from geval.analysis.comparison import paired_columns
from geval.errors import StoreError
from geval.judging.examples import human_score
from geval.judging.judgment import accepted_settings
from geval.scoring.lookup import Signer
from geval.scoring.runner import score
from geval.data.items import Item
from geval.errors import GevalError
from geval.judging.judgment import Judge
from geval.judging.templates import Template
from geval.store import Store
from geval.tuning.search import TuneProgress, TuneResult, default_start, tune
from geval.tuning.variants import only_aspect, with_block

#: How far a label must be from the judge's score to count as a correction: this share of the scale's range
#: (1 point on 1-5, half a point on 1-3: a narrow judge's weighted means rarely stray further).
MIN_GAP_SHARE = 0.25
#: What the rubric's drafter is asked (its answer's lines that start with "- " are the sentences).
RUBRIC_PROMPT = """Annotators rated {aspect} on a scale of {low} to {high}. An automatic judge scored these \
items differently, and the annotators said why their score is right:

{reasons}

Write {n} short rubric sentences that would make a judge score {aspect} the way the annotators do. \
Write each sentence on its own line starting with "- ", and nothing else."""
EXAMPLE = "Example {n}:\n{text}\nPeople's score: {score:g} of {low}-{high}. Why: {reason}\n\n"
EXAMPLES_TITLE = "Here are items people scored, with the reason for their score:\n\n"
RUBRIC_TITLE = "Annotators' guidance for {aspect}:\n{sentences}\n\n"
LAST_TURNS = 3  # the turns of an example's conversation shown before its response


class ReasonsError(GevalError):
    """Reasons cannot make a candidate: too few corrections, no groups left to measure on, no drafter."""


@dataclass(frozen=True)
class Correction:
    """A label with a reason that differs from the judge's score of its item."""

    item: Item
    score: float
    judge: float
    reason: str
    annotator: str

    @property
    def gap(self) -> float:
        return abs(self.score - self.judge)


@dataclass
class ReasonsResult:
    """What the reasons made and how it fared: the candidates (name -> template), the groups they were
    made from (left out of the search), the search, the gain (winner minus start on the test groups,
    with its interval) and whether a candidate is adopted, and why."""

    candidates: dict[str, Template]
    source_groups: list[str]
    search: TuneResult
    gain: float
    low: float
    high: float
    adopted: str
    verdict: str
    drafted: list[str] = field(default_factory=list)
    reading: dict = field(default_factory=dict)  # the test groups' reading the gain comes from (its note, p)
    rubric_note: str = ""  # why no rubric was tried, when the judge was asked for one and gave none


def corrections(store: Store, dataset: str, aspect: str, low: int, high: int, combo: tuple[str, str] | None = None,
                queue: str | None = None) -> list[Correction]:
    """The labels of `aspect` (on the scale low-high) with a reason that differ from the judge's score
    (`combo`, default the latest; mapped onto that scale when the judge's differs) by MIN_GAP_SHARE of the
    scale's range or more,
    largest gap first: a queue's labels, or every label of the dataset."""
    labels = store.queue_labels(queue) if queue else store.labels(dataset)
    labels = labels[(labels["aspect"].str.lower() == aspect.lower()) & (labels["reason"].fillna("") != "")]
    scored = judge_scores(store, dataset, combo)
    key = next((k for k, h in scored.humans.items() if h.lower() == aspect.lower()), None)
    if key is None:
        raise ReasonsError(f"the judge scores no aspect compared with {aspect}; score one first")
    j_low, j_high = scored.scales[key]
    judged = low + (scored.scores[key] - j_low) * (high - low) / (j_high - j_low)
    items = {item.id: item for item in store.items(dataset)}
    gap = MIN_GAP_SHARE * (high - low)
    found = [Correction(items[row.item_id], float(row.score), float(judged[row.item_id]), row.reason, row.annotator)
             for row in labels.itertuples() if row.item_id in items and row.item_id in judged.index
             and math.isfinite(judged[row.item_id]) and abs(row.score - judged[row.item_id]) >= gap]
    return sorted(found, key=lambda c: (-c.gap, c.item.id))


def example_text(correction: Correction, n: int, low: int, high: int) -> str:
    """One corrected item as the examples block shows it: its last turns, response, score and reason."""
    item = correction.item
    turns = "\n".join(turn.render() for turn in item.context[-LAST_TURNS:])
    text = (f"{turns}\nResponse: {item.response}" if turns else f"Text: {item.response}").replace("{{", "{ {")
    return EXAMPLE.format(n=n, text=text, score=correction.score, low=low, high=high,
                          reason=" ".join(correction.reason.split()))


def with_corrected_examples(start: Template, aspect_key: str, chosen: list[Correction]) -> Template:
    """`start` (its aspect `aspect_key` only) with the `chosen` corrections shown before the item to rate."""
    first = only_aspect(start, aspect_key)
    aspect = first.aspect(aspect_key)
    block = EXAMPLES_TITLE + "".join(example_text(c, n, aspect.min, aspect.max) for n, c in enumerate(chosen, 1)) \
        + "Now the one to rate.\n\n"
    return with_block(first, block, f"{len(chosen)} corrected examples with reasons", f"reasons-k{len(chosen)}")


def draft_rubric(drafter: Judge, aspect: str, low: int, high: int, found: list[Correction], n: int = 3) -> list[str]:
    """Up to `n` rubric sentences the instruction-following `drafter` (an OpenAI-compatible model)
    writes from the corrections' reasons. ReasonsError for another judge, or an answer with none."""
    if drafter.settings.get("backend") != "openai":
        raise ReasonsError("rubric sentences are drafted by an instruction-following model behind an "
                           "OpenAI-compatible API; this judge is not one (the corrected examples are tried alone)")
    reasons = "\n".join(f"- people {c.score:g}, judge {c.judge:.1f}: {' '.join(c.reason.split())}" for c in found)
    answer = drafter.generate(RUBRIC_PROMPT.format(aspect=aspect, low=low, high=high, reasons=reasons, n=n), 300)
    sentences = [line.strip()[2:].strip() for line in answer.splitlines() if line.strip().startswith("- ")]
    sentences = [s.replace("{{", "{ {") for s in sentences if s][:n]
    if not sentences:
        raise ReasonsError(f"the drafter answered no rubric sentence (lines starting with '- '): {answer[:120]!r}")
    return sentences


def with_rubric(start: Template, aspect_key: str, sentences: list[str]) -> Template:
    """`start` (its aspect `aspect_key` only) with the rubric `sentences` shown before the item to rate."""
    first = only_aspect(start, aspect_key)
    block = RUBRIC_TITLE.format(aspect=first.aspect(aspect_key).name, sentences="\n".join(f"- {s}" for s in sentences))
    return with_block(first, block, "a rubric drafted from people's reasons", "reasons-rubric")


def from_reasons(store: Store, dataset: str, judge: Judge, human: str, budget: int, start: Template | None = None,
                 combo: tuple[str, str] | None = None, queue: str | None = None, k: int = 2,
                 drafter: Judge | None = None, groups: list[str] | None = None, tune_share: float = 0.5,
                 seed: int = 0, stop: threading.Event | None = None,
                 on_progress: Callable[[TuneProgress], None] | None = None) -> ReasonsResult:
    """Make the candidates from people's reasons (module docstring) and measure them with `geval.tune`
    against `start` (default: the dataset's starting template for `human`) within `budget` judge calls,
    on `groups` (default all) less the groups the candidates were made from. `drafter`: the model that
    drafts the rubric (default the judge, when it is OpenAI-compatible; no rubric otherwise). `stop` and
    `on_progress` go to the search. A `drafter` given that answers no rubric is a ReasonsError; the judge
    asked by default that answers none is said in `rubric_note`, and the corrected examples measured alone."""
    start = start or default_start(dataset, human)
    aspect = next((a for a in start.aspects if (a.human or a.name).lower() == human.lower()), None)
    if aspect is None:
        raise ReasonsError(f"{start.label} has no aspect compared with {human!r}")
    found = corrections(store, dataset, human, aspect.min, aspect.max, combo, queue)
    chosen, used = [], set()
    for correction in found:  # the largest corrections, one per group
        group = correction.item.group or correction.item.id
        if group not in used and len(chosen) < k:
            chosen.append(correction)
            used.add(group)
    if len(chosen) < k:
        raise ReasonsError(f"{len(found)} labels of {human} with a reason differ from the judge by "
                           f"{MIN_GAP_SHARE:.0%} of the scale or more, in {len(used)} groups: {k} corrected examples need {k} groups")
    candidates = {"corrected examples": with_corrected_examples(start, aspect.key, chosen)}
    source = set(used)
    drafted: list[str] = []
    rubric_note = ""
    asked = drafter or (judge if judge.settings.get("backend") == "openai" else None)
    if asked is not None:
        try:
            drafted = draft_rubric(asked, human, aspect.min, aspect.max, found)
        except ReasonsError as exc:
            if drafter is not None:
                raise
            rubric_note = (f"No rubric was tried (the judge, OpenAI-compatible, was asked to draft it from the "
                           f"reasons): {exc}; the corrected examples were measured alone.")
    if drafted:
        candidates["rubric"] = with_rubric(start, aspect.key, drafted)
        source |= {c.item.group or c.item.id for c in found}
    everything = {item.group or item.id for item in store.items(dataset)}
    left = sorted((set(groups) if groups is not None else everything) - source)
    if len(left) < 2:
        raise ReasonsError(f"no groups are left to measure on once the {len(source)} the candidates were made "
                           "from are set aside")
    search = tune(store, dataset, judge, human, budget, start, others=list(candidates.values()), few_shot=(),
                  ensemble=False, groups=left, tune_share=tune_share, seed=seed, stop=stop,
                  on_progress=on_progress)
    ours = {template.name for template in candidates.values()}
    winner = search.winner_template.name if search.winner_template is not None else ""
    test = search.test or {}
    if winner and winner not in ours and test:  # the best of ours on the tune groups, read on the test groups
        tried = search.table[search.table["candidate"].isin({f"{n}{v}" for n in ours for v in ("", " [argmax read]")})]
        best = tried.sort_values(["round", "value"], ascending=[False, False]).iloc[0]["candidate"] if len(tried) else ""
        template = next((t for t in candidates.values() if best.startswith(t.name)), None)
        test = _read_on_test(store, dataset, judge, search, start, template, aspect) if template else {}
    gain = float(test.get("difference", math.nan)) if test else math.nan
    low, high = float(test.get("diff_low", math.nan)), float(test.get("diff_high", math.nan))
    adopted = winner if winner in ours and math.isfinite(low) and low > 0 else ""
    if not winner:
        verdict = "no winner: " + "; ".join(search.notes) if search.notes else "the search chose no winner"
    elif winner not in ours:
        verdict = (f"not adopted: the start won on the tune groups ({search.winner}); the best candidate from "
                   f"reasons there ({test.get('candidate', 'none')}) read on the test groups all the same")
    elif adopted:
        verdict = f"adopted: {search.winner} beats the start on the {len(search.test_groups)} test groups"
    else:
        verdict = (f"not adopted: {search.winner} won on the tune groups, but its gain on the "
                   f"{len(search.test_groups)} test groups is not above 0 with 95% confidence")
    return ReasonsResult(candidates, sorted(source), search, gain, low, high, adopted, verdict, drafted, test,
                         rubric_note)


def _read_on_test(store: Store, dataset: str, judge: Judge, search: TuneResult, start: Template,
                  template: Template, aspect) -> dict:
    """`template` scored on the search's test groups and read against `start` there, paired over groups,
    at the search's level and metric: {candidate, difference, diff_low, diff_high, p, note}."""
    test = set(search.test_groups)
    items = [i for i in store.items(dataset) if (i.group or i.id) in test and (not start.level or i.level == start.level)
             and math.isfinite(human_score(i, aspect))]
    score(store, items, template, judge, dataset)

    def scores(of: Template) -> np.ndarray:
        column = pd.Series(np.nan, index=[i.id for i in items])
        for signature in Signer(of).all(accepted_settings(judge)):
            try:
                found = judge_scores(store, dataset, (of.version, signature), items=items)
            except StoreError:
                continue
            column = column.fillna(found.scores[of.aspects[0].key].reindex(column.index))
        return column.to_numpy(dtype=float)

    human = np.array([human_score(i, aspect) for i in items])
    groups = np.array([i.group or i.id for i in items])
    level = search.level if search.level in ("item", "group") else "item"
    [row] = paired_columns({"": (scores(start), scores(template), human)}, groups, level, search.metric)
    return {"candidate": template.name, "difference": row["difference"], "diff_low": row["low"],
            "diff_high": row["high"], "p": row["p"], "note": row["note"]}


def reasons_table(found: list[Correction]) -> pd.DataFrame:
    """The corrections as a table: item, group, people's score, the judge's, the gap, who and why."""
    return pd.DataFrame([{"item_id": c.item.id, "group": c.item.group, "people": c.score, "judge": round(c.judge, 2),
                          "gap": round(c.gap, 2), "annotator": c.annotator, "reason": c.reason} for c in found],
                        columns=["item_id", "group", "people", "judge", "gap", "annotator", "reason"])
