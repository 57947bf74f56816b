"""How the judge errs, as practitioners read it, in words and tables: the Agreement page, `geval
agree` and the report show the same sentences (`lines`), tables (`tables`) and figures
(`geval.reporting.error_figures`) of `read` (`geval.analysis.judge_errors`): chance-corrected
agreement, the confusion matrix and each label's precision and recall for labels; offset, spread,
scale use, Bland-Altman limits and length for scores. Every figure comes with its 95% interval over
groups, or says why it has none; a sentence says what the figures say, and no more (a difference
below 0 reads as a size "below", the middle is avoided only when no inner point is clearly overused).

    import geval
    for found in geval.reporting.how_it_errs.read(store, "mtbench"):
        print("\\n".join(geval.reporting.how_it_errs.lines(found)))
"""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd

from geval.analysis.grouped import MIN_GROUPS, Estimate
from geval.analysis.judge_errors import AspectErrors
from geval.analysis.judge_errors import judge_errors as read
from geval.analysis.label_errors import MIN_PAIR_ITEMS, LabelErrors
from geval.analysis.score_errors import HIGH_CORRELATION, LARGE_OFFSET, LIMITS, ScoreErrors
from geval.data.labels import MAJORITY_OF
from geval.reporting.document import Bullets, Details, Figure, Heading, Table, Text
from geval.errors import GevalError
from geval.reporting.error_figures import bland_altman_figure, confusion_figure, scale_use_figure
from geval.store import Store
from geval.wording import counted, fixed

__all__ = ["INTRO", "bland_altman_figure", "blocks", "confusion_figure", "lines", "read", "report_section",
           "scale_use_figure", "tables", "text", "title"]

#: Landis and Koch's words for a kappa (1977), the bands practitioners quote.
BANDS = ((0.0, "poor"), (0.2, "slight"), (0.4, "fair"), (0.6, "moderate"), (0.8, "substantial"),
         (math.inf, "almost perfect"))
#: What the section says before its figures, in the report and on the page.
INTRO = ("How the judge errs, beyond how much it agrees. Labels (categories, or a whole-number scale's points, the "
         "judge's scores rounded to them): Cohen's kappa (quadratic-weighted on a scale of 3 points or more) against "
         "the majority label and each annotator, beside the people's own kappa with each other; the confusion "
         "matrix; each label's precision, recall and F1; and what a constant answer would reach. Scores, on the "
         "people's scale: the judge's offset (harsh or lenient), its spread and use of the scale, the Bland-Altman "
         "limits of agreement, and how far its error follows the response's length, beside each annotator's. "
         "95% intervals over groups (dialogues, documents): the delete-one-group jackknife with Student's t (an "
         "accuracy's: Wilson's, on the items' number weighed by their groups' design effect); none below 10 groups.")


def title(found: AspectErrors) -> str:
    """"Naturalness (judge) vs Natural (people)"."""
    return f"{found.aspect} (judge) vs {found.human} (people)"


def band(kappa: float) -> str:
    """Landis and Koch's word for a kappa ("moderate")."""
    return next(word for limit, word in BANDS if kappa <= limit) if math.isfinite(kappa) else "undefined"


#: What every figure of an aspect in fewer than MIN_GROUPS groups says after its value: said once instead.
FEW_GROUPS = re.compile(r" \(no interval: \d+ groups?\)")


def _groups(found: AspectErrors) -> int:
    """The groups (dialogues, documents) its figures rest on."""
    labels, scores = found.labels, found.scores
    return max(labels.kappa.groups if labels is not None else 0, scores.offset.groups if scores is not None else 0)


def _once(found: AspectErrors, text: str) -> str:
    """`text` without "(no interval: 5 groups)" after each figure where the aspect's items fall in fewer than
    MIN_GROUPS groups: `lines` says it once (on 12 items in 2 groups, it followed some 30 figures)."""
    return FEW_GROUPS.sub("", text) if _groups(found) < MIN_GROUPS else text


def lines(found: AspectErrors) -> list[str]:
    """Every sentence of how the judge errs on one aspect: the labels' first, then the scores'; where its items fall
    in fewer than MIN_GROUPS groups, that no figure has an interval is said once, first."""
    said = [f"{found.scale}."] if found.scale else []
    groups = _groups(found)
    if groups < MIN_GROUPS:
        said.append(f"No figure here has a 95% interval: the items fall in {counted(groups, 'group')} (dialogues, "
                    f"documents), and an interval over groups needs {MIN_GROUPS}.")
    if found.labels is not None:
        said += label_lines(found.labels, ordinal=found.scores is not None, against=found.against)
    if found.scores is not None:
        said += score_lines(found.scores)
    notes = found.notes + (found.labels.notes if found.labels else []) + (found.scores.notes if found.scores else [])
    return [_once(found, line) for line in said] + [f"Note: {note}." for note in dict.fromkeys(notes)]


def _points(found: Estimate, signed: bool = True) -> str:
    """A difference of shares in percentage points: "+27 points [+15, +39]"; not `signed`, a size
    beside "above" or "below": "27 points [15, 39]"."""
    if not math.isfinite(found.value):
        return f"n/a ({found.note})" if found.note else "n/a"
    form = "+.0f" if signed else ".0f"
    shown = f"{found.value * 100:{form}} points"
    if found.has_interval():
        return f"{shown} [{found.low * 100:{form}}, {found.high * 100:{form}}]"
    return f"{shown} ({found.withheld()})"


def _size(found: Estimate) -> Estimate:
    """A negative Estimate as its size: −0.27 [−0.35, −0.19] as 0.27 [0.19, 0.35]."""
    return Estimate(-found.value, -found.high, -found.low, found.groups, found.note) if found.value < 0 else found


def _points_long(length: float) -> str:
    """A scale's length in words: "1 point", "4 points", "0.5 points"."""
    return counted(int(length), "point") if float(length).is_integer() else f"{length:g} points"


def _signed(found: Estimate, digits: int = 2) -> str:
    """"+0.42 [+0.31, +0.53]", or the value with why it has no interval."""
    if not math.isfinite(found.value):
        return f"n/a ({found.note})" if found.note else "n/a"
    shown = fixed(found.value, digits, signed=True)
    if found.has_interval():
        return f"{shown} [{found.low:+.{digits}f}, {found.high:+.{digits}f}]"
    return f"{shown} ({found.withheld()})"


def _read(found: Estimate) -> str:
    """An Estimate as tables read it, with why there is no value when there is none."""
    shown = found.reads()
    return f"n/a ({found.note})" if shown.startswith("n/a") and found.note else shown


def label_lines(labels: LabelErrors, ordinal: bool = False, against: str = MAJORITY_OF["people"]) -> list[str]:
    """The sentences of a judge's labels against people's (`ordinal`: a scale's points; `against`: the majority
    they are read by, `AspectErrors.against`)."""
    kind = "Weighted kappa (quadratic)" if labels.weighting == "quadratic" else "Cohen's kappa"
    what = "the judge's scores, rounded to the scale's points," if ordinal else "the judge's labels"
    tied = f" ({labels.tied} with a tied majority left out)" if labels.tied else ""
    said = [f"{kind} of {what} against {against}: {_read(labels.kappa)}"
            + (f", {band(labels.kappa.value)} on Landis and Koch's scale" if math.isfinite(labels.kappa.value) else "")
            + f", on {labels.items} items{tied}; raw agreement {labels.accuracy.percent()}."]
    if len(labels.annotators) == 1:  # the kappa above is against them: no one to compare them with
        said.append(f"One annotator ({labels.annotators['annotator'].iloc[0]}): how much people agree with each other, "
                    "and so whether the judge agrees with a person as well, needs two annotators or more on the "
                    "same items.")
    else:
        said += [_against_people(labels), f"Among the people: {labels.among_name} {_read(labels.among)}."]
    said += _constant_lines(labels) + _label_weak_spots(labels, against)
    return said


def _against_people(labels: LabelErrors) -> str:
    """The judge against one annotator beside two annotators against each other, and what the difference says."""
    annotators = counted(int((labels.annotators["in the mean"] == "yes").sum()), "annotator")
    if not math.isfinite(labels.people.value):
        return (f"Against one annotator the judge reaches {_read(labels.judge_mean)} on average ({annotators}); "
                f"the people's own kappa is not known: {labels.people.note}.")
    start = (f"Against one annotator the judge reaches {_read(labels.judge_mean)} on average ({annotators}); "
             f"two annotators reach {_read(labels.people)} with each other ({counted(labels.pairs, 'pair')} with "
             f"{MIN_PAIR_ITEMS} items or more together). The judge's kappa minus the people's: "
             f"{_signed(labels.difference, 3)}")
    if labels.difference.above():
        return start + ": the judge agrees with a person better than two people agree with each other."
    if labels.difference.below():
        return start + ": the judge agrees with a person less well than people agree with each other."
    if math.isfinite(labels.difference.low):
        return start + ": no clear difference, the judge agrees with a person about as well as people agree with " \
                       "each other (the interval holds 0)."
    return start + "."


def _constant_lines(labels: LabelErrors) -> list[str]:
    """What a constant answer reaches (its kappa is 0, said so) and the judge's lead over the one right most often,
    named by its label (the best constant of the alternative annotator test is another: the best by its winning
    rate)."""
    if labels.constants.empty:
        return []
    best = labels.constants.iloc[0]
    lead, always = labels.lead, f"always answering '{best['label']}'"
    if lead.above():
        verdict = f"{_points(lead, signed=False)} above what {always} gets"
    elif lead.below():
        verdict = f"{_points(_size(lead), signed=False)} below what {always} gets"
    elif math.isfinite(lead.low):
        verdict = (f"{_points(lead)} from what {always} gets: not clearly above it, so here raw agreement says "
                   "little beyond the labels' skew")
    elif math.isfinite(lead.value):  # no interval: the size and its side, why there is no interval said in it
        verdict = f"{_points(_size(lead), signed=False)} {'below' if lead.value < 0 else 'above'} what {always} gets"
    else:
        verdict = f"not read against what {always} gets ({lead.note or 'undefined'})"
    kappa = (f"with a kappa of {best['kappa']:.3f}: kappa counts only agreement beyond chance, so a constant answer "
             "gets 0 however skewed the labels" if math.isfinite(best["kappa"]) else
             "with no kappa: the people's majority gives that label on every item")  # it read "a kappa of nan"
    return [f"A judge answering '{best['label']}' on every item would be right on {best['share'].percent()} of them "
            f"(every label in turn: the table), {kappa}. The judge's raw agreement is {verdict}."]


def _label_weak_spots(labels: LabelErrors, against: str) -> list[str]:
    """Labels the judge never gives though people do (the majority named `against`), and its weakest label by F1."""
    table = labels.per_label
    said = []
    never = table[(table["judge gives"] == 0) & (table["support"] > 0)]["label"].tolist()
    if never:
        does = "do" if against == MAJORITY_OF["you"] else "does"  # "your labels do"
        the = (f"On the {labels.items} items with a majority ({labels.tied} tied, left out), the" if labels.tied
               else "The")
        said.append(f"{the} judge never answers {', '.join(repr(str(n)) for n in never)}, though {against} {does}.")
    scored = table[np.array([math.isfinite(f.value) for f in table["f1"]], bool)
                   & (table["support"] > 0).to_numpy() & (table["judge gives"] > 0).to_numpy()]
    weakest = scored.loc[min(scored.index, key=lambda i: scored.loc[i, "f1"].value)] if len(scored) > 1 else None
    if weakest is not None and weakest["f1"].value < 1:  # every label's F1 1: none is weakest
        label, support, given = weakest["label"], weakest["support"], weakest["judge gives"]
        if weakest["f1"].value == 0:
            said.append(f"Its weakest label is '{label}': it finds none of the {support} items the majority labels so, "
                        f"and none of its {given} answers '{label}' is the majority's (F1 0).")
        else:
            said.append(f"Its weakest label is '{label}': F1 {_read(weakest['f1'])}; of the {support} items the "
                        f"majority labels so, it finds {weakest['recall'].percent()} (recall); of its {given} answers "
                        f"'{label}', {weakest['precision'].percent()} are the majority's too (precision).")
    return said


def score_lines(scores: ScoreErrors) -> list[str]:
    """The sentences of a judge's scores against people's: offset, spread and scale use, Bland-Altman, length."""
    return [_offset_line(scores, scores.scale_named), *_ranks_but_offset(scores), _spread_line(scores),
            *_scale_lines(scores), _limits_line(scores), *_length_lines(scores)]


def _offset_line(scores: ScoreErrors, scale: str) -> str:
    offset = scores.offset
    if offset.above():
        return f"Lenient: it scores {_read(offset)} points above the people's mean, on {scale}."
    if offset.below():
        return f"Harsh: it scores {_read(_size(offset))} points below the people's mean, on {scale}."
    if math.isfinite(offset.low):
        return (f"Neither harsh nor lenient: its mean offset from the people's mean is {_signed(offset)} points on "
                f"{scale} (the interval holds 0).")
    return f"Its mean offset from the people's mean: {_signed(offset)} points on {scale}."


def _ranks_but_offset(scores: ScoreErrors) -> list[str]:
    """A judge whose offset is large, named as such, the more so when it ranks as people do; a shift
    is advised only when its scores spread as a person's do: where they spread clearly more or less
    widely, the offset changes along the scale (a stretch), and no one shift puts them on it."""
    if not scores.large_offset:
        return []
    size = abs(scores.offset.value) / scores.people_sd
    if scores.ranks_but_offset:
        ranks = (f"It ranks responses as people do (Pearson {_read(scores.pearson)}, at least {HIGH_CORRELATION:g}) "
                 f"but is offset by {abs(scores.offset.value):.2f} points, {size:.1f} of the people's standard "
                 f"deviation (large: {LARGE_OFFSET:g} or more)")
        if scores.stretched:
            return [f"{ranks}, and its scores spread {scores.spread.value:.2f} times as widely as a person's: a stretch, "
                    "not a shift, so no one shift puts them on the people's scale; read its scores as ranks, or map "
                    "them linearly onto the people's scale (if the judge was asked on another scale than theirs, "
                    "declaring the people's does it)."]
        return [f"{ranks}: read its scores as ranks, or shift them by {-scores.offset.value:+.2f} before reading them "
                "on the people's scale."]
    return [f"Its offset is large: {size:.1f} of the people's standard deviation (Pearson {_read(scores.pearson)})."]


def _spread_line(scores: ScoreErrors) -> str:
    spread, whose = scores.spread, scores.spread_of
    shown = f"{_read(spread)} times the standard deviation of {whose}"
    if spread.below(1.0):
        return f"It spreads its scores less widely than people: {shown}."
    if spread.above(1.0):
        return f"It spreads its scores more widely than people: {shown}."
    if math.isfinite(spread.low):
        return f"It spreads its scores about as widely as people: {shown} (the interval holds 1)."
    return f"Its spread: {shown}."


def _scale_lines(scores: ScoreErrors) -> list[str]:
    """Ends of the scale it never (or seldom) uses; the middle it crowds or avoids, said only when no
    inner point goes clearly the other way (a judge that gives 4 to half its items and almost never 2
    or 3 does not avoid the middle of 1-5: it piles on 4); the points it gives clearly more often than
    people ("piles on"), and the inner points it gives clearly less often, that no sentence says yet."""
    shares = scores.shares
    if shares.empty:
        return []
    said = []
    for row, end in ((shares.iloc[-1], "top"), (shares.iloc[0], "bottom")):
        judge, people = row["judge"], row["people"]
        if judge.value == 0 and people.value > 0:
            said.append(f"It never uses the {end} of the scale ({row['point']:g}), where people give "
                        f"{people.percent()} of their scores.")
        elif row["difference"].below():
            said.append(f"It uses the {end} of the scale ({row['point']:g}) less than people: {judge.percent()} of its "
                        f"scores against {people.percent()} of theirs.")
    inner = shares.iloc[1:-1]
    middle, told = scores.middle, set()
    crowds, avoids = middle is not None and middle.above(), middle is not None and middle.below()
    if (crowds and not any(d.below() for d in inner["difference"])) or \
            (avoids and not any(d.above() for d in inner["difference"])):
        points = ", ".join(f"{p:g}" for p in inner["point"])
        judged, given = (sum(e.value for e in inner[c]) for c in ("judge", "people"))
        said.append(f"It {'crowds' if crowds else 'avoids'} the middle: {judged:.0%} of its scores at {points} where "
                    f"people put {given:.0%} ({_points(middle)}).")
        told = set(inner["point"])
    more = shares[[d.above() and p not in told for p, d in zip(shares["point"], shares["difference"])]]
    if len(more):
        said.append(f"It piles on {_named(more['point'])}: {_at_points(more)}.")
    less = inner[[d.below() and p not in told for p, d in zip(inner["point"], inner["difference"])]]
    if len(less):
        said.append(f"It gives {_named(less['point'])} less often than people: {_at_points(less)}.")
    return said


def _named(points) -> str:
    """Scale points in words: "4", "4 and 5", "2, 3 and 4"."""
    names = [f"{p:g}" for p in points]
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def _at_points(rows: pd.DataFrame) -> str:
    """Each point's share of the judge's scores and of the people's, and the difference: "54% of its
    scores at 4 against 21% of the people's (+33 points [+27, +39]), 44% at 5 against 26% (...)"."""
    return ", ".join(
        f"{row['judge'].value:.0%}" + (" of its scores" if k == 0 else "") + f" at {row['point']:g} against "
        f"{row['people'].value:.0%}" + (" of the people's" if k == 0 else "") + f" ({_points(row['difference'])})"
        for k, (_, row) in enumerate(rows.iterrows()))


def _limits_line(scores: ScoreErrors) -> str:
    lower, upper = scores.lower, scores.upper
    if not (math.isfinite(lower.value) and math.isfinite(upper.value)):
        return f"Limits of agreement: n/a ({lower.note})."
    width = upper.value - lower.value
    return (f"95% of its differences from the people's mean should lie between {_signed(lower)} and "
            f"{_signed(upper)} points (Bland-Altman limits of agreement: the mean difference ± {LIMITS} standard "
            f"deviations; each limit's interval is 95% two-sided only, one side alone may miss more often than "
            f"2.5%), a band {width:.2f} wide on a scale {_points_long(scores.scale[1] - scores.scale[0])} long.")


def _length_lines(scores: ScoreErrors) -> list[str]:
    """Whether the judge's error follows length; how far each annotator's does, against the others; and
    the judge minus a person against the same others, with what that comparison reads."""
    judge = scores.length
    if judge.above():
        how = "longer responses get more from the judge than from people"
    elif judge.below():
        how = "longer responses get less from the judge than from people"
    else:
        how = "no clear link" if math.isfinite(judge.low) else "no interval to judge it by"
    said = [f"Its error (judge − people) against the response's length in words: Spearman {_read(judge)}: {how}."]
    difference, annotators = scores.length_difference, scores.annotators
    if not len(annotators):
        return said + [f"A person's error against the others: n/a ({difference.note})."]
    each = ", ".join(f"{row['annotator']} {_read(row['spearman'])}" for _, row in annotators.iterrows())
    said.append(f"Each annotator's error against the mean of the other annotators, the same way (on the "
                f"{annotators['items'].iloc[0]} items all of them scored): {each}: how far one person's error follows "
                "length (not their mean: the annotators' errors against each other sum to 0 on every item, so their "
                "correlations average to about 0 whatever each one does).")
    if difference.above():
        verdict = "the judge prefers long responses more than the people do"
    elif difference.below():
        verdict = "the judge prefers short responses more than the people do"
    elif math.isfinite(difference.low):
        verdict = "no clear difference from the people (the interval holds 0)"
    else:
        verdict = "no interval to judge it by"
    return said + [f"The judge minus a person, each against the same other annotators, averaged over the annotators: "
                   f"{_signed(difference, 3)}: {verdict}. With the annotators' part about 0 by construction, this "
                   "compares the judge with the people as a whole; to compare it with one person, set the judge's line "
                   "beside each annotator's."]


def tables(found: AspectErrors) -> dict[str, pd.DataFrame]:
    """The tables of how the judge errs on one aspect, as read ("0.412 [0.330, 0.490]"; in fewer than MIN_GROUPS
    groups, "0.412", `lines` saying why once), by name: kappa, confusion matrix, per label, constant answers
    (labels); scale use, length (scores)."""
    out: dict[str, pd.DataFrame] = {}
    labels, scores = found.labels, found.scores
    if labels is not None:
        out["kappa"] = _kappa_table(labels, found.against)
        used = [i for i in range(len(labels.labels)) if labels.confusion[i].sum() or labels.confusion[:, i].sum()]
        out["confusion matrix"] = pd.DataFrame(
            labels.confusion[used][:, used].astype(int),
            index=pd.Index([labels.labels[i] for i in used], name=f"{found.against} ↓ / judge →"),
            columns=[labels.labels[i] for i in used]).reset_index()
        per = labels.per_label
        out["per label"] = pd.DataFrame({
            "label": per["label"], "support (majority)": per["support"], "judge gives": per["judge gives"],
            **{name: [_read(e) for e in per[name.lower()]] for name in ("precision", "recall")},
            "F1": [_read(e) for e in per["f1"]]})
        out["constant answers"] = pd.DataFrame({
            "always answering": labels.constants["label"], "right on": [e.percent() for e in labels.constants["share"]],
            "kappa": [f"{k:.3f}" if math.isfinite(k) else "n/a (the majority's only label)"
                      for k in labels.constants["kappa"]]})
    if scores is not None and not scores.shares.empty:
        out["scale use"] = pd.DataFrame({
            "point": [f"{p:g}" for p in scores.shares["point"]],
            "judge (rounded)": [e.percent() for e in scores.shares["judge"]],
            "people (every score)": [e.percent() for e in scores.shares["people"]],
            "judge − people": [_points(e) for e in scores.shares["difference"]]})
    if scores is not None and len(scores.annotators):
        out["length"] = pd.DataFrame({
            "whose error": ["the judge (against the people's mean)",
                            *[f"annotator {a} (against the others)" for a in scores.annotators["annotator"]],
                            "the judge − a person (the same others), mean over annotators"],
            "Spearman with words [95% CI]": [_read(scores.length), *[_read(e) for e in scores.annotators["spearman"]],
                                             _signed(scores.length_difference, 3)]})
    if _groups(found) >= MIN_GROUPS:
        return out
    return {name: table.map(lambda cell: _once(found, cell) if isinstance(cell, str) else cell)
            .rename(columns=lambda column: column.replace(" [95% CI]", "")) for name, table in out.items()}


def _kappa_table(labels: LabelErrors, against: str) -> pd.DataFrame:
    kind = "weighted kappa" if labels.weighting == "quadratic" else "kappa"
    rows = [(f"the judge against {against}", _read(labels.kappa), str(labels.items))]
    if len(labels.annotators) > 1:  # with one, the row above is against them, and no one to compare them with
        rows += [(f"the judge against {row['annotator']}" + ("" if row["in the mean"] == "yes" else
                                                             f" ({row['in the mean']})"), _read(row["kappa"]),
                  str(row["items"]))
                 for _, row in labels.annotators.iterrows()]
        rows += [("the judge against one annotator, mean", _read(labels.judge_mean), ""),
                 (f"two annotators, mean over {counted(labels.pairs, 'pair')}", _read(labels.people), ""),
                 ("the judge − the people", _signed(labels.difference, 3), ""),
                 (f"{labels.among_name} among the people", _read(labels.among), "")]
    return pd.DataFrame(rows, columns=["", f"{kind} [95% CI]", "items"])


def text(found: AspectErrors, with_tables: bool = True) -> str:
    """One aspect as the command line prints it: its title, its sentences, then (`with_tables`) its tables."""
    parts = [f"How the judge errs: {title(found)}", *(f"  - {line}" for line in lines(found))]
    for name, table in tables(found).items() if with_tables else ():
        parts += [f"  {name}:", *("    " + row for row in table.to_string(index=False).splitlines())]
    return "\n".join(parts)


def blocks(label: str, found: list[AspectErrors], figures: bool = True) -> list:
    """The report's blocks of one template version and judge (`label`): per aspect its sentences, its
    figures and its tables (long ones folded)."""
    out = []
    for one in found:
        named = tables(one)
        out += [Heading(f"{label}: {title(one)}", 4), Bullets(tuple(lines(one)))]
        if figures and one.labels is not None:
            out.append(Figure(confusion_figure(one.labels, f"{one.aspect}: the judge against {one.against}", one.against),
                              f"{label}: confusion matrix of {one.aspect}"))
        if "per label" in named:
            out.append(Table(named["per label"]))
        if figures and one.scores is not None:
            out.append(Figure(bland_altman_figure(one.scores, f"{one.aspect}: Bland-Altman", per_item=False),
                              f"{label}: Bland-Altman plot of {one.aspect}"))
            if not one.scores.shares.empty:
                out.append(Figure(scale_use_figure(one.scores, f"{one.aspect}: use of the scale"),
                                  f"{label}: use of the scale, {one.aspect}"))
        folded = [block for name, table in named.items() if name != "per label"
                  for block in (Text(f"{name[:1].upper()}{name[1:]}:"), Table(table))]
        if folded:
            out.append(Details(f"{label}: the tables of {one.aspect}", tuple(folded)))
    return out


def report_section(store: Store, dataset: str, combos: list[tuple[str, tuple[str, str]]], variant: str = "wmean",
                   figures: bool = True, say=lambda message: None) -> list:
    """The report's section "How the judge errs": per (label, (template version, signature)) of `combos`
    its blocks, or why it has none."""
    if not combos:
        return []
    out = [Heading("How the judge errs"), Text(INTRO)]
    for label, pair in combos:
        say(f"{dataset}: how {label} errs")
        try:
            found = read(store, dataset, pair, variant)
        except GevalError as exc:
            out.append(Text(f"{label}: {exc}"))
            continue
        out += blocks(label, found, figures)
    return out
