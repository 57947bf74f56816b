"""`tune`: which way of asking the judge agrees best with people on one aspect, chosen on some
groups and reported on others.

1. The groups (dialogues, documents) with human scores for the aspect are split, seeded, into
   a tune part and a test part (`tune_share` of them to tune). The split is fixed before any
   judge call and returned with the result; nothing of the test part is scored during the
   search, and few-shot examples are only ever taken from the tune part.
2. Successive halving on the tune part: every candidate (`geval.tuning.variants`) is scored on
   a few groups, the better half on twice as many, and so on, until one is left, the tune part
   is used up, or the budget would be exceeded. Candidates are ranked by the protocol's metric
   and level (e.g. Pearson over all responses; Spearman per document).
3. The winner (best on the tune part only) and the starting template are scored on the test
   part: the winner's correlation with its 95% interval over groups, and a paired test of
   winner minus start.

The budget caps every judge call of the search, the test part included: before the first
round, the calls the test part can take (the start and the costliest possible winner on the
test groups) are kept aside, and the rounds spend the rest. Calls are counted as if nothing
were stored (a resumed search takes the same path), so fewer are made when some are.

Every judgment is stored as in any run, so a search that is stopped resumes where it was, and
every variant can be opened in Agreement and Inspect.
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields, replace

import numpy as np
import pandas as pd

from geval.analysis.agreement import MEAN_OF_ASPECTS, judge_scores, mean_of_aspects
from geval.analysis.comparison import paired_columns, paired_difference
from geval.analysis.correlation import Resamples, agreement, correlate, reading, within_groups
from geval.analysis.held_out import searched_versions
from geval.analysis.protocols import Protocol, generic, protocols_for
from geval.data.items import Item
from geval.errors import GevalError, StoreError
from geval.judging.examples import human_score
from geval.judging.judgment import Judge, accepted_settings, judge_name
from geval.judging.templates import Template, template_hash
from geval.scoring.lookup import Signer, neighbours
from geval.scoring.plan import Plan, pace, plan
from geval.scoring.runner import Progress, score
from geval.store import Store
from geval.tuning.variants import Candidate, only_aspect, with_examples
from geval.wording import counted

#: Few-shot variants tried on the starting template: (k, select). Not "nearest": its examples
#: change from item to item, so a judge that reuses a shared prefix reads them for every item,
#: many times the time of the others on long documents; try it with a template of its own (--try).
FEW_SHOT = ((2, "stratified"), (4, "stratified"), (4, "random"))
#: Why a search that ran has no winner.
NO_WINNER = ("no candidate has a correlation on the tune groups (the note column says why): there is no winner, "
             "and the test part was not scored")
#: The test part's winner - start when the start won: no difference to test (an interval of
#: [0, 0] and p 1 would read as a measurement).
SAME_AS_START = {"difference": 0.0, "diff_low": math.nan, "diff_high": math.nan, "p": math.nan,
                 "note": "the winner is the start"}
#: Groups the first round of the search is scored on, at least.
FIRST_ROUND_GROUPS = 3
#: Items below which a winner's correlation on the tune part is mostly luck, however many groups they are (on 3
#: items of 3 single-item groups candidates read 1.000, .982 and -.982).
FEW_ITEMS = 10


class TuneError(GevalError):
    """A search cannot start: no human scores for the aspect, too few groups, no candidate."""


@dataclass
class TuneProgress:
    """Where a search is: the round, the candidate being scored, its budget (every judge call of
    the search, counted as if none were stored, so that a resumed search takes the same path), the
    part of it kept for the test part (`reserved`), how much of it the rounds so far take
    (`spent`), and the judge calls actually made (`calls`)."""

    round: int = 0
    rounds: int = 0
    candidate: str = ""
    spent: int = 0
    covered: int = 0  # of `spent`: what the candidates scored so far take (counted the same way)
    covering: int = 0  # what the candidate being scored adds to `covered` once its run ends
    calls: int = 0
    budget: int = 0
    reserved: int = 0  # of the budget: what the test part can take, at most (kept aside before the rounds)
    cost: float = 0.0
    tokens: int = 0
    cached: int = 0
    started: float = field(default_factory=time.time)
    run: Progress | None = None  # the scoring run under way
    testing: int = 0  # once the search is decided: the test groups the winner and the start are scored on
    priced: bool = True  # False when the judge knows no price for its model (the cost reads "unknown")
    message: str = ""
    tune_groups: list[str] = field(default_factory=list)
    test_groups: list[str] = field(default_factory=list)

    @property
    def rounds_budget(self) -> int:
        """What the rounds may spend: the budget less what is kept for the test part."""
        return max(0, self.budget - self.reserved)

    @property
    def left(self) -> int:
        """Judge calls the search rounds can still make, at most: their budget less what the
        candidates scored so far take (counted as if none were stored, so fewer are made)."""
        return max(0, self.rounds_budget - self.covered)

    @property
    def share(self) -> float:
        """How far along the search is, 0-1: of the budget in the rounds (the candidate being
        scored by its run's share of items), of the winner's and start's runs in the test part."""
        done = self.run.done / max(self.run.total, 1) if self.run is not None else 0.0
        if self.testing:
            return done
        return min(1.0, (self.covered + self.covering * done) / max(self.rounds_budget, 1))

    @property
    def eta(self) -> float | None:
        """Seconds until the search ends if the `left` calls and those kept for the test part were
        all made at the pace so far (None before the first judge call)."""
        elapsed = time.time() - self.started
        return elapsed / self.calls * (self.left + self.reserved) if self.calls else None

    def line(self) -> str:
        """One line for a terminal or a progress bar."""
        if not self.round:
            return self.message
        spent = (f"{counted(self.calls, 'judge call')} made, {counted(self.cached, 'item')} cached, "
                 f"{self.tokens} tokens, "
                 + (f"${self.cost:.4f}" if self.priced else "cost unknown"))
        if self.testing:
            return (f"test part ({self.testing} groups, at most {self.reserved} calls of the budget), "
                    f"{self.candidate}: {spent}; the rounds took {self.spent} of their {self.rounds_budget} calls")
        eta = "" if self.eta is None else f", ~{self.eta:.0f}s in all at the pace so far"
        return (f"round {self.round} of at most {self.rounds}, {self.candidate or 'planning the round'}: {self.spent} of "
                f"the budget's {self.budget} judge calls planned so far ({self.reserved} more kept for the test part), "
                f"{self.covered} scored (counted as if none were stored); {spent}; at most {self.left} more before "
                f"the test part{eta}")


@dataclass
class TuneResult:
    """What a search found. `table`: every candidate's correlation on the tune groups of each
    round it took part in; `test`: winner and start on the test groups (value, low, high, n,
    and the paired difference winner - start with its interval and p)."""

    dataset: str
    human: str
    protocol: str
    metric: str
    level: str
    tune_groups: list[str]
    test_groups: list[str]
    start: str
    winner: str
    tried: int
    calls: int
    cost: float | None  # None when the judge knows no price for its model
    table: pd.DataFrame
    test: dict
    winner_template: Template | None = None
    stopped: bool = False
    notes: list[str] = field(default_factory=list)
    judge: str = ""  # as menus name it ("embedded: qwen2.5-coder-1.5b-instruct-q4_k_m")

    def summary(self) -> str:
        """A few lines for the terminal and the report."""
        t = self.test
        if not self.winner:
            return (f"tune {self.dataset}, {self.human}: stopped before a candidate had a correlation, after "
                    f"{counted(self.calls, 'judge call')}; what was scored is stored: run the same search again to "
                    "go on"
                    if self.stopped else
                    f"tune {self.dataset}, {self.human}: {NO_WINNER}")
        lines = [
            f"tune {self.dataset}, {self.human}: {len(self.tune_groups)} groups to tune, {len(self.test_groups)} to test "
            f"(seeded split); {counted(self.tried, 'variant')} tried, {counted(self.calls, 'judge call')}, "
            f"{self.cost_text}",
            f"winner on the tune groups: {self.winner}" + (" (the starting template)" if self.winner == self.start else ""),
        ]
        if t:
            versus = ("0 (the winner is the start)" if self.winner == self.start else
                      f"{_f(t['difference'], True)} [{_f(t['diff_low'], True)}, {_f(t['diff_high'], True)}], "
                      f"{_p(t['p'])}" + (f" ({t['note']})" if t.get("note") else ""))
            lines.append(f"on the test groups ({self.metric}, {self.level} level): winner "
                         f"{reading(t['winner'], t['low'], t['high'], self.level, t['n'])}, start {_f(t['start'])}; "
                         f"winner - start {versus}")
        return "\n".join(lines + self.notes)

    @property
    def cost_text(self) -> str:
        """What the search cost: "$0.0123", or "cost unknown" for a judge of no known price."""
        return "cost unknown" if self.cost is None else f"${self.cost:.4f}"

    @classmethod
    def from_kept(cls, kept: Mapping) -> "TuneResult":
        """A result as `Store.searches` gives it back (`to_json`'s fields, with its judge and when it was kept)."""
        names = {f.name for f in fields(cls)} - {"table", "winner_template"}
        text = kept.get("winner_text") or ""
        return cls(**{k: v for k, v in kept.items() if k in names}, table=pd.DataFrame(kept.get("table") or []),
                   winner_template=Template.parse(text, source=f"the winner of a search on {kept['human']}")
                   if text else None)

    def to_json(self) -> str:
        """The result as JSON (the table as records; the winner's template as its text)."""
        fields = {k: v for k, v in asdict(self).items() if k not in ("table", "winner_template")}
        fields["table"] = self.table.to_dict(orient="records")
        fields["winner_text"] = self.winner_template.text if self.winner_template else ""
        return json.dumps(fields, default=float)


def _described(pool: list[Candidate]) -> list[dict]:
    """The candidates as the search log keeps them: name, template version (members for an ensemble), read."""
    return [{"name": c.name, "version": c.template.version if c.template is not None else "",
             "members": list(c.members), "read": c.read} for c in pool]


def split_groups(groups: Sequence[str], tune_share: float = 0.5, seed: int = 0) -> tuple[list[str], list[str]]:
    """A seeded split of `groups` into (tune, test), each sorted; at least one group in each."""
    names = sorted(set(groups))
    if len(names) < 2:
        raise TuneError(f"{len(names)} group(s): a search needs groups to tune on and other groups to test on")
    order = list(np.random.default_rng(seed).permutation(len(names)))
    n_tune = min(len(names) - 1, max(1, round(tune_share * len(names))))
    return sorted(names[i] for i in order[:n_tune]), sorted(names[i] for i in order[n_tune:])


def default_start(dataset: str, human: str) -> Template:
    """The template to beat when none is named: the one-aspect template in the prompts folder
    compared with `human` whose name starts like the dataset's ("tc_usr_data" -> topicalchat-,
    "pc_usr_data" -> personachat-, else the dataset name's first word)."""
    prefix = _prefix(dataset)
    compared = [t for t in Template.known() if len(t.aspects) == 1 and t.kind == "form"
                and (t.aspects[0].human or t.aspects[0].name).lower() == human.lower() and not t.needs_generated_steps]
    found = [t for t in compared if t.name.startswith(prefix)]
    if not found:
        names = sorted(t.name for t in compared)
        elsewhere = f" (others are: {', '.join(names[:5])}{', …' if len(names) > 5 else ''})" if names else ""
        raise TuneError(f"no one-aspect template in the prompts folder named {prefix}* is compared with '{human}'"
                        f"{elsewhere}; name the template to beat: on the Tune page, open it in the Prompts page's "
                        "editor (or save a version of it) and choose it under Template to beat; on the command line, "
                        "--template NAME")
    return min(found, key=lambda t: len(t.name))


def related_templates(start: Template, human: str) -> list[Template]:
    """More templates to try: those in the prompts folder named like `start` (up to its first
    "-") with an aspect compared with `human`."""
    prefix = start.name.split("-")[0] + "-"
    return [t for t in Template.known() if t.name.startswith(prefix) and t.version != start.version
            and any((a.human or a.name).lower() == human.lower() for a in t.aspects)]


def _prefix(dataset: str) -> str:
    known = {"tc_": "topicalchat-", "topical": "topicalchat-", "pc_": "personachat-", "persona": "personachat-"}
    lowered = dataset.lower()
    return next((p for key, p in known.items() if lowered.startswith(key)),
                lowered.replace("-", "_").split("_")[0] + "-")


def candidates(start: Template, aspect_key: str, others: Sequence[Template] = (), few_shot=FEW_SHOT,
               argmax: bool = True) -> list[Candidate]:
    """The candidates of a search: the starting template (one aspect), the `others` (each
    restricted to its aspect compared with the same human aspect), few-shot variants of the
    start, and each form template read as argmax. Ensembles are added during the search."""
    human = (start.aspect(aspect_key).human or start.aspect(aspect_key).name).lower()
    first = only_aspect(start, aspect_key)
    found = [Candidate(f"start: {start.label}", first)]  # its version: a saved edit and its prompts/ file read alike
    for other in others:
        match = next((a for a in other.aspects if (a.human or a.name).lower() == human), None)
        if match is not None and other.version != start.version:
            found.append(Candidate(other.name, only_aspect(other, match.key)))
    if first.examples is None:
        found += [Candidate(f"{start.name} + {k} examples ({select})", with_examples(first, k, select))
                  for k, select in few_shot]
    if argmax:
        found += [Candidate(f"{c.name} [argmax read]", c.template, "argmax") for c in list(found)
                  if c.template.kind == "form"]
    names = [c.name for c in found]
    if len(set(names)) != len(names):
        raise TuneError("two candidates have the same name; give the templates different names")
    return found


@dataclass(frozen=True)
class TuneBudget:
    """The judge calls a search needs, counted as its budget is (as if nothing were stored): `least`, for one
    round on one tune group and the test part; `enough`, for every candidate to see `groups` tune groups
    (FIRST_ROUND_GROUPS, or every one when there are fewer): a winner chosen on fewer is mostly luck, as it is on
    fewer than FEW_ITEMS `items` (those of the `groups`)."""

    least: int
    enough: int
    groups: int
    candidates: int
    first_round: Plan  # every candidate on those groups: its calls' mix (a few-shot prompt is long) times the search
    items: int = 0

    def few_items_line(self) -> str:
        """Why the first round is mostly luck on too few items, whatever the budget ("" when it is not)."""
        if self.items >= FEW_ITEMS:
            return ""
        return (f"Every candidate is first read on {counted(self.items, 'item')} ({counted(self.groups, 'tune group')}): "
                f"on fewer than {FEW_ITEMS} a correlation, and so which candidates go on, is mostly luck whatever the "
                "budget. A dataset with more items per group, or a larger tune share, reads them on more.")

    def paced(self, store: Store, judge: Judge) -> TuneBudget:
        """The same counts with the judge's pace as measured now (`geval.scoring.plan.pace`): counts kept from
        before a run measured the judge's speed are timed at that speed, not the default they were counted at."""
        return replace(self, first_round=replace(self.first_round, pace=pace(store, judge)))


def tune_budget(store: Store, dataset: str, judge: Judge, human: str, start: Template | None = None,
                others: Sequence[Template] | None = None, tune_share: float = 0.5, seed: int = 0,
                few_shot: Sequence[tuple[int, str]] | None = None, ensemble: bool = True,
                groups: Collection[str] | None = None) -> TuneBudget:
    """What `tune` with these settings needs of its budget, known before any call (`TuneBudget`); public as
    `geval.tune.budget`. Raises TuneError as `tune` would when the search cannot be made."""
    *_, pool, _, search = _prepare(store, dataset, judge, human, 0, start, others, tune_share, seed, few_shot,
                                   ensemble, groups, None, None)
    first = min(FIRST_ROUND_GROUPS, len(search.order))
    return TuneBudget(search.needed(pool, 1), search.needed(pool, first), first, len(pool),
                      search.round_plan(pool, first), len(search._items(first)))


def _prepare(store: Store, dataset: str, judge: Judge, human: str, budget: int, start: Template | None,
             others: Sequence[Template] | None, tune_share: float, seed: int,
             few_shot: Sequence[tuple[int, str]] | None, ensemble: bool, groups: Collection[str] | None,
             stop: threading.Event | None, on_progress: Callable[[TuneProgress], None] | None) -> tuple:
    """A search's set-up, before any call (`tune`'s arguments): (the template to beat, its aspect, the protocol,
    the tune and test groups, their items, the candidates, the progress, the search with its groups' order)."""
    items = store.items(dataset)
    if not items:
        raise StoreError(f"dataset '{dataset}' is not in {store.path}; load it first")
    known = sorted({name for item in items for name in item.human})
    if start is None and human.lower() not in {name.lower() for name in known}:  # before looking for a template
        raise TuneError(f"'{human}' is not a human aspect of '{dataset}'; its human aspects: {', '.join(known)}")
    start = start or default_start(dataset, human)
    others = related_templates(start, human) if others is None else others
    aspect = next((a for a in start.aspects if (a.human or a.name).lower() == human.lower()), None)
    if aspect is None:
        raise TuneError(f"{start.label} has no aspect compared with '{human}'; set human = \"{human}\" on one")
    labelled = [i for i in items if (not start.level or i.level == start.level) and math.isfinite(human_score(i, aspect))
                and (groups is None or (i.group or i.id) in groups)]
    if not labelled:
        raise TuneError(f"no item of '{dataset}' has human '{human}' scores at level {start.level or 'any'}"
                        + (" in the groups chosen" if groups is not None else ""))
    protocol = _protocol(store, dataset, labelled)
    tune_groups, test_groups = split_groups([i.group or i.id for i in labelled], tune_share, seed)
    in_tune = set(tune_groups)
    tune_items = [i for i in labelled if (i.group or i.id) in in_tune]
    test_items = [i for i in labelled if (i.group or i.id) not in in_tune]
    pool = candidates(start, aspect.key, others, FEW_SHOT if few_shot is None else few_shot)
    progress = TuneProgress(budget=budget, tune_groups=tune_groups, test_groups=test_groups,
                            priced=getattr(judge, "priced", True))
    search = _Search(store, dataset, judge, aspect.human or aspect.name, protocol, progress, stop,
                     on_progress or (lambda p: None), tune_items)
    search.order = list(np.random.default_rng(seed + 1).permutation(tune_groups))  # the groups in order of entry
    progress.reserved = search.most_for_test(pool, test_items, ensemble)
    return start, aspect, protocol, tune_groups, test_groups, tune_items, test_items, pool, progress, search


def tune(store: Store, dataset: str, judge: Judge, human: str, budget: int, start: Template | None = None,
         others: Sequence[Template] | None = None, tune_share: float = 0.5, seed: int = 0,
         few_shot: Sequence[tuple[int, str]] | None = None, ensemble: bool = True, groups: Collection[str] | None = None,
         stop: threading.Event | None = None, on_progress: Callable[[TuneProgress], None] | None = None) -> TuneResult:
    """Search for the way of asking that agrees best with people on the human aspect `human` of
    the stored `dataset`, spending at most `budget` judge calls (module docstring). `start` is
    the template to beat (default `default_start`); `others` are more templates to try (default
    `related_templates`); `few_shot`, the (k, select) few-shot variants (default FEW_SHOT; () for
    none); `ensemble`: whether the mean of the best two after the first round is a candidate too;
    `groups`: only these groups take part, tune and test alike (e.g. a seeded sample of documents,
    `Dataset.select(sample_groups=N)`; default all). `on_progress` hears of the split first, before any call, then of each step. Raises
    TuneError before any call when the search cannot be made."""
    start, aspect, protocol, tune_groups, test_groups, tune_items, test_items, pool, progress, search = _prepare(
        store, dataset, judge, human, budget, start, others, tune_share, seed, few_shot, ensemble, groups, stop,
        on_progress)
    say = search.say
    mix = search.round_plan(pool, min(FIRST_ROUND_GROUPS, len(search.order)))  # calls like the search's
    progress.message = (f"split (seeded, by group): {counted(len(tune_groups), 'group')} to tune on, "
                        f"{len(test_groups)} to test "
                        f"on; {len(pool)} candidates; at most {budget} judge calls in all, up to {progress.reserved} "
                        f"of them kept for the test part: {mix.time_line(budget)}")
    say(progress)
    settings = {"budget": budget, "start": start.label, "tune_share": tune_share, "seed": seed,
                "few_shot": [list(f) for f in (FEW_SHOT if few_shot is None else few_shot)], "ensemble": ensemble,
                "groups": sorted(groups) if groups is not None else None, "protocol": protocol.name,
                "judge": judge.settings}
    logged = store.log_search(dataset, search.human, judge_name(judge.settings), settings, _described(pool),
                              tune_groups, test_groups)
    try:
        order = search.order
        alive, used, round_number = list(pool), 0, 0
        progress.rounds = max(1, math.ceil(math.log2(len(pool))) + 1)
        rows = []
        while alive:
            round_number += 1
            progress.round = round_number
            want = min(len(order), max(FIRST_ROUND_GROUPS, used * 2))
            groups = search.affordable(alive, used, want)
            if groups <= used:
                search.notes.append(f"round {round_number}: the budget does not cover more groups; the search ends "
                                    "here")
                break
            used = groups
            round_items = [i for i in tune_items if (i.group or i.id) in set(order[:used])]
            values = search.evaluate(alive, round_items)
            if search.stopped:
                break

            def row(c: Candidate) -> dict:
                value = values[c.name]
                return {"round": round_number, "candidate": c.name, "groups": used, "items": len(round_items),
                        "value": value, "note": "" if math.isfinite(value) else search.why_undefined(c, round_items)}

            rows += [row(c) for c in alive]
            store.update_search(logged, rounds=round_number)
            ranked = sorted(alive, key=lambda c: (-_finite(values[c.name]), c.name))
            measured = [c for c in ranked if math.isfinite(values[c.name])]
            if ensemble and round_number == 1 and len({c.template.version for c in measured if c.template}) >= 2:
                best_two = []  # the best two with a correlation that ask differently (not a template and its argmax)
                for c in measured:
                    if c.template is not None and all(c.template.version != b.template.version for b in best_two):
                        best_two.append(c)
                best_two = best_two[:2]
                ensemble = Candidate(f"ensemble of {best_two[0].name} and {best_two[1].name}",
                                     members=(best_two[0].name, best_two[1].name))
                pool.append(ensemble)
                search.by_name[ensemble.name] = ensemble
                values[ensemble.name] = search.value_of(ensemble, round_items)
                ranked = sorted([*ranked, ensemble], key=lambda c: (-_finite(values[c.name]), c.name))
                rows.append(row(ensemble))
            if len(ranked) == 1 or used >= len(order):
                alive = ranked[:1]
                break
            alive = ranked[:max(1, len(ranked) // 2)]
            if len(alive) == 1:  # the search is decided: no round for one candidate alone
                break
        table = pd.DataFrame(rows, columns=["round", "candidate", "groups", "items", "value", "note"])
        if table.empty and not search.stopped:
            least = search.short + progress.reserved
            raise TuneError(f"a budget of {budget} judge calls does not cover one round of {len(pool)} candidates, "
                            f"even on one tune group, and the test part: that takes {least} ({progress.reserved} of "
                            f"them for the winner and the start on the {len(test_groups)} test groups); give a budget "
                            f"of at least {least} (or try fewer variants)")
        last = table[table["round"] == table["round"].max()].dropna(subset=["value"])
        start_candidate = pool[0]
        if last.empty:  # stopped before a round ended, or no candidate has a correlation: no winner, no test part
            store.update_search(logged, candidates=_described(pool), status="stopped" if search.stopped else "finished",
                                reason="" if search.stopped else NO_WINNER)
            return TuneResult(dataset, aspect.human or aspect.name, protocol.name, protocol.primary, protocol.levels[0],
                              tune_groups, test_groups, start_candidate.name, "", len(pool), progress.calls,
                              progress.cost if progress.priced else None, table, {}, None, search.stopped, search.notes,
                              judge_name(judge.settings))
        last = last.sort_values(["value", "candidate"], ascending=[False, True])
        winner = next(c for c in pool if c.name == last["candidate"].iloc[0])
        chosen_on, chosen_items = int(last["groups"].iloc[0]), int(last["items"].iloc[0])
        if chosen_on < min(FIRST_ROUND_GROUPS, len(order)):
            enough = search.needed(pool, FIRST_ROUND_GROUPS)
            search.notes.append(f"the winner was chosen on {chosen_on} tune group{'s' if chosen_on > 1 else ''} "
                                f"({chosen_items} items): so few that the choice is mostly luck; a "
                                f"budget of {enough} lets every candidate see {FIRST_ROUND_GROUPS}")
        elif chosen_items < FEW_ITEMS:
            search.notes.append(f"the winner was chosen on {chosen_items} items ({counted(chosen_on, 'tune group')}): on fewer "
                                f"than {FEW_ITEMS} the choice is mostly luck, whatever the budget")
        store.update_search(logged, winner=winner.name, candidates=_described(pool))
        test = {} if search.stopped else search.test(winner, start_candidate, test_items)
        if test:  # another search (another seed) may have chosen the same template on some of these test groups
            versions = [member.template.version for member in search._members(winner)]
            search.notes += filter(None, [not_held_out(chosen_among(store, dataset, versions, test_groups),
                                                          len(test_groups))])
        store.update_search(logged, tested=bool(test), status="stopped" if search.stopped else "finished")
        result = TuneResult(dataset, aspect.human or aspect.name, protocol.name, protocol.primary, protocol.levels[0],
                            tune_groups, test_groups, start_candidate.name, winner.name, len(pool), progress.calls,
                            progress.cost if progress.priced else None, table, test, search.template_of(winner),
                            search.stopped, search.notes,
                            judge_name(judge.settings))
        if test:  # finished: kept for reports (`Store.searches`)
            store.save_search(dataset, result.human, result.judge, result.to_json())
        return result
    except BaseException as exc:  # a failed or killed search is logged as such: what it chose on stays known
        store.update_search(logged, status="failed", reason=str(exc) or type(exc).__name__)
        raise


def kept_results(store: Store, dataset: str) -> list[TuneResult]:
    """The searches kept for `dataset` (`Store.searches`: finished in any session or by `geval tune`), oldest first;
    public as `geval.tune.kept`."""
    return [TuneResult.from_kept(kept) for kept in store.searches(dataset)]


tune.budget = tune_budget  # geval.tune.budget(...): a search's needs, known before it starts
tune.kept = kept_results  # geval.tune.kept(...): the searches finished on a dataset, as results
tune.default_start = default_start  # geval.tune.default_start(...): the template a search beats when none is named


def searched_together(store: Store, dataset: str) -> pd.DataFrame:
    """The kept searches of `dataset` that share their judge and test groups (the largest such
    set of two or more human aspects), read together on those test groups only: a row per human
    aspect searched, their average and, when the items have the protocol's Overall, the mean of
    the aspects against it (each score mapped onto 0-1 by its scale). Per row, the starts (a) and
    the winners (b) in the protocol's metric at its level, each with its 95% interval, and winners
    minus starts with its paired interval and p-value, every row on the same draws of groups
    (`geval.analysis.comparison.paired_columns`); `same` marks an aspect whose search the start
    won (no interval, no p: nothing to test). The test groups on which another search chose one of
    the winners (another seed's tune groups) are left out, their number in `left_out`. Empty when
    there is no such set."""
    found: dict[tuple, dict[str, dict]] = {}
    for search in store.searches(dataset):
        if search["test"].get("winner_scores") is not None:
            found.setdefault((search["judge"], tuple(search["test_groups"])), {})[search["human"]] = search
    together = max(found.values(), key=len, default={})
    if len(together) < 2:
        return pd.DataFrame()
    by_id = {item.id: item for item in store.items(dataset)}
    elsewhere = set().union(*(chosen_elsewhere(store, dataset, search) for search in together.values()))
    ids = list(dict.fromkeys(i for search in together.values() for i in search["test"]["items"]
                             if i in by_id and (by_id[i].group or i) not in elsewhere))
    protocol = _protocol(store, dataset, [by_id[i] for i in ids])
    sides = {}
    for human, search in together.items():
        test = search["test"]
        sides[human] = {side: (pd.Series(test[f"{side}_scores"], index=test["items"], dtype=float).reindex(ids),
                               tuple(test[f"{side}_scale"])) for side in ("start", "winner")}
    columns = {human: (sides[human]["start"][0], sides[human]["winner"][0],
                       [by_id[i].human_mean(human) if human in by_id[i].human else math.nan for i in ids])
               for human in together}
    overall = next((h for h in by_id[ids[0]].human if h.lower() == (protocol.overall or "").lower()), None)
    averaged = [human for human in together if human != overall]
    if overall and len(averaged) > 1:
        mean = {side: mean_of_aspects(pd.DataFrame({h: sides[h][side][0] for h in averaged}),
                                      {h: sides[h][side][1] for h in averaged}) for side in ("start", "winner")}
        columns[f"{MEAN_OF_ASPECTS} → {overall}"] = (mean["start"], mean["winner"],
                                                     [by_id[i].human_mean(overall) for i in ids])
    level = protocol.levels[0] if protocol.levels[0] in ("item", "group") else "item"
    rows = paired_columns({name: tuple(np.asarray(v, dtype=float) for v in parts) for name, parts in columns.items()},
                          [by_id[i].group or i for i in ids], level, protocol.primary, averaged)
    rows.sort(key=lambda row: row["column"].startswith(MEAN_OF_ASPECTS))  # the average before the mean of aspects
    for row in rows:  # an aspect whose search the start won: no difference to test
        searched = together.get(row["column"])
        row["same"] = searched is not None and searched["winner"] == searched["start"]
        if row["same"]:
            row.update(low=math.nan, high=math.nan, p=math.nan, note=SAME_AS_START["note"])
    return pd.DataFrame(rows).assign(metric=protocol.primary, level=level, left_out=len(elsewhere))


def chosen_elsewhere(store: Store, dataset: str, search: dict) -> set[str]:
    """The test groups of a kept search (`Store.searches`) on which another search chose its winner's
    template (or one whose prompts are its prompts: `geval.analysis.held_out`): there its reading
    is not held out."""
    if not search.get("winner_text"):
        return set()
    return chosen_among(store, dataset, [template_hash(search["winner_text"])], search["test_groups"])


def chosen_among(store: Store, dataset: str, versions: Collection[str], groups: Collection[str]) -> set[str]:
    """The `groups` of `dataset` on which some search chose one of the template `versions`."""
    found = searched_versions(store, dataset)
    return set().union(*(found[v].chosen for v in versions if v in found)) & set(groups)


def not_held_out(elsewhere: Collection[str], groups: int) -> str:
    """What a search's printout says when another search chose its winner's template on `elsewhere`,
    some of its `groups` test groups ("" when none)."""
    if not elsewhere:
        return ""
    return (f"not held out on {len(elsewhere)} of the {groups} test groups: another prompt search (another seed or "
            "split) chose this template on them, so there it was picked for agreeing with these people; the report "
            "says so, and reads the searches together without them")


class _Search:
    """Scoring candidates on items and reading their agreement, within the budget."""

    def __init__(self, store: Store, dataset: str, judge: Judge, human: str, protocol: Protocol,
                 progress: TuneProgress, stop: threading.Event | None, say, tune_items: list[Item]):
        self.store, self.dataset, self.judge, self.human, self.protocol = store, dataset, judge, human, protocol
        self.progress, self.stop, self.say, self.pool = progress, stop, say, tune_items
        self.stopped = False
        self.notes: list[str] = []
        self.by_name: dict[str, Candidate] = {}
        self._plans: dict[tuple, Plan] = {}
        self.scored: dict[str, tuple[Template, int]] = {}  # template version -> (template, tune groups scored)
        self.covered: dict[str, int] = {}  # template version -> the calls its latest finished run takes
        self.order: list[str] = []
        self.short = 0  # judge calls the smallest round that did not fit the budget would have taken

    def sources(self, alive: list[Candidate]) -> list[Template]:
        """The templates the alive candidates need scored (ensembles need their members')."""
        needed: dict[str, Template] = {}
        for candidate in alive:
            self.by_name[candidate.name] = candidate
            for member in self._members(candidate):
                needed[member.template.version] = member.template
        return list(needed.values())

    def affordable(self, alive: list[Candidate], used: int, want: int) -> int:
        """How many of the tune groups the next round can use (>= used; == used when none more fit):
        the calls of every template scored so far, on the groups it was scored on, plus those of
        the alive candidates' templates on the round's groups, within the budget."""
        templates = self.sources(alive)
        earlier = sum(self.cost(t, self._items(n)) for version, (t, n) in self.scored.items()
                      if version not in {x.version for x in templates})
        for groups in range(want, used, -1):
            needed = earlier + sum(self.cost(t, self._items(groups)) for t in templates)
            if needed <= self.progress.rounds_budget:
                self.progress.spent = needed
                self.scored.update({t.version: (t, groups) for t in templates})
                return groups
            self.short = needed  # what one group more than `used` would take
        return used

    def needed(self, pool: list[Candidate], groups: int) -> int:
        """The budget a first round of every candidate in `pool` on the first `groups` tune groups takes, the
        test part's reserve included."""
        return sum(self.cost(t, self._items(groups)) for t in self.sources(pool)) + self.progress.reserved

    def most_for_test(self, pool: list[Candidate], items: list[Item], ensemble: bool) -> int:
        """The judge calls the test part can take, at most: the start's template and the costliest
        winner's (an ensemble's two costliest other templates) on the test `items`, counted as if
        none were stored."""
        start = pool[0].template
        others = {c.template.version: c.template for c in pool if c.template is not None
                  and c.template.version != start.version}
        costs = sorted((self.cost(t, items) for t in others.values()), reverse=True)
        return self.cost(start, items) + sum(costs[:2 if ensemble else 1])

    def _items(self, groups: int) -> list[Item]:
        chosen = set(self.order[:groups])
        return [i for i in self.pool if (i.group or i.id) in chosen]

    def cost(self, template: Template, items: list[Item]) -> int:
        """Judge calls `template` takes on `items`, stored or not."""
        return self._plan(template, items).calls

    def _plan(self, template: Template, items: list[Item]) -> Plan:
        """`template`'s plan on `items` as if nothing were stored (each (template, items) planned once)."""
        key = (template.version, tuple(i.id for i in items))
        if key not in self._plans:
            self._plans[key] = plan(self.store, items, template, self.judge, examples_from=self.pool, fresh=True)
        return self._plans[key]

    def round_plan(self, pool: list[Candidate], groups: int) -> Plan:
        """The plans of a first round of every candidate in `pool` on the first `groups` tune groups, added up:
        the mix of the search's calls (a few-shot prompt's examples make it several times a plain one's), whose
        time per call estimates the search's."""
        plans = [self._plan(t, self._items(groups)) for t in self.sources(pool)]
        return sum(plans[1:], plans[0])

    def evaluate(self, alive: list[Candidate], items: list[Item]) -> dict[str, float]:
        """Score what the alive candidates need on `items`, then each one's agreement."""
        for template in self.sources(alive):
            if self.stop is not None and self.stop.is_set():
                self.stopped = True
                return {}
            self.progress.candidate = template.label
            self.progress.covering = self.cost(template, items) - self.covered.get(template.version, 0)
            run = self._score(template, items, {"tune": True})
            if run.stopped:
                self.stopped = True
                return {}
            self.covered[template.version] = self.cost(template, items)
            self.progress.covered, self.progress.covering = sum(self.covered.values()), 0
        return {c.name: self.value_of(c, items) for c in alive}

    def _score(self, template: Template, items: list[Item], given: dict) -> Progress:
        """Score `template` on `items` (`given`: what the run records of why), the search's
        progress following the run's."""
        self.progress.run = None  # not the run before: until this one reports
        self.say(self.progress)
        calls, cost = self.progress.calls, self.progress.cost

        def seen(run: Progress) -> None:
            self.progress.run = run
            self.progress.calls, self.progress.cost = calls + run.calls, cost + run.cost
            self.say(self.progress)

        run = score(self.store, items, template, self.judge, self.dataset, given, stop=self.stop, on_progress=seen,
                    examples_from=self.pool)
        self.progress.calls, self.progress.cost = calls + run.calls, cost + run.cost
        self.progress.tokens += run.prompt_tokens + run.completion_tokens
        self.progress.cached += run.cached
        return run

    def value_of(self, candidate: Candidate, items: list[Item]) -> float:
        """The candidate's correlation with people on `items` (the protocol's metric and level)."""
        scores = self.scores(candidate, items)
        human = np.array([human_score(i, self._aspect(candidate)) for i in items])
        groups = np.array([i.group or i.id for i in items])
        return _correlation(self.protocol, scores, human, groups)

    def why_undefined(self, candidate: Candidate, items: list[Item]) -> str:
        """Why the candidate has no correlation on `items`, in a few words."""
        scores = self.scores(candidate, items)
        human = np.array([human_score(i, self._aspect(candidate)) for i in items])
        keep = np.isfinite(scores) & np.isfinite(human)
        if keep.sum() < 3:
            return f"undefined: {int(keep.sum())} of {len(items)} items have a score (3 needed)"
        if np.ptp(scores[keep]) == 0:
            return "undefined: the judge gave every item the same score"
        if np.ptp(human[keep]) == 0:
            return "undefined: people gave every item the same score"
        return f"undefined at {self.protocol.levels[0]} level on these items"

    def scores(self, candidate: Candidate, items: list[Item]) -> np.ndarray:
        """The candidate's score per item (NaN where unscored), 0-1 for an ensemble."""
        if candidate.members:
            members = [self.scores(self.by_name[name], items) for name in candidate.members]
            scaled = [(m - self._aspect(self.by_name[n]).min) / (self._aspect(self.by_name[n]).max
                                                                   - self._aspect(self.by_name[n]).min)
                      for m, n in zip(members, candidate.members)]
            return np.mean(scaled, axis=0)
        template = candidate.template
        column = pd.Series(np.nan, index=[i.id for i in items])
        # under every signature the judge accepts, as a run looks them up (an "auto" judge's answers are stored
        # under its samples signature when the server sent no logprobs), the first accepted first
        for signature in Signer(template, self._pool_label(template)).all(accepted_settings(self.judge)):
            try:
                found = judge_scores(self.store, self.dataset, (template.version, signature), candidate.read,
                                     items=items)
            except StoreError:
                continue
            column = column.fillna(found.scores[template.aspects[0].key].reindex(column.index))
        return column.to_numpy(dtype=float)

    def test(self, winner: Candidate, start: Candidate, items: list[Item]) -> dict:
        """Winner and start on the test items: correlations with intervals and the paired difference."""
        self.progress.testing = len({i.group or i.id for i in items})
        for template in self.sources([winner, start]):
            self.progress.candidate = template.label
            run = self._score(template, items, {"tune": "test"})
            if run.stopped:
                self.stopped = True
                return {}
        a, b = self.scores(start, items), self.scores(winner, items)
        human = np.array([human_score(i, self._aspect(start)) for i in items])
        groups = np.array([i.group or i.id for i in items])
        level, metric = self.protocol.levels[0], self.protocol.primary
        [found], [started] = (agreement(side, human, groups, levels=(level,), metrics=(metric,)) for side in (b, a))
        paired = SAME_AS_START if winner is start else _paired(self.protocol, a, b, human, groups)
        return {"winner": found.value, "low": found.low, "high": found.high, "n": found.n,
                "start": started.value, **paired,  # both by the rule of the agreement table (enough groups)
                # what `searched_together` reads several searches' test parts with
                "items": [i.id for i in items], "winner_scores": b.tolist(), "start_scores": a.tolist(),
                "winner_scale": self._scale(winner), "start_scale": self._scale(start)}

    def _scale(self, candidate: Candidate) -> list[float]:
        """The scale of a candidate's scores: its aspect's, or 0-1 for an ensemble."""
        aspect = self._aspect(candidate)
        return [0.0, 1.0] if candidate.members else [float(aspect.min), float(aspect.max)]

    def template_of(self, candidate: Candidate) -> Template | None:
        """The template a candidate asks with (None for an ensemble)."""
        return candidate.template

    def _members(self, candidate: Candidate) -> list[Candidate]:
        if candidate.members:
            return [m for name in candidate.members for m in self._members(self.by_name[name])]
        return [candidate]

    def _aspect(self, candidate: Candidate):
        return self._members(candidate)[0].template.aspects[0]

    def _pool_label(self, template: Template) -> str:
        around = neighbours(self.store, template, self.dataset, self.pool, self.pool)
        return around.pool_label if around else ""


def _protocol(store: Store, dataset: str, items: list[Item]) -> Protocol:
    found = protocols_for(store.dataset_layout(dataset), dataset, list(dict.fromkeys(i.level for i in items)))
    if not found:
        return generic(("item",))
    return found[0]


def _correlation(protocol: Protocol, scores: np.ndarray, human: np.ndarray, groups: np.ndarray) -> float:
    keep = np.isfinite(scores) & np.isfinite(human)
    if keep.sum() < 3:
        return math.nan
    if protocol.levels[0] == "group":
        values = within_groups(scores[keep], human[keep], Resamples(groups[keep], 0), (protocol.primary,))
        return float(np.nanmean(values[protocol.primary])) if len(values[protocol.primary]) else math.nan
    return correlate(protocol.primary, scores[keep], human[keep])


def _paired(protocol: Protocol, a: np.ndarray, b: np.ndarray, human: np.ndarray, groups: np.ndarray) -> dict:
    """b minus a at the protocol's level (item, or per group then averaged; a system-level protocol
    is compared over items, and says so), with its paired interval and p (the jackknife over groups)."""
    level = protocol.levels[0]
    try:
        if level in ("item", "group"):
            [row] = paired_columns({"": (a, b, human)}, groups, level, protocol.primary)
            found = {"difference": row["difference"], "diff_low": row["low"], "diff_high": row["high"],
                     "p": row["p"], "note": row["note"]}
        else:
            one = paired_difference(a, b, human, groups, metric=protocol.primary)
            found = {"difference": one.difference, "diff_low": one.low, "diff_high": one.high, "p": one.p,
                     "note": "; ".join(filter(None, [one.note, f"item-level difference (the protocol's level is "
                                                                f"{level})"]))}
    except (StoreError, ValueError) as exc:
        return {"difference": math.nan, "diff_low": math.nan, "diff_high": math.nan, "p": math.nan, "note": str(exc)}
    return found


def _finite(value: float) -> float:
    return value if math.isfinite(value) else -math.inf


def _f(value: float, signed: bool = False) -> str:
    return "–" if value is None or not math.isfinite(value) else (f"{value:+.3f}" if signed else f"{value:.3f}")


def _p(value: float) -> str:
    return "p –" if not math.isfinite(value) else ("p < 0.001" if value < 0.001 else f"p = {value:.3f}")
