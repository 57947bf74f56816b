"""geval.selection: filters, seeded samples, limits."""

from __future__ import annotations

import pytest
from helpers import make_items

from geval.data.selection import select_items
from geval.errors import DatasetError

ITEMS = make_items(12, per_group=3, systems=3)


def test_filters_keep_dataset_order():
    chosen = select_items(ITEMS, systems=["sys1"], groups=["g0", "g1", "g2"])
    assert [i.response for i in chosen] == ["response 1", "response 4", "response 7"]
    assert select_items(ITEMS, level="turn") == ITEMS


def test_seeded_sample_is_stable_and_in_order():
    one = select_items(ITEMS, sample=5, seed=7)
    assert one == select_items(ITEMS, sample=5, seed=7)
    assert len(one) == 5 and one == [i for i in ITEMS if i in one]
    assert select_items(ITEMS, sample=5, seed=8) != one
    assert select_items(ITEMS, sample=50) == ITEMS


def test_limit_after_sample():
    assert select_items(ITEMS, limit=3) == ITEMS[:3]
    assert select_items(ITEMS, sample=6, seed=1, limit=2) == select_items(ITEMS, sample=6, seed=1)[:2]


def test_nothing_matches():
    with pytest.raises(DatasetError) as error:
        select_items(ITEMS, level="summary", systems=["x"])
    assert str(error.value) == "no items match level=summary, systems=['x'], groups=any"


def test_a_sample_of_groups_keeps_whole_groups():
    chosen = select_items(ITEMS, sample_groups=2, seed=3)
    groups = {i.group for i in chosen}
    assert len(groups) == 2 and chosen == [i for i in ITEMS if i.group in groups]  # every item of each, in order
    assert chosen == select_items(ITEMS, sample_groups=2, seed=3) != select_items(ITEMS, sample_groups=2, seed=4)
    assert select_items(ITEMS, sample_groups=99) == ITEMS
