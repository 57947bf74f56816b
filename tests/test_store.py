"""geval.store: tables, datasets and items, templates, steps, the call cache, WAL, threads."""

from __future__ import annotations

import json
import math
import os
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest
from helpers import make_items, make_template

import geval
from geval.data.dataset import DATA_DIR, Dataset
from geval.errors import StoreError
from geval.judging.judgment import AspectScore, Judgment
from geval.store import default_store_path
from geval.store.records import judgment_id, parsed
from geval.store.schema import SCHEMA_VERSION
from geval.store import store as store_module
from geval.store.store import CHUNK, read_table

TABLES = {"meta", "datasets", "items", "templates", "steps", "calls", "judgments", "runs", "notes", "baseline_scores",
          "batches", "searches"}


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
    with pytest.raises(StoreError) as error:
        geval.Store(path)
    assert str(error.value) == (
        f"{path}: made by a newer G-Eval Studio (schema {SCHEMA_VERSION + 1}); upgrade this one"
    )


def test_default_store_path_follows_geval_store(monkeypatch, tmp_path):
    monkeypatch.setenv("GEVAL_STORE", str(tmp_path / "env.sqlite"))
    assert default_store_path() == tmp_path / "env.sqlite"


def test_items_round_trip_in_file_order(store):
    items = make_items(5, dataset="mine")[::-1]
    store.save_dataset(Dataset("mine", "x.json", "table", items, skipped={"empty human scores": 2}))
    assert store.items("mine") == items
    assert store.item(items[2].id) == items[2]
    row = next(store.db["datasets"].rows)
    assert row["n_items"] == 5 and json.loads(row["skipped"]) == {"empty human scores": 2}
    with pytest.raises(StoreError) as error:
        store.item("nope")
    assert str(error.value) == "no item with id nope in :memory:"


def test_items_are_read_once_per_load_and_follow_a_reload_by_another_connection(tmp_path):
    path = tmp_path / "s.sqlite"
    first, second = geval.Store(path), geval.Store(path)
    try:
        second.save_dataset(Dataset("mine", "x.json", "table", make_items(4, dataset="mine")))
        assert [item.response for item in first.items("mine")] == [f"response {i}" for i in range(4)]
        assert first.items("mine")[0] is first.items("mine")[0]  # read once, not rebuilt
        first.items("mine").clear()  # a caller's list is its own
        assert len(first.items("mine")) == 4
        time.sleep(0.01)  # a later load
        second.save_dataset(Dataset("mine", "x.json", "table", make_items(2, dataset="mine")[::-1]))
        assert [item.response for item in first.items("mine")] == ["response 1", "response 0"]
        second.delete_dataset("mine")
        assert first.items("mine") == []
    finally:
        first.close()
        second.close()


def test_judgments_can_be_read_without_their_calls(store):
    items = make_items(3, dataset="mine")
    store.save_dataset(Dataset("mine", "x.json", "table", items))
    template = make_template()
    geval.score(store, items, template, geval.make_judge("scripted"), "mine")
    full = store.judgments("mine")
    brief = store.judgments("mine", columns=("item_id", "score"))
    assert list(brief.columns) == ["item_id", "score"] and "prompt" in full
    pd.testing.assert_frame_equal(brief, full[["item_id", "score"]])
    assert len(store.judgments("mine", columns=("item_id",), limit=1)) == 1
    with pytest.raises(StoreError, match="judgments have no column 'prompt'"):
        store.judgments("mine", columns=("item_id", "prompt"))


@pytest.mark.parametrize("scores, reads", [
    ([0.5, 1.0, None, 2.0, 3.5, None, 1.5], 1),
    ([1.0, 2.0, 3.0, None, None, None, None], 2),  # read as objects in the parts all NULL: read again at once
], ids=["a number column with NULLs in every part", "a part's numbers all NULL"])
def test_a_read_made_in_parts_is_the_read_in_one_go(monkeypatch, scores, reads):
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE t (id TEXT, score REAL, n INTEGER, reason TEXT)")
    conn.executemany("INSERT INTO t VALUES (?, ?, ?, ?)",
                     [(f"i{k}", score, k, None if k == 1 else f"why {k % 2}") for k, score in enumerate(scores)])
    sql = "SELECT * FROM t WHERE id != ? ORDER BY id"
    whole = pd.read_sql_query(sql, conn, params=["none"])
    calls = []
    real = pd.read_sql_query
    monkeypatch.setattr(pd, "read_sql_query", lambda *a, **k: calls.append(a[0]) or real(*a, **k))
    monkeypatch.setattr(store_module, "ROWS_AT_A_TIME", 3)
    pd.testing.assert_frame_equal(read_table(conn, sql, ["none"]), whole)
    assert len(calls) == reads
    conn.close()


def test_a_read_is_served_again_only_until_the_file_changes(file_store, monkeypatch):
    items = make_items(4, dataset="mine")
    file_store.save_dataset(Dataset("mine", "x.json", "table", items))
    template = make_template()
    geval.score(file_store, items[:2], template, geval.make_judge("scripted"), "mine")
    reads = []
    real = pd.read_sql_query
    monkeypatch.setattr(pd, "read_sql_query", lambda *a, **k: reads.append(a[0]) or real(*a, **k))
    first = file_store.judgments("mine", columns=("item_id", "score"))
    first.loc[0, "score"] = -1.0  # a caller's change stays its own
    again = file_store.judgments("mine", columns=("item_id", "score"))
    assert len(reads) == 1 and len(again) == 2 and (again["score"] >= 0).all()
    assert len(file_store.combos("mine")) == len(file_store.combos("mine")) == 1 and len(reads) == 2
    geval.score(file_store, items[2:3], template, geval.make_judge("scripted"), "mine")  # a write of this connection
    assert len(file_store.judgments("mine", columns=("item_id", "score"))) == 3
    assert int(file_store.combos("mine")["ok"].iloc[0]) == 3
    other = geval.Store(file_store.path)  # and one of another connection
    try:
        geval.score(other, items[3:], template, geval.make_judge("scripted"), "mine")
    finally:
        other.close()
    assert len(file_store.judgments("mine", columns=("item_id", "score"))) == 4
    assert int(file_store.combos("mine")["ok"].iloc[0]) == 4


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


def test_a_version_stored_before_forms_were_checked_still_reads_back(store):
    from geval.judging.templates import parse_template

    old = parse_template(make_template().text.replace("- Naturalness:", "- Fluency:"), check_form=False)
    store.save_template(old)  # as a version saved when such a form was accepted
    assert [t.version for t in store.template_versions()] == [old.version] == [store.template(old.version).version]


def test_steps_are_keyed_by_template_and_judge_settings(store):
    template = make_template(steps="auto", body="{{steps}}\n{{response}}\n- Naturalness:")
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
        raw=["Naturalness: 3"], prompt_tokens=12, completion_tokens=3, cost=0.5, settings={"backend": "scripted"},
    )
    assert store.cached_call("k") is None
    store.save_call("k", {"backend": "scripted"}, "the prompt", ["naturalness", "coherence"], judgment, 0.1, [])
    assert store.cached_call("k") == judgment
    assert list(store.cached_call("k").scores["naturalness"].distribution) == [1, 3]


def cached_judgment(i: int) -> Judgment:
    """A distinct judgment per i: its distribution, raw answer and usage differ."""
    return Judgment({"naturalness": AspectScore.from_distribution({1: 1 / (i + 2), 3: 1 - 1 / (i + 2)}),
                     "coherence": AspectScore.unscored(f"no score in answer {i}")},
                    raw=[f"Naturalness: {i}"], prompt_tokens=i, completion_tokens=1, cost=i / 1000,
                    settings={"backend": "scripted"})  # the settings that made it come back with it


def test_cached_calls_finds_many_keys_in_chunks_and_equals_cached_call(store):
    n = 2 * CHUNK + 200
    for i in range(n):
        store.save_call(f"k{i}", {"backend": "scripted"}, f"prompt {i}", ["naturalness", "coherence"],
                        cached_judgment(i), 0.0, [])
    missing = [f"missing{i}" for i in range(5)]
    keys = [f"k{i}" for i in range(n)] + missing + ["k3", "k3"]  # repeats are looked up once
    queries = []
    store.db.conn.set_trace_callback(queries.append)
    found = store.cached_calls(keys)
    store.db.conn.set_trace_callback(None)
    assert len(queries) == 3 and all(q.startswith("SELECT") and q.count("?") <= CHUNK for q in queries)
    assert set(found) == {f"k{i}" for i in range(n)}  # missing keys are left out
    assert all(found[f"k{i}"] == store.cached_call(f"k{i}") == cached_judgment(i) for i in range(n))
    assert all(store.cached_call(key) is None for key in missing)
    assert store.cached_calls([]) == {} and store.cached_calls(missing) == {}


JUDGMENT_WRITES = [  # each a save_judgments call, in order
    [{"id": f"j{i}", "item_id": f"i{i}", "dataset": "d", "aspect": "a", "status": "ok", "score": float(i),
      "distribution": {"1": 0.5, "2": 0.5}, "reason": None, "created": 1.0} for i in range(4)],
    [{"id": "j1", "status": "failed", "score": None, "reason": "HTTP 500"}],  # columns not given are kept
    [{"id": "j2", "score": 9.0}, {"id": "j9", "item_id": "i9", "dataset": "d", "aspect": "a"}],  # mixed columns
    [{"id": "j3"}],  # only the id: nothing changes
    [],
]


def test_save_judgments_writes_what_sqlite_utils_upsert_all_wrote(store):
    reference = geval.Store(":memory:")
    for rows in JUDGMENT_WRITES:
        store.save_judgments(rows)
        reference.db["judgments"].upsert_all(rows, pk="id")  # what save_judgments used to do
    columns = [c for c in store.db["judgments"].columns_dict if c != "most_probable"]  # made by save_judgments only
    table = f"SELECT {', '.join(columns)} FROM judgments ORDER BY id"
    assert store.db.execute(table).fetchall() == reference.db.execute(table).fetchall()
    # each distribution's most probable score beside it (the lower of tied ones), kept when a write leaves it
    assert store.db.execute("SELECT id, most_probable FROM judgments ORDER BY id").fetchall() == [
        ("j0", 1.0), ("j1", 1.0), ("j2", 1.0), ("j3", 1.0), ("j9", None)]
    j1 = next(store.db["judgments"].rows_where("id = 'j1'"))
    assert (j1["status"], j1["reason"], j1["item_id"], j1["distribution"]) == (
        "failed", "HTTP 500", "i1", '{"1": 0.5, "2": 0.5}')
    reference.close()


@pytest.mark.parametrize("rows, error", [
    ([{"id": "a", "status": "ok"}, {"status": "ok"}], StoreError),
    ([{"id": "a", "status": "ok"}, {"id": "b", "no_such_column": 1}], sqlite3.OperationalError),
], ids=["a row without an id", "an unknown column"])
def test_a_bad_judgment_row_writes_nothing(store, rows, error):
    with pytest.raises(error) as raised:
        store.save_judgments(rows)
    if error is StoreError:
        assert str(raised.value) == "a judgment row has no id; build it with geval.store.records.judgment_id(...)"
    assert store.db["judgments"].count == 0


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


def ended_pid() -> int:
    """The pid of a process that has ended (and been reaped)."""
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def run_of(store, pid: int | None, host: str | None = None, started: float | None = None) -> int:
    """A run left 'running' by process `pid` on `host` (default: this one)."""
    run_id = store.start_run(dataset="d", template="t@1", n_items=3)
    store.db["runs"].update(run_id, {"pid": pid, "host": host or socket.gethostname(),
                                     **({"started": started} if started is not None else {})})
    return run_id


def status_in_db(store, run_id: int) -> str:
    return store.db.execute("SELECT status FROM runs WHERE id = ?", [run_id]).fetchone()[0]


def test_a_run_records_its_process_and_host(store):
    run_id = store.start_run(dataset="d", template="t@1", n_items=3)
    run = store.runs().set_index("id").loc[run_id]
    assert (run["pid"], run["host"], run["status"]) == (os.getpid(), socket.gethostname(), "running")


def test_a_run_whose_process_is_gone_is_listed_and_marked_as_crashed(store):
    pid = ended_pid()
    run_id = run_of(store, pid)
    run = store.runs("d").iloc[0]
    assert run["status"] == "crashed" == status_in_db(store, run_id)
    assert json.loads(run["summary"]) == {"crashed": (
        f"process {pid} on {socket.gethostname()} ended without finishing the run (killed?); "
        "start the same run again to resume it")}
    assert pd.isna(run["finished"])  # when it died is not known


def test_starting_a_run_marks_the_crashed_ones_first(store):
    dead = run_of(store, ended_pid())
    assert status_in_db(store, dead) == "running"  # nobody listed the runs yet
    store.start_run(dataset="d", template="t@2", n_items=1)
    assert status_in_db(store, dead) == "crashed"


def test_runs_that_may_still_be_running_are_left_as_they_are(store):
    alive = store.start_run(dataset="d", template="t@1", n_items=3)  # this process
    elsewhere = run_of(store, ended_pid(), host="another-machine")  # its pid means nothing here
    unknown = run_of(store, None)  # stored before pids were (schema 1)
    finished = run_of(store, ended_pid())
    store.finish_run(finished, "finished", {"done": 3})
    statuses = dict(zip(store.runs()["id"], store.runs()["status"]))
    assert statuses == {alive: "running", elsewhere: "running", unknown: "running", finished: "finished"}


def test_a_reused_pid_or_a_zombie_is_not_the_run_s_process(store):
    if not Path(f"/proc/{os.getpid()}/stat").exists():
        pytest.skip("needs Linux /proc")
    reused = run_of(store, os.getpid(), started=time.time() - 10 * 365 * 86400)  # began before this process
    zombie = subprocess.Popen([sys.executable, "-c", "pass"])  # ended, not yet reaped
    deadline = time.time() + 30
    while Path(f"/proc/{zombie.pid}/stat").read_text().rpartition(")")[2].split()[0] != "Z":
        assert time.time() < deadline, "the child never became a zombie"
        time.sleep(0.01)
    unreaped = run_of(store, zombie.pid)
    assert status_in_db(store, reused) == "crashed"  # marked when the second run started
    assert store.mark_crashed_runs() == [unreaped]
    zombie.wait()
    assert status_in_db(store, unreaped) == "crashed"


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
    first = geval.load_dataset(DATA_DIR / "topicalchat_usr_sample.json", name="tc")
    store.save_dataset(first)
    smaller = geval.Dataset(name="tc", path=first.path, layout=first.layout, items=first.items[:10])
    store.save_dataset(smaller)
    assert [i.id for i in store.items("tc")] == [i.id for i in first.items[:10]]


def test_answered_lists_judgments_from_a_cached_call_only(store):
    from helpers import failing_for, scripted

    template = make_template()
    items = make_items(CHUNK + 20)
    progress = geval.score(store, items, template, scripted(failing_for({3})), "synthetic")
    ids = [judgment_id(item.id, template.version, progress.signature, "naturalness") for item in items]
    found = store.answered(ids + ["no-such-judgment"])
    assert set(found) == set(ids) - {ids[3]}  # the failed one has no call; unknown ids are left out
    assert set(found.values()) == {("ok", "")}


def test_a_template_version_keeps_its_comment_and_labels_show_it(store):
    from helpers import scripted

    one, two = make_template(), make_template(aspects=(("Naturalness", 1, 5, "Natural"),))
    store.save_template(one, comment="the file's wording")
    store.save_template(one)  # saved again by a run: the comment stays
    store.save_template(two, comment="  a 1-5\nscale ")
    assert store.template_comments() == {one.version: "the file's wording", two.version: "a 1-5 scale"}
    store.save_template(two, comment="five points")
    assert store.template_comments()[two.version] == "five points"
    items = make_items(4)
    store.save_dataset(Dataset("synthetic", "", "table", items))
    for template in (one, two):
        geval.score(store, items, template, scripted(), "synthetic")
    labels = dict(zip(store.combos("synthetic")["template_version"], store.combos("synthetic")["label"]))
    assert labels[one.version] == f"{one.label} (the file's wording) · scripted: hashed"
    assert labels[two.version] == f"{two.label} (five points) · scripted: hashed"
    ids = store.combos("synthetic")["id"]
    assert ids.is_unique and all(i.startswith((one.version + "-", two.version + "-")) for i in ids)


def test_a_stored_dataset_reads_back_without_its_file(store):
    dataset = Dataset("mine", "uploads/mine.csv", "table", make_items(5, dataset="mine"))
    store.save_dataset(dataset)
    again = store.dataset("mine")
    assert (again.name, again.path, again.layout) == ("mine", "uploads/mine.csv", "table")
    loaded = store.dataset_loaded("mine")
    assert loaded > 0 and store.dataset_loaded("other") == 0.0
    store.save_dataset(dataset)  # the same items again: nothing written
    assert store.dataset_loaded("mine") == loaded
    store.save_dataset(Dataset("mine", "uploads/mine.csv", "table", make_items(6, dataset="mine")))
    assert store.dataset_loaded("mine") > loaded  # what a cache of the stored dataset keys on
    assert again.items == dataset.items
    with pytest.raises(StoreError, match="no dataset named 'other'"):
        store.dataset("other")


def test_seconds_per_call_is_the_median_of_this_judges_calls(store):
    settings = {"backend": "scripted", "model": "a"}
    judgment = Judgment({"naturalness": AspectScore.from_distribution({1: 1.0})}, ["Naturalness: 1"])
    for index, latency in enumerate([1.0, 9.0, 2.0, 3.0]):
        store.save_call(f"k{index}", settings, f"prompt {index}", ["naturalness"], judgment, latency, [])
    store.save_call("other", {"backend": "scripted", "model": "b"}, "p", ["naturalness"], judgment, 50.0, [])
    assert store.seconds_per_call([settings]) == (2.5, 4)
    assert store.seconds_per_call([{"backend": "scripted", "model": "c"}]) is None


def test_failure_reasons_read_as_one_whatever_item_they_name(store):
    from helpers import failing_for, scripted

    items = make_items(4)
    store.save_dataset(Dataset("synthetic", "", "table", items))
    template = make_template()
    geval.score(store, items, template, scripted(failing_for({0, 1, 2}, "HTTP 503 from the server")), "synthetic")
    combo = store.combos("synthetic").iloc[0]
    assert store.failure_reasons("synthetic", combo["template_version"], combo["signature"]) == {
        "HTTP 503 from the server": 3}


def test_what_a_report_reads_again_is_kept_while_it_is_built_and_forgotten_at_the_next_write(file_store):
    """A report of six judges read each one's judgments again in every section (when 4 results were kept): 234 reads."""
    from geval.store.store import READS_KEPT, SMALL_READ

    computed = []
    more = READS_KEPT + 2  # more reads than are kept outside

    def table(n: int):  # a judgments' read: more cells than a small read
        return lambda: computed.append(n) or pd.DataFrame({"n": [n] * (SMALL_READ + 1)})

    for n in [*range(more), 0]:  # outside: the last READS_KEPT kept, the first read again
        file_store.remembered(("t", n), table(n))
    assert computed == [*range(more), 0]
    computed.clear()
    with file_store.reading_again():
        for n in [*range(more), *range(more)]:
            assert file_store.remembered(("u", n), table(n))["n"].iloc[0] == n
        assert computed == list(range(more))  # each read once
    file_store.remembered(("u", more - 1), table(more - 1))
    assert computed == list(range(more))  # the newest still kept after
    file_store.set_note("i1", True, "a write")
    file_store.remembered(("u", more - 1), table(more - 1))
    assert computed == [*range(more), more - 1]  # a write forgets what was read before it


def test_a_small_read_stays_kept_beside_the_large_ones_and_the_last_used_stays(file_store):
    """The Agreement page read its combinations three times at a million judgments (1.4 s each): the judgments'
    reads pushed them out."""
    from geval.store.store import READS_KEPT, SMALL_READ

    computed = []

    def table(name, cells: int):
        return lambda: computed.append(name) or pd.DataFrame({"n": range(cells)})

    file_store.remembered(("combos",), table("combos", 3))
    file_store.remembered(("first",), table("first", SMALL_READ + 1))
    for n in range(READS_KEPT + 2):
        file_store.remembered(("large", n), table(n, SMALL_READ + 1))
        file_store.remembered(("first",), table("first", SMALL_READ + 1))  # used again: kept
    file_store.remembered(("combos",), table("combos", 3))
    assert computed == ["combos", "first", *range(READS_KEPT + 2)]


def test_a_datasets_items_go_to_the_collectors_oldest_generation_once_read(store):
    """At a million items the cycle collector walked every item read on its way through the younger generations
    (3 s of a report): they live as long as the store keeps them, and are set in the oldest at once."""
    import gc

    store.save_dataset(Dataset("synthetic", "", "table", make_items(30)))
    store._items.clear()  # read again from the file
    items = store.items("synthetic")
    oldest = {id(found) for found in gc.get_objects(generation=2)}
    assert gc.isenabled() and all(id(item) in oldest for item in items)
    assert store.items("synthetic") == items


def test_items_read_hold_each_repeated_text_once_and_no_dict_each():
    """A million items held 736 MB: each held its own copy of its dataset's name, level, system, group and grounding,
    and a dict of its fields. Read from the file, items of one system share its name; an item has no __dict__."""
    store = geval.Store(":memory:")
    store.save_dataset(Dataset("synthetic", "", "table", make_items(6, per_group=3)))
    store._items.clear()
    items = store.items("synthetic")
    assert items[0].system == items[3].system and items[0].system is items[3].system
    assert items[0].group is items[2].group and items[0].grounding is items[1].grounding
    assert items[0].dataset is items[5].dataset and items[0].level is items[5].level
    assert not hasattr(items[0], "__dict__") and not hasattr(items[0].context[0], "__dict__")
    assert store.items("synthetic") == make_items(6, per_group=3)


def test_stored_json_is_read_the_same_by_orjson_and_with_nan_by_json():
    text = json.dumps({"a": 0.1 + 0.2, "b": None, "c": 3, "d": 1e-300, "e": [0.5040485829959515]})
    assert parsed(text) == json.loads(text)
    assert list(parsed(text)) == ["a", "b", "c", "d", "e"]
    nan = parsed(json.dumps({"x": math.nan, "y": 2.5}))  # json.dumps writes NaN, which orjson refuses
    assert math.isnan(nan["x"]) and nan["y"] == 2.5
