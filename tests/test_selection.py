"""geval.selection: filters, seeded samples, limits."""

from __future__ import annotations

import pytest

import geval
from helpers import make_items

ITEMS = make_items(12, per_group=3, systems=3)


def test_filters_keep_dataset_order():
    chosen = geval.select_items(ITEMS, systems=["sys1"], groups=["g0", "g1", "g2"])
    assert [i.response for i in chosen] == ["response 1", "response 4", "response 7"]
    assert geval.select_items(ITEMS, level="turn") == ITEMS


def test_seeded_sample_is_stable_and_in_order():
    one = geval.select_items(ITEMS, sample=5, seed=7)
    assert one == geval.select_items(ITEMS, sample=5, seed=7)
    assert len(one) == 5 and one == [i for i in ITEMS if i in one]
    assert geval.select_items(ITEMS, sample=5, seed=8) != one
    assert geval.select_items(ITEMS, sample=50) == ITEMS


def test_limit_after_sample():
    assert geval.select_items(ITEMS, limit=3) == ITEMS[:3]
    assert geval.select_items(ITEMS, sample=6, seed=1, limit=2) == geval.select_items(ITEMS, sample=6, seed=1)[:2]


def test_nothing_matches():
    with pytest.raises(geval.DatasetError) as error:
        geval.select_items(ITEMS, level="summary", systems=["x"])
    assert str(error.value) == "no items match level=summary, systems=['x'], groups=any"
