"""Pass rates: on an aspect people label with two words (pass/fail, yes/no, true/false:
`geval.data.declared`), the share of each system's items people would pass, from the judge on every
item and people's labels on a few. A rate is a bounded mean on [0, 1] (each item's share of people
who passed it), so it is estimated exactly as the systems' means are (`labeling.system_means`:
prediction-powered, with the systems' intervals for the finite population of each system's items),
beside the labels alone and the judge's own rate. The judge's true-positive and true-negative rates
(its recall of each word against the people's majority, with intervals over groups:
`geval.analysis.label_errors`) say how it errs on the way. An aspect of more than two categories,
or of two that are not such words, has no rate: `PassRatesError` says why in one line. The store's
side (reading the judge and the labels) is `geval.labeling.pass_rates`."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from geval.analysis.grouped import Estimate
from geval.analysis.label_errors import label_errors
from geval.data.declared import positive
from geval.data.items import Item
from geval.data.labels import MAJORITY_OF, SCORERS
from geval.decisions.systems import SystemMeans, SystemsError
from geval.store import Store


#: Whose rate a table's column of every item's labels gives, by the human side (`labeling.HUMAN_SIDES`).
_WHOSE = {"people": "people's", "you": "your", "both": "people's and your"}


class PassRatesError(SystemsError):
    """No pass rate on this aspect: not two-category words, or nothing to estimate it from."""


@dataclass
class PassRates:
    """Each system's rate of `counted` ("pass") on `aspect`: `means` on 0-1 (`SystemMeans`: the labels
    alone, combined with the judge, the judge alone), and the judge's `true_positive` and
    `true_negative` rates against the majority of the human side's labels (`side`, `labeling.HUMAN_SIDES`: read
    by `against`, "the people's majority" or "your labels") on the `labeled` items that have a majority label
    (`tied`: those whose labels tie, left out)."""

    aspect: str
    counted: str
    other: str
    means: SystemMeans
    true_positive: Estimate
    true_negative: Estimate
    labeled: int
    side: str = "people"
    tied: int = 0

    @property
    def against(self) -> str:
        """The majority the judge is read against: "the people's majority", "your labels", ..."""
        return MAJORITY_OF[self.side]

    def table(self) -> pd.DataFrame:
        """One row per system: its items and labels, its rate from the labels alone, combined with the
        judge (each with its 95% interval), the judge's own scores' mean on 0-1 (what the combined estimate
        corrects: a 0-1 judge's mean probability of the word, not the share of items it labels so), and the
        people's over every item where they labeled all (labels drawn from them)."""
        table = self.means.table
        whole = self.means.whole()  # every item labeled: the people's own rate, no interval
        return pd.DataFrame({
            "system": table["system"].replace("", "all items"), "items": table["items"], "labeled": table["labeled"],
            f"{self.counted} rate, labels alone": [_rate(v, lo, hi, all_) for v, lo, hi, all_ in zip(
                table["people"], table["people_low"], table["people_high"], whole)],
            f"{self.counted} rate, combined": [_rate(v, lo, hi, all_) for v, lo, hi, all_ in zip(
                table["combined"], table["combined_low"], table["combined_high"], whole)],
            # its scores' mean, as the combined estimate reads them (on 0-1), not the share it labels pass: named so
            "the judge alone (its scores' mean on 0-1)": [f"{v:.0%}" for v in self.means.judge_alone()],
            **({f"{_WHOSE[self.side]} {self.counted} rate, every item": [f"{v:.0%}" for v in table["truth"]]}
               if table["truth"].notna().all() else {})})

    def title(self) -> str:
        """"ok (fail/pass): each system's pass rate as people would give it" ("as you would", on your labels)."""
        return (f"{self.aspect} ({self.other}/{self.counted}): each system's {self.counted} rate as "
                f"{SCORERS[self.side][0]} would give it")

    def source_line(self) -> str:
        """Where the rates come from and how their intervals are made, in a sentence."""
        return f"From {self.means.source}, combined with {self.means.judge}; {self.means.interval_words()}."

    def judge_line(self) -> str:
        """The judge's true-positive and true-negative rates, in a sentence."""
        which = (f"whose labels have a majority ({self.tied} whose labels tie left out)" if self.tied else "labeled")
        drawn = int(self.means.table["labeled"].sum())  # the rates' labels, drawn from every item's: fewer
        if drawn < self.labeled + self.tied:
            which += f", not only the {drawn} drawn for the rates above"
        return (f"The judge against {self.against} on the {self.labeled} items {which}: of the items labeled "
                f"'{self.counted}', it labels '{self.counted}' {self.true_positive.percent()} (its "
                f"true-positive rate); of those labeled '{self.other}', '{self.other}' "
                f"{self.true_negative.percent()} (its true-negative rate). " + (
                    "Every item is labeled: the rates above are the people's own, not estimates."
                    if self.means.every_item_labeled else
                    "The combined rate is the judge's own, corrected by its errors on the labeled items, with "
                    f"{self.means.interval_words()}."))


def _rate(value: float, low: float, high: float, whole: bool = False) -> str:
    """"62% [48%, 75%]"; "62%" of a system whose every item is labeled (`whole`: its own rate, no estimate)."""
    return f"{value:.0%}" if whole else f"{value:.0%} [{low:.0%}, {high:.0%}]"


def two_words(categories: dict[str, tuple[str, ...]], aspect: str) -> tuple[str, tuple[str, ...]]:
    """The aspect as the dataset spells it and its two words, of `categories` (a dataset's categorical
    aspects); PassRatesError with one line when it has no pass rate (not categorical, or two categories
    that are not pass/fail words; more than two: `labeling.pass_rates` says so)."""
    found = {a.lower(): (a, c) for a, c in categories.items()}
    if aspect.lower() not in found:
        raise PassRatesError(f"{aspect} is not labeled with two words (pass/fail, yes/no, true/false): a pass rate "
                             "needs them (a score has a mean instead: the systems' section)")
    name, words = found[aspect.lower()]
    if len(words) == 2 and positive(words) is None:
        raise PassRatesError(f"{name} has two categories ({', '.join(words)}) that are not pass/fail, yes/no or "
                             "true/false: no pass rate is read on it")
    return name, words


def rates_of(aspect: str, words: tuple[str, str], means: SystemMeans, judged: pd.Series,
             items: list[Item], side: str = "people") -> PassRates:
    """The PassRates of `means` (each system's rate of `words[1]`, `labeling.system_means` on 0-1) and
    the judge's (`judged`, its category index by item id) true-positive and true-negative rates against
    the majority of the `items`' labels (those of the human `side`), on those labeled."""
    labeled = [item for item in items if item.human.get(aspect) and item.id in judged.dropna().index]
    errors = label_errors(judged, labeled, aspect, tuple(words))
    recall = dict(zip(errors.per_label["label"], errors.per_label["recall"]))
    return PassRates(aspect, words[1], words[0], means, recall[words[1]], recall[words[0]], errors.items, side,
                     errors.tied)


def pass_aspects(store: Store, dataset: str, items: list[Item] | None = None) -> list[str]:
    """The aspects of `dataset` people label with two words (pass/fail, yes/no, true/false): each
    has its pass rates, once a judge is compared with it."""
    items = store.items(dataset) if items is None else items
    human = {a.lower() for item in items for a in item.human}
    return [a for a, c in store.categories(dataset).items() if positive(c) is not None and a.lower() in human]
