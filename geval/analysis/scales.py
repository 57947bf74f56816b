"""A judge's scores read on the people's scale, so that they compare score for score (the
alternative annotator test and its plan, how the judge errs): the one rule every reader of a judge
against people uses. A judge asked on another scale than the people's (G-EVAL's SummEval fluency
prompt asks 1-3 of what the experts scored 1-5; a judge imported with its own 1-10, 0-100 or 0-1)
is mapped linearly onto theirs.

Which scale is the people's: the one declared for the aspect where the data came in (its layout's
paper, `datasets load --scale`, a labels import, the Data page's mapping, the Label page's
aspects: `Store.scales`); with nothing declared, the judge's own, taken to be written for them,
unless their scores fall outside it: then the whole-number range of the scores they gave. Never
the range they happened to use: a judge that copies people who never gave a 1 on a 1-5 scale is
not stretched onto 2-5. With nothing declared, the sentence says which reading was taken and how
to declare the scale, whenever the judge's scale differs from the range people used."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from geval.data.declared import Scale, scale_text


def people_scale(own: Scale, declared: Scale | None, seen: Scale | None) -> Scale | None:
    """The people's scale to read a judge whose own scale is `own` on (None when the judge is on it
    already): `declared` for the aspect, else `seen` (their lowest and highest score) when it falls
    outside `own`."""
    if declared is not None:
        return None if tuple(declared) == tuple(own) else declared
    if seen is None or own[0] <= seen[0] <= seen[1] <= own[1]:
        return None
    return seen


def on_people_scale(values: pd.Series, own: Scale, theirs: Scale | None,
                    whole: bool = False) -> tuple[pd.Series, Scale, str]:
    """`values` on the people's scale `theirs` (`people_scale`; None: left on `own`), the scale they
    are on now, and how they were put there in words ("" when already on it); `whole`: rounded to
    that scale's points, as a judge read as its most probable score is on its own scale."""
    low, high = own
    target = (float(math.floor(theirs[0])), float(math.ceil(theirs[1]))) if theirs else (float(low), float(high))
    said = ""
    if target != (low, high) and high > low:
        values = target[0] + (values - low) * (target[1] - target[0]) / (high - low)
        said = (f"Its scores, on {low:g}-{high:g}, are mapped linearly onto the people's {target[0]:g}-{target[1]:g}"
                + (" and rounded to it" if whole else ""))
    return (_clipped(values.round(), *target) if whole else values), target, said


def _clipped(values: pd.Series, low: float, high: float) -> pd.Series:
    """`values.clip(low, high)` worked out on the numbers alone: pandas answers numpy's questions to a Series by
    looking each name up among the index's values, which hashes a million item ids and keeps that hash with the
    index (the judge's scores kept by the store)."""
    numbers = values.to_numpy()
    return pd.Series(np.where(numbers < low, low, np.where(numbers > high, high, numbers)), index=values.index,
                     name=values.name)


def read_on_people_scale(values: pd.Series, own: Scale, aspect: str, declared: Scale | None, seen: Scale | None,
                         whole: bool = False, dataset: str = "") -> tuple[pd.Series, Scale, str, bool]:
    """`values` (a judge's, on its own scale `own`) read on the people's scale of `aspect`: the values,
    the scale they are on, the reading in words, and whether that scale is the people's (False: no
    scale is declared and the judge's own is taken for theirs). The words say the declared scale
    (mapped onto, or read on) and, with none declared, which reading was taken where the judge's scale
    differs from the range people used, with how to declare it (`dataset` named in the command)."""
    mapped, target, said = on_people_scale(values, own, people_scale(own, declared, seen), whole)
    if declared is not None:
        return mapped, target, (f"{said}, the scale declared for {aspect}" if said else
                                f"Read on the people's {scale_text(target)} scale, declared for {aspect}"), True
    if said:
        return mapped, target, (f"{said} (the whole-number range of the scores they gave, as no scale is declared "
                                f"for {aspect}; if they were asked on another, {declaring(aspect, dataset)})"), True
    whole_seen = (float(math.floor(seen[0])), float(math.ceil(seen[1]))) if seen is not None else None
    if whole_seen is None or whole_seen == (float(own[0]), float(own[1])):
        return mapped, target, "", True
    return mapped, target, (f"No scale is declared for the people's {aspect}: their scores ({scale_text(seen)}) are "
                            f"read on the judge's own {scale_text(own)} scale, as if they were asked on it; if they "
                            f"were asked on another, {declaring(aspect, dataset)}"), False


def declaring(aspect: str, dataset: str = "") -> str:
    """How to declare the people's scale of `aspect`, in words."""
    return (f"declare it: python -m geval datasets load {dataset or 'DATASET'} --scale '{aspect}=LOW-HIGH', or on the "
            "Data page")
