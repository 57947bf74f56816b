"""The embedded judge on the caller's side, with a stand-in model in its worker (stubs/fake_native.py):
its model loaded once for a check and the runs after it, the load as a step with its expected time,
and its speed the newest measured here (as the model loaded, or over a run's judgments since).
The real model's worker is in tests/test_embedded_model.py and tests/test_e2e_embedded.py."""

from __future__ import annotations

import re
import time

import pytest
from helpers import make_items, make_template

import geval
from geval.judging import native
from geval.judging import worker as workers
from geval.judging.backends import embedded
from geval.judging.native import Speed

NATURAL = make_template()
FIVE = make_template(aspects=(("Naturalness", 1, 5, "Natural"),))


@pytest.fixture
def judge(monkeypatch, tmp_path):
    """An embedded judge whose worker holds the stand-in model; the speeds it remembers are kept
    under tmp_path (not in this machine's cache), and the models its workers build are counted."""
    monkeypatch.setattr(embedded, "TARGET", "fake_native:FakeJudgeModel")
    monkeypatch.setattr(native, "cache_dir", lambda: tmp_path / "cache")
    monkeypatch.setenv(native.SPEED_FILE_ENV, str(tmp_path / "speed.json"))
    monkeypatch.setenv(workers.LOADS, str(tmp_path / "loads.txt"))
    (tmp_path / "model.gguf").write_bytes(b"a stand-in")
    yield embedded.EmbeddedJudge(model_path=tmp_path / "model.gguf")
    workers.close_all()


def test_a_check_and_the_runs_of_two_templates_after_it_load_the_model_once(judge, store, tmp_path):
    assert judge.check().works
    items = make_items(4)
    runs = [geval.score(store, items, template, judge, "synthetic") for template in (NATURAL, FIVE)]
    assert [run.done for run in runs] == [4, 4] and [run.load_took for run in runs] == [None, None]
    assert workers.loads(tmp_path / "loads.txt", "judge") == 1


def test_a_run_that_loads_the_model_says_how_long_the_load_is_expected_to_take(judge, store, tmp_path):
    assert judge.load_seconds == embedded.EmbeddedJudge.seconds_to_load  # never loaded on this machine
    assert not judge.unload()  # nothing loaded yet
    loading = []
    progress = geval.score(store, make_items(2), NATURAL, judge, "synthetic",
                           on_progress=lambda p: loading.append(p.load_expected) if p.loading else None)
    assert loading and set(loading) == {embedded.EmbeddedJudge.seconds_to_load}
    assert progress.load_took is not None and progress.load_took > 0
    measured = judge.load_seconds  # measured as it loaded, for the next load's estimate
    assert measured != embedded.EmbeddedJudge.seconds_to_load and measured == pytest.approx(progress.load_took, abs=2)
    assert judge.loaded and judge.unload() and not judge.loaded  # ended at once, as after a long idle
    again = geval.score(store, make_items(3), NATURAL, judge, "synthetic")
    assert again.load_took is not None and workers.loads(tmp_path / "loads.txt", "judge") == 2


def test_the_judges_speed_is_the_newest_measured_as_the_model_loaded_or_over_a_run(judge):
    assert judge.speed is None  # never measured on this machine
    judge.load()
    loaded = judge.speed
    assert (loaded.prefill, loaded.decode, loaded.judgments) == (1000.0, 100.0, 0)
    judge.note_speed(Speed(prefill=500.0, decode=50.0, measured=time.time() + 1, judgments=40))
    noted = judge.speed
    assert (noted.prefill, noted.decode, noted.judgments) == (500.0, 50.0, 40)
    assert noted.load is not None and noted.load == judge.load_seconds  # the load time kept beside it


def test_the_plan_says_its_pace_was_measured_over_the_judgments_of_a_run(judge, store):
    judge.note_speed(Speed(prefill=500.0, decode=50.0, measured=time.time() - 30, judgments=40))
    line = geval.plan(store, make_items(3), NATURAL, judge).time_line()
    assert re.search(r"at prefill 500 tokens/s, decode 50 tokens/s, measured on this machine over 40 judgments "
                     r"3\d s ago", line), line
