"""A judge's scores read on the people's scale, so that they compare score for score (the
alternative annotator test, how the judge errs). A judge asked on another scale than the people's
(G-EVAL's SummEval fluency prompt asks 1-3 of what the experts scored 1-5; a judge imported with its
own 1-5) is mapped linearly onto theirs.

Which scale is the people's: the one the dataset declares for the aspect (its layout's paper:
`geval.data.layouts.declared_scales`); with nothing declared, the judge's own, taken to be written
for them, unless their scores fall outside it: then the whole-number range of the scores they gave.
Never the range they happened to use: a judge that copies people who never gave a 1 on a 1-5 scale
is not stretched onto 2-5."""

from __future__ import annotations

import math

import pandas as pd

Scale = tuple[float, float]


def people_scale(own: Scale, declared: Scale | None, seen: Scale | None) -> tuple[Scale | None, str]:
    """The people's scale to read a judge whose own scale is `own` on (None when the judge is on it
    already), and where it comes from in words ("" for a declared one): `declared` by the dataset
    for the aspect, else `seen` (their lowest and highest score) when it falls outside `own`."""
    if declared is not None:
        return (None if tuple(declared) == tuple(own) else declared), ""
    if seen is None or own[0] <= seen[0] <= seen[1] <= own[1]:
        return None, ""
    return seen, " (the range of the scores they gave: the dataset does not say its scale)"


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
    return (values.round().clip(*target) if whole else values), target, said
