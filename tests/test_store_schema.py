"""The store's schema version and forward migrations (geval.store.store.MIGRATIONS): an older store is
brought to the current version with its data intact, one transaction per version; a failed
migration leaves the store as it was; a store from a newer version is refused untouched.
The mechanism is tested with made-up migrations on top of the current schema (NOW + 1, NOW + 2);
the real migration to schema 2 (runs record their pid and host) on a store written by schema 1."""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import threading
from pathlib import Path

import pytest
import sqlite_utils
from helpers import make_items, make_template, scripted

import geval
import geval.store.schema as store_module
from geval.store import records
from geval.data.dataset import Dataset
from geval.errors import StoreError

TEMPLATE = make_template()
NOW = store_module.SCHEMA_VERSION


def fill(store: geval.Store) -> dict:
    """A dataset, its judgments, a finished run and a note; returns what the store holds."""
    items = make_items(5)
    store.save_dataset(Dataset("synthetic", "synthetic.csv", "table", items))
    geval.score(store, items, TEMPLATE, scripted(), "synthetic")
    store.set_note(items[0].id, True, "keep me")
    return {"items": store.items("synthetic"), "judgments": store.judgments("synthetic"), "notes": store.notes(),
            "runs": len(store.runs())}


def make_current_store(path) -> dict:
    """A store at the current schema (NOW), filled; returns what it holds."""
    store = geval.Store(path)
    assert store.schema_version() == NOW
    held = fill(store)
    store.close()
    return held


def make_schema_1_store(path) -> dict:
    """A store as schema 1 wrote it: its tables made by MIGRATIONS[1] alone, its rows those of a
    filled store (the columns schema 1 has), plus a run left 'running'; returns what it holds."""
    source = geval.Store(":memory:")
    held = fill(source)
    source.start_run(dataset="synthetic", template="left-running", n_items=5)
    db = sqlite_utils.Database(path)
    db["meta"].create({"key": str, "value": str}, pk="key")
    store_module.MIGRATIONS[1](db)
    db["meta"].insert({"key": "schema_version", "value": "1"})
    for table in set(db.table_names()) - {"meta"}:
        columns = set(db[table].columns_dict)
        db[table].insert_all({k: v for k, v in row.items() if k in columns} for row in source.db[table].rows)
    db.conn.close()
    source.close()
    return {**held, "runs": held["runs"] + 1}


def schema_of(path) -> int:
    with sqlite3.connect(path) as conn:
        return int(conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0])


def test_a_new_store_is_at_the_current_version_and_every_version_has_a_migration(store):
    assert store.schema_version() == store_module.SCHEMA_VERSION
    assert sorted(store_module.MIGRATIONS) == list(range(1, store_module.SCHEMA_VERSION + 1))


def test_an_old_store_is_migrated_forward_with_its_data_intact(tmp_path, monkeypatch):
    path = tmp_path / "store.sqlite"
    held = make_current_store(path)
    ran = []

    def add_comment_column(db) -> None:  # not idempotent: running it twice would fail
        ran.append(NOW + 1)
        db.execute("ALTER TABLE judgments ADD COLUMN comment TEXT")

    def add_tags_table(db) -> None:
        ran.append(NOW + 2)
        db["tags"].create({"item_id": str, "tag": str}, pk=("item_id", "tag"))

    monkeypatch.setattr(store_module, "SCHEMA_VERSION", NOW + 2)
    monkeypatch.setitem(store_module.MIGRATIONS, NOW + 1, add_comment_column)
    monkeypatch.setitem(store_module.MIGRATIONS, NOW + 2, add_tags_table)
    store = geval.Store(path)
    assert ran == [NOW + 1, NOW + 2]  # in order, from the store's version to the current one
    assert store.schema_version() == NOW + 2 == schema_of(path)
    assert "comment" in store.db["judgments"].columns_dict and "tags" in store.db.table_names()
    assert store.items("synthetic") == held["items"]
    migrated = store.judgments("synthetic")
    assert migrated["comment"].isna().all()
    assert migrated.drop(columns="comment").equals(held["judgments"])
    assert store.notes() == held["notes"] and len(store.runs()) == held["runs"]
    store.close()

    again = geval.Store(path)  # a migrated store is not migrated twice
    assert ran == [NOW + 1, NOW + 2] and again.schema_version() == NOW + 2
    again.close()


def test_a_schema_1_store_gets_run_pids_and_hosts_with_its_data_intact(tmp_path):
    path = tmp_path / "store.sqlite"
    held = make_schema_1_store(path)
    with sqlite3.connect(path) as conn:
        assert {row[1] for row in conn.execute("PRAGMA table_info(runs)")}.isdisjoint({"pid", "host"})
    assert schema_of(path) == 1
    store = geval.Store(path)
    assert store.schema_version() == NOW == schema_of(path)
    assert {"pid", "host"} <= set(store.db["runs"].columns_dict)
    assert store.items("synthetic") == held["items"] and store.notes() == held["notes"]
    assert store.judgments("synthetic").drop(columns="detail").equals(held["judgments"].drop(columns="detail"))
    runs = store.runs()
    assert len(runs) == held["runs"] and runs["pid"].isna().all() and runs["host"].isna().all()
    assert runs["status"].tolist() == ["running", "finished"]  # no pid: an old run is left as it was
    run_id = store.start_run(dataset="synthetic", template="new", n_items=1)
    new = store.runs().set_index("id").loc[run_id]
    assert (new["pid"], new["host"], new["status"]) == (os.getpid(), socket.gethostname(), "running")
    store.close()


def test_a_failed_migration_leaves_the_store_as_it_was(tmp_path, monkeypatch):
    path = tmp_path / "store.sqlite"
    held = make_current_store(path)

    def half_done(db) -> None:
        db["tags"].create({"item_id": str, "tag": str})
        db.execute("DELETE FROM notes")
        db.execute("ALTER TABLE no_such_table ADD COLUMN x TEXT")

    monkeypatch.setattr(store_module, "SCHEMA_VERSION", NOW + 1)
    monkeypatch.setitem(store_module.MIGRATIONS, NOW + 1, half_done)
    with pytest.raises(StoreError) as error:
        geval.Store(path)
    assert str(error.value) == (f"{path}: migrating from schema {NOW} to {NOW + 1} failed "
                                f"(no such table: no_such_table); the store is unchanged at schema {NOW}")
    monkeypatch.setattr(store_module, "SCHEMA_VERSION", NOW)
    store = geval.Store(path)
    assert store.schema_version() == NOW and "tags" not in store.db.table_names()
    assert store.notes() == held["notes"] and store.items("synthetic") == held["items"]
    store.close()


def test_a_migration_runs_once_when_several_connections_open_the_store_at_once(tmp_path, monkeypatch):
    path = tmp_path / "store.sqlite"
    make_current_store(path)
    ran = []
    monkeypatch.setattr(store_module, "SCHEMA_VERSION", NOW + 1)
    def add_who_column(db) -> None:
        ran.append(NOW + 1)
        db.execute("ALTER TABLE notes ADD COLUMN who TEXT")

    monkeypatch.setitem(store_module.MIGRATIONS, NOW + 1, add_who_column)
    start, errors = threading.Barrier(6), []

    def open_it() -> None:
        start.wait()
        try:
            geval.Store(path).close()
        except Exception as exc:
            errors.append(repr(exc))

    threads = [threading.Thread(target=open_it) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert errors == [] and ran == [NOW + 1] and schema_of(path) == NOW + 1


def test_a_store_from_a_newer_version_is_refused_and_left_untouched(tmp_path):
    path = tmp_path / "store.sqlite"
    make_current_store(path)
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    with pytest.raises(StoreError) as error:
        geval.Store(path)
    assert str(error.value) == f"{path}: made by a newer G-Eval Studio (schema 99); upgrade this one"
    assert schema_of(path) == 99


def test_a_missing_migration_is_a_named_error(tmp_path, monkeypatch):
    path = tmp_path / "store.sqlite"
    make_current_store(path)
    monkeypatch.setattr(store_module, "SCHEMA_VERSION", NOW + 1)
    with pytest.raises(StoreError) as error:
        geval.Store(path)
    assert str(error.value) == f"{path}: no migration to schema {NOW + 1}; reinstall G-Eval Studio"
    assert schema_of(path) == NOW


def test_a_store_of_schema_2_made_by_the_previous_code_migrates_with_nothing_lost(tmp_path):
    """tests/fixtures/store_schema2.sql: a store made by the code before schema 3 (a scored
    sample, baseline scores in a table of their own making, two batch runs, one of two files,
    with their batches in the run summaries, a note, generated steps), dumped as SQL."""
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as conn:
        conn.executescript((Path(__file__).parent / "fixtures" / "store_schema2.sql").read_text())
        before = {table: conn.execute(f'SELECT COUNT(*) FROM "{table}"').fetchone()[0]
                  for (table,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        summaries = [json.loads(s) for (s,) in conn.execute("SELECT summary FROM runs WHERE summary LIKE '%batches%'")]
    assert before["baseline_scores"] == 24 and len(summaries) == 2
    store = geval.Store(path)
    assert store.schema_version() == NOW
    with sqlite3.connect(path) as conn:
        after = {table: conn.execute(f'SELECT COUNT(*) FROM "{table}"').fetchone()[0] for table in before}
    assert after == {**before, "meta": before["meta"] + 1}  # every row of every table is still there (and one
    # more in meta: the count of changes, `Store.content_version`)
    assert len(store.baseline_scores([key for (key,) in sqlite3.connect(path).execute(
        "SELECT key FROM baseline_scores")])) == 24
    entries = [entry for summary in summaries for entry in summary["batches"]]
    assert len(entries) == 2 and [b["id"] for b in store.batches()] == [e["id"] for e in entries]
    assert all(store.find_batch(e["id"])["items"] == e["items"] for e in entries)
    assert store.notes() != {} and store.combos("topicalchat_usr_sample")["ok"].sum() == 12
    table = geval.agree(store, "topicalchat_usr_sample", levels=("item",), n_boot=50)
    assert table["n"].iloc[0] == 12
    store.close()


#: What each migration since schema 15 added, taken away: a current store as that schema left it (`as_schema`).
UNDONE = {16: "DROP INDEX idx_judgments_calls; DROP INDEX idx_calls_usage;",
          17: "DROP INDEX idx_judgments_read;",
          18: "ALTER TABLE baseline_results DROP COLUMN score_values;",
          19: "DROP INDEX idx_judgments_read; ALTER TABLE judgments DROP COLUMN most_probable; "
              "CREATE INDEX idx_judgments_read ON judgments(dataset, template_version, signature, created, aspect, "
              "status, item_id, score);",
          20: "DROP TABLE derived; ALTER TABLE datasets DROP COLUMN digest;",
          21: "DROP TABLE baseline_aliases;"}


def as_schema(path, version: int) -> None:
    """The current store at `path` brought back to schema `version` (15 or later)."""
    with sqlite3.connect(path) as conn:
        conn.executescript("".join(UNDONE[v] for v in range(NOW, version, -1))
                           + f"UPDATE meta SET value = '{version}' WHERE key = 'schema_version'")


def test_a_schema_15_store_reads_what_its_calls_cost_from_the_indexes_of_schema_16(tmp_path):
    """At a million judgments `Store.call_totals` took 5.7 s (each call's row read, its keys sorted): schema 16
    reads them from two indexes, and the other reads of a combination's judgments keep theirs."""
    path = tmp_path / "store.sqlite"
    held = make_current_store(path)
    keys = held["judgments"]["call_key"].dropna().unique()
    as_schema(path, 15)
    store = geval.Store(path)
    assert store.schema_version() == NOW
    version, signature = store.combos("synthetic")[["template_version", "signature"]].iloc[0]
    read = []
    store.db.conn.set_trace_callback(read.append)
    totals = store.call_totals("synthetic", version, signature)
    store.failure_reasons("synthetic", version, signature)
    store.db.conn.set_trace_callback(None)
    assert totals["calls"] == len(keys) > 0
    plans = [" ".join(row[-1] for row in store.db.conn.execute(f"EXPLAIN QUERY PLAN {sql}"))  # values written in
             for sql in read if sql.lstrip().startswith("SELECT")]
    assert "COVERING INDEX idx_calls_usage" in plans[0] and "COVERING INDEX idx_judgments_calls" in plans[0]
    assert "idx_judgments_combos" in plans[1]
    store.close()


def test_what_a_combinations_calls_cost_counts_a_call_that_served_several_judgments_once(tmp_path):
    """A batch's call answers several items: its tokens, cost and time count once in `Store.call_totals`."""
    path = tmp_path / "store.sqlite"
    make_current_store(path)
    with sqlite3.connect(path) as conn:  # the first two judgments answered by the first one's call
        (first, key), (second, _) = conn.execute("SELECT rowid, call_key FROM judgments WHERE call_key IS NOT NULL "
                                                 "ORDER BY rowid LIMIT 2").fetchall()
        conn.execute("UPDATE judgments SET call_key = ? WHERE rowid = ?", [key, second])
        version, signature = conn.execute("SELECT template_version, signature FROM judgments WHERE rowid = ?",
                                          [first]).fetchone()
        expected = conn.execute(
            "SELECT COUNT(*), SUM(prompt_tokens), SUM(cost) FROM calls WHERE key IN (SELECT call_key FROM judgments "
            "WHERE dataset = 'synthetic' AND template_version = ? AND signature = ?)", [version, signature]).fetchone()
    store = geval.Store(path)
    totals = store.call_totals("synthetic", version, signature)
    assert (totals["calls"], totals["prompt_tokens"], totals["cost"]) == tuple(float(v or 0) for v in expected)
    assert totals["calls"] < len(store.judgments("synthetic", version, signature, columns=("call_key",)).dropna())
    store.close()


def test_a_schema_16_store_reads_a_combinations_judgments_from_the_index_of_schema_17_in_the_order_it_had(tmp_path):
    """The agreement's read of a combination read each judgment's row, then sorted them by time: schema 17 reads it from an index in its order. Judgments of one time (a judge's file imported)
    come as `ORDER BY created` gave them through the combinations' index: by aspect, status and row."""
    path = tmp_path / "store.sqlite"
    make_current_store(path)
    as_schema(path, 16)
    with sqlite3.connect(path) as conn:  # one time for all, some failed, in the rows' order not the items'
        conn.execute("UPDATE judgments SET created = 1.0, status = CASE WHEN rowid % 3 = 0 THEN 'failed' "
                     "ELSE status END")
        version, signature = conn.execute("SELECT template_version, signature FROM judgments").fetchone()
        before = conn.execute("SELECT item_id, aspect, status FROM judgments INDEXED BY idx_judgments_combos "
                              "WHERE dataset = ? AND template_version = ? AND signature = ? ORDER BY created",
                              ["synthetic", version, signature]).fetchall()
    store = geval.Store(path)
    assert store.schema_version() == NOW
    read = []
    store.db.conn.set_trace_callback(read.append)
    found = store.judgments("synthetic", version, signature, columns=("item_id", "aspect", "score", "status"))
    store.db.conn.set_trace_callback(None)
    assert list(found[["item_id", "aspect", "status"]].itertuples(index=False, name=None)) == before
    assert sorted(before, key=lambda row: row[0]) != before  # not the items' order
    plan = " ".join(row[-1] for row in store.db.conn.execute(f"EXPLAIN QUERY PLAN {read[-1]}"))
    assert "COVERING INDEX idx_judgments_read" in plan
    store.close()


def test_a_schema_17_stores_baselines_get_their_scores_as_numbers_and_a_row_without_them_is_still_read(tmp_path):
    """A baseline's scores on a million items were parsed from their JSON: schema 18 keeps them as numbers beside
    it; rows stored before get theirs from their JSON; a row without them is read from its JSON."""
    path = tmp_path / "store.sqlite"
    store = geval.Store(path)
    store.save_baseline_result("first", "length", "sig", {"a": 1.5, "b": float("nan"), "c": -2.0})
    store.save_baseline_result("second", "length", "sig", {"c": 4.0})
    store.close()
    as_schema(path, 17)
    store = geval.Store(path)
    assert store.schema_version() == NOW
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT COUNT(*) FROM baseline_results WHERE score_values IS NOT NULL").fetchone()[0] == 2
        conn.execute("UPDATE baseline_results SET score_values = NULL WHERE key = 'second'")
    first = store.baseline_values("first")
    assert first.tolist()[::2] == [1.5, -2.0] and first.tolist()[1] != first.tolist()[1]  # NaN kept
    assert store.baseline_values("second").tolist() == [4.0] and store.baseline_values("third") is None
    assert store.baseline_result("first") == {"a": 1.5, "b": None, "c": -2.0}  # the JSON as it was
    store.close()


def test_a_schema_18_stores_judgments_get_the_most_probable_score_their_distribution_gives(tmp_path):
    """The `argmax` variant parsed a million distributions' text: schema 19 keeps each judgment's most probable
    score beside its distribution, written with it; rows stored before get theirs from their distribution, the
    same as a new write gives (NULL for a distribution of no score)."""
    path = tmp_path / "store.sqlite"
    make_current_store(path)
    read = "SELECT id, distribution, most_probable FROM judgments ORDER BY id"
    with sqlite3.connect(path) as conn:
        written = conn.execute(read).fetchall()
        conn.execute("UPDATE judgments SET distribution = '{}' WHERE rowid = (SELECT MIN(rowid) FROM judgments)")
    as_schema(path, 18)
    store = geval.Store(path)
    assert store.schema_version() == NOW
    migrated = store.db.execute(read).fetchall()
    assert len(migrated) == len(written) > 2
    assert sum(value is None for _, _, value in migrated) == 1 + sum(value is None for _, _, value in written)
    assert [value for _, _, value in migrated] == [None if text == "{}" else value for (_, text, _), (_, _, value) in
                                                   zip(migrated, written)]
    assert [value for _, _, value in migrated] == [None if v != v else v for v in
                                                   records.most_probable([text for _, text, _ in migrated]).tolist()]
    version, signature = store.combos("synthetic")[["template_version", "signature"]].iloc[0]
    sql, args = store._judgments_sql("synthetic", version, signature, columns=("most_probable",))
    plan = " ".join(row[-1] for row in store.db.conn.execute(f"EXPLAIN QUERY PLAN {sql}", args))
    assert "COVERING INDEX idx_judgments_read" in plan  # read beside the scores from the index alone
    store.close()
