"""Counts in words (`geval.reporting.counted`), and the messages that once said "1 judge calls"."""

from __future__ import annotations

import pytest
from helpers import make_items, make_template, scripted

import geval
from geval.wording import counted


@pytest.mark.parametrize("n, noun, plural, expected", [
    (1, "judge call", None, "1 judge call"), (0, "item", None, "0 items"), (2, "label", None, "2 labels"),
    (1, "item with a note", "items with a note", "1 item with a note"),
    (3, "item with a note", "items with a note", "3 items with a note"),
])
def test_a_count_in_words(n, noun, plural, expected):
    assert counted(n, noun, plural) == expected
    assert geval.reporting.counted(n, noun, plural) == expected


def test_a_dataset_of_one_item_reads_in_the_singular():
    summary = geval.Dataset("one", "one.csv", "table", make_items(1, systems=1)).summary()
    assert summary.startswith("one (table): 1 item (1 turn), 1 group, 1 system"), summary


def test_the_report_counts_one_flagged_item_as_one(store):
    items = make_items(10)
    store.save_dataset(geval.Dataset("synthetic", "synthetic.csv", "table", items))
    geval.score(store, items, make_template(), scripted(), "synthetic")
    store.set_note(items[0].id, True, "too kind")
    made = geval.reporting.report(store, "synthetic", n_boot=100, baselines=[])
    assert "1 item with a flag or a note, 1 of them flagged." in made.markdown()
