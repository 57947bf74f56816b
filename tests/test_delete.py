"""Deleting: Store.delete_dataset and Store.delete_template_version delete only what they name
(never another dataset's judgments, even with the same template and judge and shared cached
answers), in one transaction, and return counts; the Data and Prompts pages ask first, in a
dialog that shows those counts."""

from __future__ import annotations

import sqlite3

import pandas as pd
import pytest
from helpers import make_items, make_template, scripted

import geval
from geval.data.dataset import Dataset, resolve_dataset
from geval.errors import StoreError
from geval.judging.templates import parse_template
from tests.apptest_helpers import open_app, texts

TEMPLATE = make_template()
SAMPLE = geval.load_dataset(resolve_dataset("topicalchat_usr_sample"))
OTHER = make_template(name="test-naturalness-v2", body="Reply:\n{{response}}\n\nForm:\n- Naturalness:")
N = 6


def snapshot(store: geval.Store, sql: str) -> pd.DataFrame:
    return pd.read_sql_query(sql, store.db.conn)


@pytest.fixture
def two(store):
    """Datasets alpha and beta with the same item texts, both scored with the same two templates
    and judge (so their judgments share cached calls), with notes on items of both."""
    for name in ("alpha", "beta"):
        items = make_items(N, dataset=name)
        store.save_dataset(Dataset(name, f"{name}.csv", "table", items))
        for template in (TEMPLATE, OTHER):
            geval.score(store, items, template, scripted(), name)
        store.set_note(items[0].id, True, f"look at {name}")
    assert store.db["calls"].count == 2 * N  # alpha and beta share every cached answer
    return store


def test_deleting_a_dataset_deletes_its_items_judgments_and_notes_only(two):
    store = two
    beta = {table: snapshot(store, sql) for table, sql in {
        "items": "SELECT * FROM items WHERE dataset = 'beta' ORDER BY id",
        "judgments": "SELECT * FROM judgments WHERE dataset = 'beta' ORDER BY id",
        "notes": "SELECT * FROM notes WHERE item_id IN (SELECT id FROM items WHERE dataset = 'beta')",
    }.items()}
    shared = {table: store.db[table].count for table in ("calls", "templates", "runs")}

    assert store.delete_dataset("alpha", dry_run=True) == {"items": N, "judgments": 2 * N, "notes": 1, "labels": 0, "searches": 0}
    assert store.db["judgments"].count == 4 * N  # a dry run deletes nothing

    assert store.delete_dataset("alpha") == {"items": N, "judgments": 2 * N, "notes": 1, "labels": 0, "searches": 0}
    assert store.dataset_names() == ["beta"]
    assert store.items("alpha") == [] and len(store.judgments("alpha")) == 0
    assert set(store.notes()) == set(beta["notes"]["item_id"])
    pd.testing.assert_frame_equal(snapshot(store, "SELECT * FROM items ORDER BY id"), beta["items"])
    pd.testing.assert_frame_equal(snapshot(store, "SELECT * FROM judgments ORDER BY id"), beta["judgments"])
    assert {table: store.db[table].count for table in shared} == shared  # the cache, templates and runs stay
    assert store.judgments("beta")["prompt"].notna().all()  # beta's judgments still find their cached answers


def test_deleting_a_template_version_deletes_it_and_its_judgments_only(two):
    store = two
    kept = snapshot(store, f"SELECT * FROM judgments WHERE template_version = '{OTHER.version}' ORDER BY id")
    assert store.delete_template_version(TEMPLATE.version, dry_run=True) == {"templates": 1, "judgments": 2 * N}
    assert store.delete_template_version(TEMPLATE.version) == {"templates": 1, "judgments": 2 * N}
    assert [t.version for t in store.template_versions()] == [OTHER.version]
    pd.testing.assert_frame_equal(snapshot(store, "SELECT * FROM judgments ORDER BY id"), kept)
    assert len(store.items("alpha")) == len(store.items("beta")) == N and store.db["calls"].count == 2 * N


def test_deleting_what_is_not_there_is_a_named_error(two):
    with pytest.raises(StoreError) as error:
        two.delete_dataset("gamma")
    assert str(error.value) == "no dataset named 'gamma' in :memory:; stored: alpha, beta"
    with pytest.raises(StoreError) as error:
        two.delete_template_version("0123456789ab")
    assert str(error.value) == "no template version '0123456789ab' in :memory:"


def test_a_delete_that_fails_half_way_deletes_nothing(tmp_path):
    store = geval.Store(tmp_path / "store.sqlite")
    items = make_items(N, dataset="alpha")
    store.save_dataset(Dataset("alpha", "alpha.csv", "table", items))
    geval.score(store, items, TEMPLATE, scripted(), "alpha")
    store.db.execute("CREATE TRIGGER keep BEFORE DELETE ON datasets BEGIN SELECT RAISE(ABORT, 'disk full'); END")
    with pytest.raises(sqlite3.IntegrityError, match="disk full"):
        store.delete_dataset("alpha")  # the datasets row goes last: items and judgments went first
    assert len(store.items("alpha")) == N and len(store.judgments("alpha")) == N
    store.close()


# --- the pages ask first ------------------------------------------------------------------------

def test_the_data_page_asks_before_deleting_and_says_what_goes(monkeypatch, tmp_path):
    at = open_app(monkeypatch, tmp_path)
    store = geval.Store(tmp_path / "store.sqlite")
    store.save_dataset(SAMPLE)  # the app may have loaded it from its cache without storing it (see docs)
    items = SAMPLE.items
    geval.score(store, items[:4], TEMPLATE, scripted(), "topicalchat_usr_sample")
    store.set_note(items[0].id, True, "odd")
    store.save_label(items[1].id, "Natural", 2)
    other = make_items(3, dataset="other")
    store.save_dataset(Dataset("other", "other.csv", "table", other))
    geval.score(store, other, TEMPLATE, scripted(), "other")

    at.button(key="data_delete_open").click().run()
    assert not at.exception
    assert "This deletes 60 items, 4 judgments (of every template and judge), 1 notes and 1 of your labels." in texts(at)
    assert "Dataset: topicalchat_usr_sample" in texts(at)
    at.button(key="data_delete_cancel").click().run()
    assert "This deletes" not in texts(at)
    assert len(store.judgments("topicalchat_usr_sample")) == 4  # cancelled: nothing deleted

    at.button(key="data_delete_open").click().run()
    at.button(key="data_delete_confirm").click().run()
    assert not at.exception
    assert "Deleted topicalchat_usr_sample from the store: 60 items, 4 judgments, 1 notes, 1 labels." in texts(at)
    assert len(store.judgments("topicalchat_usr_sample")) == 0 and store.notes() == {} and store.labels().empty
    assert len(store.judgments("other")) == 3 and len(store.items("other")) == 3
    at.run()  # the dataset the store loaded last opens
    assert not at.exception and "other (table): 3 items" in texts(at)
    at.selectbox(key="data_dataset").set_value("topicalchat_usr_sample").run()
    assert not at.exception and len(store.items("topicalchat_usr_sample")) == 60  # loaded anew, not from a cache
    store.close()


def test_the_prompts_page_asks_before_deleting_a_saved_version(monkeypatch, tmp_path):
    at = open_app(monkeypatch, tmp_path, "views/2_prompts.py")
    assert "prompts_delete_open" not in [b.key for b in at.button]  # the bundled file is not a saved version yet
    editor = at.text_area(key="template_text")
    editor.set_value(editor.value.replace("naturally written", "natural and fluent")).run()
    at.button(key="prompts_save").click().run()
    version = at.success[0].value.split(" ")[0].split("@")[1]
    store = geval.Store(tmp_path / "store.sqlite")
    template = parse_template(at.text_area(key="template_text").value)
    assert template.version == version
    geval.score(store, make_items(3, dataset="mine"), template, scripted(), "mine")

    at.button(key="prompts_delete_open").click().run()
    assert not at.exception
    assert "This deletes the saved version and its 3 judgments (on every dataset, with every judge)." in texts(at)
    at.button(key="prompts_delete_confirm").click().run()
    assert not at.exception
    assert f"Deleted topicalchat-naturalness@{version}: 1 saved version, 3 judgments." in texts(at)
    assert version not in {t.version for t in store.template_versions()}
    assert len(store.judgments(template_version=version)) == 0
    assert "prompts_delete_open" not in [b.key for b in at.button]  # no longer a saved version
    store.close()
