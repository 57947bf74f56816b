"""Crashes and concurrent writers. A `python -m geval score` subprocess is SIGKILLed mid-run:
every judgment in the store is then complete and there once, the run is listed as crashed (by
`python -m geval runs` and the Score page), and resuming does only the rest, never asking the
judge again for an item finished before the kill. Two runs writing one store
at once (two processes, or two threads with their own connections, as two browser tabs do)
both finish with no "database is locked" and no lost rows."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from helpers import REPO, make_items, make_template, run_cli, scripted, wait_while_progressing

import geval
from geval.judging.templates import load_template
from geval.scoring.runner import Progress
from geval.store.schema import SCHEMA_VERSION

TEMPLATE = make_template()


def write_dataset(folder: Path, n: int) -> Path:
    """A USR-layout file: one context with `n` scored responses."""
    path = folder / "crash.json"
    path.write_text(json.dumps([{
        "context": "hello there\nhi, how are you?", "fact": "a fact",
        "responses": [{"response": f"reply number {i}", "model": f"sys{i % 3}", "Natural": [1 + i % 3]}
                      for i in range(n)],
    }]))
    return path


def write_template(folder: Path, name: str = "crash-naturalness") -> Path:
    path = folder / f"{name}.txt"
    path.write_text(make_template(name=name).text)
    return path


def score_args(stub, dataset: Path, template: Path, store: Path) -> list[str]:
    return ["score", str(dataset), "-t", str(template), "--judge", "openai", "--base-url", stub.url,
            "--model", "m", "--mode", "logprobs", "--store", str(store)]


def start_cli(*args: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    return subprocess.Popen([sys.executable, "-m", "geval", *args], cwd=REPO, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def query(store: Path, sql: str) -> list[tuple]:
    """Read the store with plain sqlite3, as an outsider would after a crash."""
    with sqlite3.connect(store, timeout=30) as conn:
        return conn.execute(sql).fetchall()


def judgments(store: Path) -> int:
    """The judgments stored so far (0 before the store and its tables are there)."""
    try:
        return query(store, "SELECT COUNT(*) FROM judgments")[0][0] if store.exists() else 0
    except sqlite3.OperationalError:  # the tables are not there yet
        return 0


def wait_for_judgments(store: Path, at_least: int, process: subprocess.Popen, stub) -> None:
    """Until `at_least` judgments are stored, for as long as the run asks the stub or stores answers."""
    def stored() -> bool:
        assert process.poll() is None, f"the run ended before the kill: {process.stderr.read()}"
        return judgments(store) >= at_least
    wait_while_progressing(stored, lambda: (stub.count, judgments(store)), f"{at_least} judgments stored", poll=0.02)


def test_sigkill_mid_run_loses_nothing_and_a_resume_does_only_the_rest(stub, tmp_path):
    n = 24
    dataset, template, store = write_dataset(tmp_path, n), write_template(tmp_path), tmp_path / "store.sqlite"
    stub.configure("logprobs", delay=0.3)  # 24 items take >7 s: time enough to kill it mid-run
    process = start_cli(*score_args(stub, dataset, template, store))
    wait_for_judgments(store, 6, process, stub)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    assert process.returncode == -signal.SIGKILL

    # Every judgment present is complete (ok, a score, its cached call) and there exactly once.
    assert query(store, "PRAGMA integrity_check") == [("ok",)]
    rows = query(store, """SELECT j.item_id, j.aspect, j.status, j.score, c.key, c.prompt
                           FROM judgments j LEFT JOIN calls c ON c.key = j.call_key""")
    finished = {item_id for item_id, *_ in rows}
    assert 6 <= len(rows) < n
    assert len(finished) == len(rows)  # one judgment per item (one aspect), no duplicates
    assert all(status == "ok" and score is not None and key is not None for _, _, status, score, key, _ in rows)
    assert query(store, "SELECT COUNT(*) FROM items")[0][0] == n  # the dataset was stored whole
    assert query(store, "SELECT status FROM runs") == [("running",)]  # never recorded as finished
    finished_prompts = {prompt for *_, prompt in rows}

    # Listing the runs finds its process gone: shown and marked as crashed.
    listed = run_cli("runs", "--store", str(store))
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.splitlines()[1].split()[:2] == ["1", "crashed"]
    assert f"{process.pid}@" in listed.stdout and "run the same command again to resume" in listed.stderr
    assert query(store, "SELECT status FROM runs") == [("crashed",)]

    stub.configure("logprobs")
    result = run_cli(*score_args(stub, dataset, template, store))
    assert result.returncode == 0, result.stderr
    assert f"{n} items, {len(finished)} cached, {n - len(finished)} judge calls, 0 failed" in result.stdout
    asked = [body["messages"][0]["content"] for body in stub.bodies()]
    assert not finished_prompts & set(asked)  # nothing finished before the kill was asked again
    assert len(asked) == len(set(asked)) == n - len(finished)
    rows = query(store, "SELECT item_id, status, score FROM judgments")
    assert len(rows) == n and len({r[0] for r in rows}) == n
    assert all(status == "ok" and score is not None for _, status, score in rows)
    assert query(store, "SELECT COUNT(*) FROM calls")[0][0] == n
    assert query(store, "SELECT id, status FROM runs ORDER BY id") == [(1, "crashed"), (2, "finished")]
    listed = run_cli("runs", "--store", str(store)).stdout.splitlines()  # the crashed one said "crashed" alone
    assert listed[2].split()[:6] == ["1", "crashed", "(run", "2", "went", "on)"], listed


def test_the_score_page_lists_a_killed_run_as_crashed(monkeypatch, tmp_path):
    from tests.apptest_helpers import open_app, texts

    store = geval.Store(tmp_path / "store.sqlite")  # the store the app will open
    killed = subprocess.Popen([sys.executable, "-c", "pass"])
    killed.wait()
    run_id = store.start_run(dataset="topicalchat_usr_sample", template="t@1", n_items=6)
    store.db["runs"].update(run_id, {"pid": killed.pid})  # as if that process had been killed mid-run
    store.close()
    at = open_app(monkeypatch, tmp_path, "views/3_score.py")
    assert not at.exception
    shown = at.dataframe[-1].value
    assert shown[["id", "status", "n_items"]].values.tolist() == [[run_id, "crashed", 6]]
    assert "crashed: the run's process ended before it finished" in texts(at)


@pytest.mark.parametrize("same_template", [False, True], ids=["two templates", "the same template"])
def test_two_processes_writing_one_store_both_finish(stub, tmp_path, same_template):
    n = 30
    dataset, store = write_dataset(tmp_path, n), tmp_path / "store.sqlite"
    names = ["crash-a", "crash-a" if same_template else "crash-b"]
    templates = [write_template(tmp_path, name) for name in names]
    stub.configure("logprobs", delay=0.01)
    processes = [start_cli(*score_args(stub, dataset, template, store)) for template in templates]
    outputs = [process.communicate(timeout=240) for process in processes]
    for process, (stdout, stderr) in zip(processes, outputs):
        assert process.returncode == 0, stderr
        assert "locked" not in stderr + stdout and "Traceback" not in stderr
    versions = {load_template(t).version for t in templates}
    counts = dict(query(store, "SELECT template_version, COUNT(*) FROM judgments GROUP BY template_version"))
    assert counts == {version: n for version in versions}  # no lost rows, no duplicates
    assert query(store, "SELECT COUNT(*) FROM judgments WHERE status != 'ok' OR score IS NULL") == [(0,)]
    assert query(store, "SELECT COUNT(*) FROM items") == [(n,)]
    assert sorted(query(store, "SELECT status FROM runs")) == [("finished",), ("finished",)]


def test_two_threads_with_their_own_connections_both_finish(tmp_path):
    """What two browser tabs do: each job opens its own Store on the same file."""
    path = tmp_path / "store.sqlite"
    items = make_items(150)
    templates = [make_template(name="tab-one"), make_template(name="tab-two")]
    errors: list[BaseException] = []
    results: list[Progress] = []

    def job(template: geval.Template) -> None:
        store = geval.Store(path)
        try:
            results.append(geval.score(store, items, template, scripted(), "synthetic"))
            for item in items[:50]:  # notes written meanwhile, too
                store.set_note(item.id, True, f"seen by {template.name}")
        except BaseException as exc:
            errors.append(exc)
        finally:
            store.close()

    threads = [threading.Thread(target=job, args=(template,)) for template in templates]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=240)
    assert errors == []
    assert sorted(p.done for p in results) == [150, 150] and all(p.failed == 0 for p in results)
    store = geval.Store(path)
    for template in templates:
        assert len(store.judgments("synthetic", template_version=template.version, status="ok")) == 150
    assert len(store.notes()) == 50
    store.close()


def test_many_first_opens_of_a_new_store_at_once(tmp_path):
    """Every tab's job opens the store; on a new file they race to create it and switch it to WAL."""

    def open_it(path: Path, start: threading.Barrier, errors: list[str]) -> None:
        start.wait()
        try:
            geval.Store(path).close()
        except Exception as exc:
            errors.append(repr(exc))

    for attempt in range(10):
        path, start, errors = tmp_path / f"new-{attempt}.sqlite", threading.Barrier(8), []
        threads = [threading.Thread(target=open_it, args=(path, start, errors)) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
        assert errors == []
        version = query(path, "SELECT value FROM meta WHERE key = 'schema_version'")
        assert version == [(str(SCHEMA_VERSION),)]
        assert query(path, "PRAGMA journal_mode") == [("wal",)]
