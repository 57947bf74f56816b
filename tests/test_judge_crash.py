"""The embedded judge's worker dies mid-run (a SIGSEGV made by the worker's test hook): the run ends as
failed with one line naming what happened and what to do, what was judged before stays stored,
the caller (the CLI, the app's server) lives on, and the next run starts a fresh worker and does the
rest. The fast tests put a stand-in model in the worker (stubs/fake_native.py); the CLI's uses the
real one."""

from __future__ import annotations

import sqlite3

import pytest
from helpers import make_items, make_template, run_cli, short_topical_chat

import geval
from geval.errors import WorkerDied
from geval.judging import worker as workers
from geval.judging.backends import embedded
from geval.judging.backends.embedded import EmbeddedJudge
from tests.apptest_helpers import open_app, wait_for

TEMPLATE = make_template()
CRASH = r"^the embedded judge crashed \(SIGSEGV, a fault in native code, under judging/worker\.py _serve\): " \
        r"run `python -m geval doctor`$"


@pytest.fixture
def fake_model(monkeypatch):
    """The embedded judge with a stand-in model in its worker (its speed, and the runs', not kept in
    this machine's cache: the real model's estimates read it)."""
    monkeypatch.setattr(embedded, "TARGET", "fake_native:FakeJudgeModel")
    monkeypatch.setattr(embedded, "remember_speed", lambda model, speed: None)
    yield
    workers.close_all()


def test_a_crash_mid_run_fails_the_run_keeps_what_was_judged_and_the_next_run_does_the_rest(fake_model, monkeypatch,
                                                                                           store):
    items = make_items(6)
    monkeypatch.setenv(workers.FAULT, "judge:SIGSEGV:3")
    with pytest.raises(WorkerDied, match=CRASH):
        geval.score(store, items, TEMPLATE, EmbeddedJudge(), "synthetic")
    assert len(store.judgments("synthetic")) == 3  # the three judged before the crash
    run = store.runs("synthetic").iloc[0]
    assert run["status"] == "failed"
    monkeypatch.delenv(workers.FAULT)
    again = geval.score(store, items, TEMPLATE, EmbeddedJudge(), "synthetic")
    assert (again.status, again.cached, again.calls) == ("finished", 3, 3)
    frame = store.judgments("synthetic")
    assert len(frame) == 6 and frame["item_id"].is_unique and set(frame["status"]) == {"ok"}


def test_the_score_page_shows_the_red_line_stays_usable_and_a_second_run_succeeds(fake_model, monkeypatch, tmp_path):
    monkeypatch.setenv(workers.FAULT, f"judge:SIGSEGV:2:{tmp_path / 'crashed-once'}")
    at = open_app(monkeypatch, tmp_path, "views/3_score.py")
    at.number_input(key="score_limit").set_value(5).run()
    at.button(key="score_start").click().run()
    wait_for(at, lambda at: at.error)
    line = at.error[0].value
    assert "the embedded judge crashed (SIGSEGV, a fault in native code" in line and "python -m geval doctor" in line
    assert "The 2 items judged before it are stored: press Start to go on." in line
    at.button(key="score_start").click().run()  # the fault was made once: a fresh worker does the rest
    wait_for(at, lambda at: at.success)
    assert "5/5 items, 2 cached, 3 judge calls, 0 failed" in at.success[0].value
    assert not at.exception


@pytest.mark.model
@pytest.mark.timeout(900)
def test_the_cli_says_the_line_exits_non_zero_loses_nothing_and_resumes(tmp_path):
    store = tmp_path / "store.sqlite"
    args = ["score", str(short_topical_chat(tmp_path)), "-t", "topicalchat-naturalness", "--limit", "5", "--store",
            str(store)]
    crashed = run_cli(*args, env={workers.FAULT: "judge:SIGSEGV:2"}, timeout=800)
    assert crashed.returncode != 0
    assert ("error: the embedded judge crashed (SIGSEGV, a fault in native code, under judging/worker.py _serve): "
            "run `python -m geval doctor`") in crashed.stderr
    with sqlite3.connect(store) as conn:
        assert conn.execute("SELECT COUNT(*) FROM judgments WHERE status = 'ok'").fetchone()[0] == 2
        assert conn.execute("SELECT status FROM runs").fetchall() == [("failed",)]
    resumed = run_cli(*args, timeout=800)
    assert resumed.returncode == 0, resumed.stderr
    assert "5 items, 2 cached, 3 judge calls, 0 failed" in resumed.stdout
