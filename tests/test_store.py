"""geval.store: tables, datasets and items, templates, steps, the call cache, WAL, threads."""

from __future__ import annotations

import json
import threading

import pytest

import geval
from geval.judges.base import AspectScore, Judgment
from geval.loaders.base import Dataset
from geval.store import SCHEMA_VERSION, judgment_id
from helpers import make_items, make_template

TABLES = {"meta", "datasets", "items", "templates", "steps", "calls", "judgments", "runs", "notes"}


def test_a_fresh_store_has_every_table(store):
    assert TABLES <= set(store.db.table_names())
    assert store.db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0] == str(SCHEMA_VERSION)


def test_file_store_uses_wal_mode(file_store):
    assert file_store.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert file_store.db.execute("PRAGMA busy_timeout").fetchone()[0] == 60000


def test_memory_store_is_not_a_file(store):
    assert store.path == ":memory:"
    assert store.db.execute("PRAGMA journal_mode").fetchone()[0] == "memory"


def test_reopening_a_file_store_keeps_its_data(tmp_path):
    path = tmp_path / "deep" / "folder" / "s.sqlite"
    first = geval.Store(path)
    first.save_dataset(Dataset("mine", "x.json", "table", make_items(3, dataset="mine")))
    first.close()
    again = geval.Store(path)
    assert again.dataset_names() == ["mine"]
    assert len(again.items("mine")) == 3
    again.close()


def test_a_store_from_a_newer_version_is_refused(tmp_path):
    path = tmp_path / "s.sqlite"
    first = geval.Store(path)
    first.db["meta"].upsert({"key": "schema_version", "value": str(SCHEMA_VERSION + 1)}, pk="key")
    first.close()
    with pytest.raises(geval.StoreError) as error:
        geval.Store(path)
    assert str(error.value) == (
        f"{path}: made by a newer G-Eval Studio (schema {SCHEMA_VERSION + 1}); upgrade this one"
    )


def test_default_store_path_follows_geval_store(monkeypatch, tmp_path):
    monkeypatch.setenv("GEVAL_STORE", str(tmp_path / "env.sqlite"))
    assert geval.default_store_path() == tmp_path / "env.sqlite"


def test_items_round_trip_in_file_order(store):
    items = make_items(5, dataset="mine")[::-1]
    store.save_dataset(Dataset("mine", "x.json", "table", items, skipped={"empty human scores": 2}))
    assert store.items("mine") == items
    assert store.item(items[2].id) == items[2]
    row = next(store.db["datasets"].rows)
    assert row["n_items"] == 5 and json.loads(row["skipped"]) == {"empty human scores": 2}
    with pytest.raises(geval.StoreError) as error:
        store.item("nope")
    assert str(error.value) == "no item with id nope in :memory:"


def test_saving_a_dataset_again_does_not_duplicate_items(store):
    dataset = Dataset("mine", "x.json", "table", make_items(4, dataset="mine"))
    store.save_dataset(dataset)
    store.save_dataset(dataset)
    assert store.db["items"].count == 4 and store.db["datasets"].count == 1


def test_templates_are_kept_once_per_version(store):
    one = make_template()
    two = make_template(aspects=(("Naturalness", 1, 5),))
    assert store.save_template(one) == one.version
    store.save_template(one)
    store.save_template(two)
    assert store.db["templates"].count == 2
    versions = store.template_versions("test-naturalness")
    assert {t.version for t in versions} == {one.version, two.version}
    assert next(t for t in versions if t.version == one.version).text == one.text


def test_steps_are_keyed_by_template_and_judge_settings(store):
    template = make_template(steps="auto", body="{{steps}}\n{{response}}")
    settings = {"backend": "scripted", "model": "a"}
    assert store.steps(template, settings) is None
    store.save_steps(template, settings, "1. Read.")
    assert store.steps(template, settings) == "1. Read."
    assert store.steps(template, {"backend": "scripted", "model": "b"}) is None
    store.save_steps(template, settings, "1. Read again.")
    assert store.steps(template, settings) == "1. Read again."
    assert store.db["steps"].count == 1


def test_cached_calls_round_trip_with_integer_scores(store):
    judgment = Judgment(
        {"naturalness": AspectScore.from_distribution({1: 0.25, 3: 0.75}, samples=[3, 3, 1, 3]),
         "coherence": AspectScore.unscored("no Coherence score in the answer 'x'")},
        raw=["Naturalness: 3"], prompt_tokens=12, completion_tokens=3, cost=0.5,
    )
    assert store.cached_call("k") is None
    store.save_call("k", {"backend": "scripted"}, "the prompt", ["naturalness", "coherence"], judgment, 0.1, [])
    assert store.cached_call("k") == judgment
    assert list(store.cached_call("k").scores["naturalness"].distribution) == [1, 3]


def test_judgment_id_depends_on_all_four_parts():
    ids = {judgment_id(*parts) for parts in [("i", "v", "s", "a"), ("j", "v", "s", "a"), ("i", "w", "s", "a"),
                                             ("i", "v", "t", "a"), ("i", "v", "s", "b")]}
    assert len(ids) == 5
    assert judgment_id("i", "v", "s", "a") == judgment_id("i", "v", "s", "a")


def test_notes(store):
    store.set_note("item1", True, "odd response")
    store.set_note("item2", False, "")
    store.set_note("item1", False, "fine after all")
    assert store.notes() == {"item1": (False, "fine after all"), "item2": (False, "")}


def test_runs_are_recorded_and_finished(store):
    run_id = store.start_run(dataset="d", template="t@1", n_items=3)
    store.finish_run(run_id, "finished", {"done": 3})
    runs = store.runs("d")
    assert len(runs) == 1
    row = runs.iloc[0]
    assert row["status"] == "finished" and json.loads(row["summary"]) == {"done": 3}
    assert row["finished"] >= row["started"]
    assert store.runs("other").empty


def test_writes_from_many_threads(file_store):
    def write(thread: int) -> None:
        for i in range(20):
            file_store.save_judgments([{"id": f"{thread}-{i}", "item_id": f"{i}", "dataset": "d", "aspect": "a",
                                        "status": "ok", "score": 1.0}])
            file_store.set_note(f"{thread}-{i}", True, "x")

    threads = [threading.Thread(target=write, args=(t,)) for t in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert file_store.db["judgments"].count == 160
    assert len(file_store.notes()) == 160


def test_two_connections_to_one_file(tmp_path):
    path = tmp_path / "shared.sqlite"
    writer, reader = geval.Store(path), geval.Store(path)
    writer.save_dataset(Dataset("mine", "x.json", "table", make_items(2, dataset="mine")))
    assert reader.dataset_names() == ["mine"]
    writer.close()
    reader.close()


def test_reloading_a_changed_file_drops_the_items_it_no_longer_has(store):
    first = geval.load_dataset(geval.DATA_DIR / "topicalchat_usr_sample.json", name="tc")
    store.save_dataset(first)
    smaller = geval.Dataset(name="tc", path=first.path, layout=first.layout, items=first.items[:10])
    store.save_dataset(smaller)
    assert [i.id for i in store.items("tc")] == [i.id for i in first.items[:10]]
