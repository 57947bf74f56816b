"""What a million judgments' tables share instead of copying: the items' columns a table of one judgment
per item holds as they are, a judge's scores read onto the people's scale without a hash of their item
ids, the disagreements' one template version and signature held once, and the columns they take from the
judgments' read."""

import numpy as np
import pandas as pd
import pytest
from helpers import make_items, make_template, scripted

import geval
from geval.analysis.agreement import SCORE_COLUMNS, SCORED_COLUMNS
from geval.analysis.scales import on_people_scale
from geval.data.columns import columns as item_columns


def _items(n: int = 12):
    return make_items(n)


def test_a_table_of_every_item_in_order_holds_the_items_column_itself():
    found = item_columns(_items())
    every = np.arange(len(found))
    column = found.table_column_at("systems", lambda: found.systems, every)
    assert column is found.table_column("systems", lambda: found.systems)
    some = np.array([3, 1, 1, 0])
    assert list(found.table_column_at("systems", lambda: found.systems, some)) == list(found.systems[some])
    assert list(found.table_column_at("systems", lambda: found.systems, every[::-1])) == list(found.systems[::-1])


def test_scores_rounded_onto_the_people_scale_are_clipped_as_pandas_clips_them():
    index = pd.Index([f"item{i}" for i in range(7)], name="item_id")
    values = pd.Series([-0.4, 0.6, 2.5, 3.49, np.nan, 7.0, 5.5], index=index, name="Natural")
    mapped, scale, _ = on_people_scale(values, (1, 5), (1, 5), whole=True)
    expected = values.round().clip(1.0, 5.0)
    assert scale == (1.0, 5.0)
    assert mapped.index.equals(index) and mapped.name == "Natural"
    np.testing.assert_array_equal(np.signbit(mapped.to_numpy()), np.signbit(expected.to_numpy()))
    pd.testing.assert_series_equal(mapped, expected)


def test_the_disagreements_hold_their_template_version_and_signature_once(tmp_path):
    store = geval.Store(tmp_path / "store.sqlite")
    items = _items()
    store.save_dataset(geval.Dataset("synthetic", "", "table", items))
    geval.score(store, items, make_template(), scripted(), "synthetic")
    frame = geval.disagreements(store, "synthetic", columns="brief")
    version, signature = store.combos("synthetic").iloc[0][["template_version", "signature"]]
    assert list(frame["template_version"]) == [version] * len(frame)
    assert list(frame["signature"]) == [signature] * len(frame)
    assert frame["signature"].iloc[0] == signature and (frame["signature"] == signature).all()
    assert len(frame["signature"].cat.categories) == 1


def test_the_disagreements_share_the_judgments_read_they_come_from(tmp_path):
    store = geval.Store(tmp_path / "store.sqlite")
    items = _items()
    store.save_dataset(geval.Dataset("synthetic", "", "table", items))
    geval.score(store, items, make_template(), scripted(), "synthetic")
    version, signature = store.combos("synthetic").iloc[0][["template_version", "signature"]]
    frame = geval.disagreements(store, "synthetic", columns="brief")
    read = store.judgments("synthetic", version, signature, columns=SCORE_COLUMNS)
    assert np.shares_memory(frame["score"].to_numpy(), read["score"].to_numpy())  # every item current: not copied
    frame.loc[0, "score"] = -1.0  # a change to the table is its own (copied on write), not the read's
    assert read["score"].iloc[0] != -1.0
    store.save_dataset(geval.Dataset("synthetic", "", "table", items[1:]))  # an item no longer in the dataset
    fewer = geval.disagreements(store, "synthetic", columns="brief")
    assert items[0].id not in set(fewer["item_id"]) and len(fewer) == len(read) - 1


def _scored(tmp_path) -> geval.Store:
    """A store of `_items()` scored by the scripted judge."""
    store = geval.Store(tmp_path / "store.sqlite")
    items = _items()
    store.save_dataset(geval.Dataset("synthetic", "", "table", items))
    geval.score(store, items, make_template(), scripted(), "synthetic")
    return store


def test_the_distributions_read_beside_the_scores_are_their_rows_or_read_again_with_them(tmp_path):
    """The most probable scores read the distributions beside the kept read of the scores, row for row; a read
    that is not the judgments' order (a write between the two) is read again with them in one go."""
    store = _scored(tmp_path)
    version, signature = store.combos("synthetic").iloc[0][["template_version", "signature"]]
    read = store.judgments("synthetic", version, signature, columns=SCORED_COLUMNS)
    whole = store.judgments("synthetic", version, signature, columns=(*SCORED_COLUMNS, "distribution"))
    beside = store.judgments_beside(read, "synthetic", version, signature, "distribution")
    pd.testing.assert_frame_equal(beside, whole)
    assert np.shares_memory(beside["score"].to_numpy(), read["score"].to_numpy())
    stale = read.iloc[::-1].reset_index(drop=True)
    pd.testing.assert_frame_equal(store.judgments_beside(stale, "synthetic", version, signature, "distribution"),
                                  whole)


def test_the_distributions_alone_are_read_beside_the_kept_read_when_nothing_was_written_since(tmp_path):
    """A million judgments' item ids and aspects were read again only to check the order: the store knows when
    its read of them is what a read now gives. After a write they are read and compared again."""
    store = _scored(tmp_path)
    version, signature = store.combos("synthetic").iloc[0][["template_version", "signature"]]
    whole = store.judgments("synthetic", version, signature, columns=(*SCORED_COLUMNS, "distribution"))
    read = store.judgments("synthetic", version, signature, columns=SCORED_COLUMNS)
    statements = []
    store.db.conn.set_trace_callback(statements.append)
    pd.testing.assert_frame_equal(store.judgments_beside(read, "synthetic", version, signature, "distribution"),
                                  whole)
    assert [s.split(" FROM ")[0] for s in statements if s.startswith("SELECT j.")] == ["SELECT j.distribution"]
    store.set_note(make_items(1)[0].id, True, "a write")
    statements.clear()
    pd.testing.assert_frame_equal(store.judgments_beside(read, "synthetic", version, signature, "distribution"),
                                  whole)
    assert [s.split(" FROM ")[0] for s in statements if s.startswith("SELECT j.")] == [
        "SELECT j.item_id, j.aspect, j.distribution"]


def test_the_plots_disagreements_are_those_without_the_judgments_text(tmp_path):
    store = _scored(tmp_path)
    plotted = geval.disagreements(store, "synthetic", columns="scores")
    pd.testing.assert_frame_equal(plotted, geval.disagreements(store, "synthetic", columns="brief")
                                  .drop(columns=["reason", "distribution"]))


def test_the_items_strings_are_counted_as_arrow_strings_unless_one_is_missing():
    """`counted` gives the Arrow column when no value is missing (the same distinct values in the same order,
    sorted as numpy sorts them), else the objects, so that a missing system stays None where it is listed."""
    import dataclasses

    items = _items()
    found = item_columns(items)
    assert isinstance(found.counted("groups").dtype, pd.StringDtype)
    assert found.first_seen("systems") == list(pd.unique(found.systems))
    assert found.first_seen("groups") == list(pd.unique(found.groups))
    assert np.array_equal(pd.factorize(found.counted("groups"), sort=True)[0],
                          pd.factorize(found.groups.astype(str), sort=True)[0])
    missing = item_columns([dataclasses.replace(items[0], system=None), *items[1:]])
    assert missing.counted("systems") is missing.systems
    assert missing.first_seen("systems")[0] is None


def test_an_index_of_the_items_own_ids_is_placed_in_order_and_any_other_is_looked_up():
    found = item_columns(_items())
    ids = found.ids.tolist()
    for dtype in (object, "string[pyarrow]"):
        np.testing.assert_array_equal(found.positions(pd.Index(ids, dtype=dtype)), np.arange(len(ids)))
    moved = [ids[1], ids[0], *ids[2:]]  # as long, the same ids, another order
    np.testing.assert_array_equal(found.positions(pd.Index(moved)), [1, 0, *range(2, len(ids))])
    np.testing.assert_array_equal(found.positions(pd.Index([*ids[:-1], "elsewhere"])), [*range(len(ids) - 1), -1])


def test_an_unknown_read_of_disagreements_is_named(tmp_path):
    store = geval.Store(tmp_path / "store.sqlite")
    items = _items()
    store.save_dataset(geval.Dataset("synthetic", "", "table", items))
    geval.score(store, items, make_template(), scripted(), "synthetic")
    assert set(geval.disagreements(store, "synthetic")) > set(geval.disagreements(store, "synthetic", columns="brief"))
    with pytest.raises(ValueError, match="columns 'some' is unknown; use one of all, brief, scores"):
        geval.disagreements(store, "synthetic", columns="some")


def _human_columns(found, aspects):
    """Every human column of `found`, as plain values to compare."""
    out = {"aspects": found.human_aspects, "annotators": found.annotators}
    for aspect in aspects:
        who, matrix = found.ratings(aspect)
        out[aspect] = (found.mean(aspect).tolist(), found.rated(aspect).tolist(), found.range(aspect),
                       found.named(aspect), found.scored(aspect).tolist(), who, matrix.tolist(),
                       found._by_position(aspect)[1].tolist())
    return out


@pytest.mark.parametrize("named", [False, True])
def test_items_that_share_their_human_scores_read_as_items_that_do_not(tmp_path, named):
    """A store's read of a dataset shares equal human scores and annotators between its items: their human columns
    are made over the distinct ones and spread. They equal those of the same items each holding its own, with
    aspects and annotators first seen late, an item without scores, a None score and an int beside a float."""
    from dataclasses import replace

    from geval.data.items import Turn, make_item

    kinds = [({"Natural": (1, 3)}, {}), ({"Natural": (2.0, 3), "Engaging": (1,)}, {}),
             ({}, {}), ({"Natural": (3, None, 1)}, {}), ({"Engaging": (2, 2)}, {})]
    if named:
        kinds = [(human, {a: tuple(f"{who}{a[0]}" for who in "zyx"[:len(s)]) for a, s in human.items()})
                 for human, _ in kinds] + [({"Natural": (1, 2)}, {"Natural": ("w", "z")})]
    items = [make_item("shared", "turn", [Turn("A", f"hi {i}")], f"response {i}", system=f"s{i % 3}", group=f"g{i % 4}",
                       human=kinds[min(i // 7, len(kinds) - 1) if i % 5 else i % len(kinds)][0],
                       annotators=kinds[min(i // 7, len(kinds) - 1) if i % 5 else i % len(kinds)][1])
             for i in range(60)]
    geval.Store(tmp_path / "store.sqlite").save_dataset(geval.Dataset("shared", "", "table", items))
    read = geval.Store(tmp_path / "store.sqlite").items("shared")  # read from the file, as a report reads them
    shared = item_columns(read)
    assert shared._distinct() is not None  # read as the distinct ones, spread
    own = [replace(item, human={a: tuple(s) for a, s in item.human.items()}, annotators=dict(item.annotators))
           for item in read]
    alone = item_columns(own)
    assert alone._distinct() is None  # every item its own: read item by item
    np.testing.assert_equal(_human_columns(shared, ["Natural", "Engaging"]),  # NaN equal to NaN
                            _human_columns(alone, ["Natural", "Engaging"]))
    assert shared.range("Natural") == (1, 3) and type(shared.range("Natural")[0]) is int
