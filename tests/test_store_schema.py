"""The store's schema version and forward migrations (geval.store.MIGRATIONS): an older store is
brought to the current version with its data intact, one transaction per version; a failed
migration leaves the store as it was; a store from a newer version is refused untouched."""

from __future__ import annotations

import sqlite3
import threading

import pytest

import geval
import geval.store as store_module
from geval.loaders.base import Dataset
from helpers import make_items, make_template, scripted

TEMPLATE = make_template()


def make_v1_store(path) -> dict:
    """A store written by schema 1 with a dataset, judgments, a run and a note; returns what it holds."""
    store = geval.Store(path)
    assert store.schema_version() == 1
    items = make_items(5)
    store.save_dataset(Dataset("synthetic", "synthetic.csv", "table", items))
    geval.score_items(store, items, TEMPLATE, scripted(), "synthetic")
    store.set_note(items[0].id, True, "keep me")
    held = {"items": store.items("synthetic"), "judgments": store.judgments("synthetic"), "notes": store.notes(),
            "runs": len(store.runs())}
    store.close()
    return held


def schema_of(path) -> int:
    with sqlite3.connect(path) as conn:
        return int(conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0])


def test_a_new_store_is_at_the_current_version_and_every_version_has_a_migration(store):
    assert store.schema_version() == store_module.SCHEMA_VERSION
    assert sorted(store_module.MIGRATIONS) == list(range(1, store_module.SCHEMA_VERSION + 1))


def test_an_old_store_is_migrated_forward_with_its_data_intact(tmp_path, monkeypatch):
    path = tmp_path / "store.sqlite"
    held = make_v1_store(path)
    ran = []

    def add_comment_column(db) -> None:  # not idempotent: running it twice would fail
        ran.append(2)
        db.execute("ALTER TABLE judgments ADD COLUMN comment TEXT")

    def add_tags_table(db) -> None:
        ran.append(3)
        db["tags"].create({"item_id": str, "tag": str}, pk=("item_id", "tag"))

    monkeypatch.setattr(store_module, "SCHEMA_VERSION", 3)
    monkeypatch.setitem(store_module.MIGRATIONS, 2, add_comment_column)
    monkeypatch.setitem(store_module.MIGRATIONS, 3, add_tags_table)
    store = geval.Store(path)
    assert ran == [2, 3]  # in order, from the store's version to the current one
    assert store.schema_version() == 3 == schema_of(path)
    assert "comment" in store.db["judgments"].columns_dict and "tags" in store.db.table_names()
    assert store.items("synthetic") == held["items"]
    migrated = store.judgments("synthetic")
    assert migrated["comment"].isna().all()
    assert migrated.drop(columns="comment").equals(held["judgments"])
    assert store.notes() == held["notes"] and len(store.runs()) == held["runs"]
    store.close()

    again = geval.Store(path)  # a migrated store is not migrated twice
    assert ran == [2, 3] and again.schema_version() == 3
    again.close()


def test_a_failed_migration_leaves_the_store_as_it_was(tmp_path, monkeypatch):
    path = tmp_path / "store.sqlite"
    held = make_v1_store(path)

    def half_done(db) -> None:
        db["tags"].create({"item_id": str, "tag": str})
        db.execute("DELETE FROM notes")
        db.execute("ALTER TABLE no_such_table ADD COLUMN x TEXT")

    monkeypatch.setattr(store_module, "SCHEMA_VERSION", 2)
    monkeypatch.setitem(store_module.MIGRATIONS, 2, half_done)
    with pytest.raises(geval.StoreError) as error:
        geval.Store(path)
    assert str(error.value) == (f"{path}: migrating from schema 1 to 2 failed (no such table: no_such_table); "
                                "the store is unchanged at schema 1")
    monkeypatch.setattr(store_module, "SCHEMA_VERSION", 1)
    store = geval.Store(path)
    assert store.schema_version() == 1 and "tags" not in store.db.table_names()
    assert store.notes() == held["notes"] and store.items("synthetic") == held["items"]
    store.close()


def test_a_migration_runs_once_when_several_connections_open_the_store_at_once(tmp_path, monkeypatch):
    path = tmp_path / "store.sqlite"
    make_v1_store(path)
    ran = []
    monkeypatch.setattr(store_module, "SCHEMA_VERSION", 2)
    monkeypatch.setitem(store_module.MIGRATIONS, 2, lambda db: (ran.append(2),
                                                                db.execute("ALTER TABLE notes ADD COLUMN who TEXT")))
    start, errors = threading.Barrier(6), []

    def open_it() -> None:
        start.wait()
        try:
            geval.Store(path).close()
        except Exception as exc:  # noqa: BLE001 (reported below)
            errors.append(repr(exc))

    threads = [threading.Thread(target=open_it) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert errors == [] and ran == [2] and schema_of(path) == 2


def test_a_store_from_a_newer_version_is_refused_and_left_untouched(tmp_path):
    path = tmp_path / "store.sqlite"
    make_v1_store(path)
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    with pytest.raises(geval.StoreError) as error:
        geval.Store(path)
    assert str(error.value) == f"{path}: made by a newer G-Eval Studio (schema 99); upgrade this one"
    assert schema_of(path) == 99


def test_a_missing_migration_is_a_named_error(tmp_path, monkeypatch):
    path = tmp_path / "store.sqlite"
    make_v1_store(path)
    monkeypatch.setattr(store_module, "SCHEMA_VERSION", 2)
    with pytest.raises(geval.StoreError) as error:
        geval.Store(path)
    assert str(error.value) == f"{path}: no migration to schema 2; reinstall G-Eval Studio"
    assert schema_of(path) == 1
