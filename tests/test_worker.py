"""Native models in worker processes (geval/judging/worker.py): a crash, a kill or a hang there is a
named error in the caller, which lives on; the next call starts a fresh worker. The models here
are stand-ins (stubs/fake_native.py); the real judge's worker is in tests/test_judge_crash.py."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import REPO, short_topical_chat

from geval.errors import GevalError, JudgmentFailed, WorkerDied
from geval.judging import worker as workers

COUNTER = "fake_native:Counter"


@pytest.fixture(autouse=True)
def no_workers_left():
    yield
    workers.close_all()


def test_a_worker_keeps_its_model_between_calls_and_reports_what_it_said_when_built():
    counter = workers.worker(COUNTER, {"start": 5}, "the counter", "counter")
    assert counter.info == {"started": 5}
    assert counter.call("add", 2, seconds=30) == 7 and counter.call("add", 3, seconds=30) == 10
    assert counter.process.pid != os.getpid()
    assert workers.worker(COUNTER, {"start": 5}, "the counter", "counter") is counter  # one per model and options
    assert workers.worker(COUNTER, {"start": 1}, "the counter", "counter") is not counter


def test_a_workers_native_threads_sleep_while_they_wait_unless_the_caller_chose(monkeypatch):
    def policy(worker) -> str:
        environ = (Path("/proc") / str(worker.process.pid) / "environ").read_bytes().split(b"\0")
        return next(v.split(b"=", 1)[1].decode() for v in environ if v.startswith(b"OMP_WAIT_POLICY="))

    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    assert policy(workers.worker(COUNTER, {"start": 1}, "the counter", "counter")) == "PASSIVE"
    monkeypatch.setenv("OMP_WAIT_POLICY", "ACTIVE")
    assert policy(workers.worker(COUNTER, {"start": 2}, "the counter", "counter")) == "ACTIVE"


def test_a_worker_idle_for_its_limit_ends_and_the_next_call_loads_its_model_again(monkeypatch, tmp_path):
    counted = tmp_path / "loads.txt"
    monkeypatch.setenv(workers.LOADS, str(counted))
    counter = workers.worker(COUNTER, {"start": 5}, "the counter", "counter")
    assert counter.call("add", 1, seconds=30) == 6 and counter.load_seconds > 0
    assert workers.close_idle(now=counter.last_used + workers.IDLE_SECONDS - 1) == 0 and counter.alive
    assert workers.close_idle(now=counter.last_used + workers.IDLE_SECONDS) == 1 and not counter.alive
    again = workers.worker(COUNTER, {"start": 5}, "the counter", "counter")
    assert again is not counter and again.call("add", 1, seconds=30) == 6  # built again: its state starts over
    assert workers.loads(counted, "counter") == 2


def test_a_worker_in_a_call_is_never_ended_as_idle():
    counter = workers.worker(COUNTER, {}, "the counter", "counter")
    with counter.lock:  # as during a call
        assert workers.close_idle(now=time.time() + 2 * workers.IDLE_SECONDS) == 0
    assert counter.alive


def test_calls_checks_and_runs_of_one_process_build_its_model_once(monkeypatch, tmp_path):
    counted = tmp_path / "loads.txt"
    monkeypatch.setenv(workers.LOADS, str(counted))
    for _ in range(3):
        assert workers.worker(COUNTER, {}, "the counter", "counter").call("add", 1, seconds=30) > 0
    assert workers.loads(counted, "counter") == 1 and workers.loads(counted, "judge") == 0
    assert workers.loads(tmp_path / "none.txt", "counter") == 0


def test_another_model_of_the_same_role_ends_the_idle_one_and_leaves_other_roles_be():
    first = workers.worker(COUNTER, {"start": 5}, "the counter", "counter")
    other_role = workers.worker(COUNTER, {"start": 7}, "another counter", "tally")
    second = workers.worker(COUNTER, {"start": 1}, "the counter", "counter")  # another model chosen for the role
    assert not first.alive and second.alive and other_role.alive


def test_errors_of_the_model_cross_as_they_were_raised_and_the_worker_stays():
    counter = workers.worker(COUNTER, {}, "the counter", "counter")
    with pytest.raises(JudgmentFailed, match="more than the context window"):
        counter.call("fail", "geval", seconds=30)
    with pytest.raises(GevalError, match="unexpected error: ValueError: a bug in the model's code"):
        counter.call("fail", "bug", seconds=30)
    assert counter.alive and counter.call("add", 1, seconds=30) == 1


def test_a_model_that_cannot_be_built_says_why():
    with pytest.raises(JudgmentFailed, match="refuses to be built"):
        workers.worker(COUNTER, {"refuse": True}, "the counter", "counter")


@pytest.mark.parametrize("fault, words", [
    ("SIGSEGV", "crashed (SIGSEGV, a fault in native code, under judging/worker.py _serve): "
                "run `python -m geval doctor`"),
    ("SIGILL", "crashed (SIGILL, an instruction this CPU does not have: the native library was built for another CPU"),
    ("SIGBUS", "crashed (SIGBUS, a fault in native code"),
])
def test_a_native_crash_is_one_line_naming_the_signal_and_the_next_call_starts_a_fresh_worker(monkeypatch, fault, words):
    monkeypatch.setenv(workers.FAULT, f"counter:{fault}:2")
    counter = workers.worker(COUNTER, {}, "the counter", "counter")
    assert counter.call("add", 1, seconds=30) == 1 and counter.call("add", 1, seconds=30) == 2
    with pytest.raises(WorkerDied) as caught:
        counter.call("add", 1, seconds=30)
    assert str(caught.value).startswith(f"the counter {words}")
    assert not counter.alive and os.getpid() > 0  # this process lives on
    monkeypatch.delenv(workers.FAULT)
    fresh = workers.worker(COUNTER, {}, "the counter", "counter")
    assert fresh is not counter and fresh.call("add", 1, seconds=30) == 1  # a new model: its state starts over


def test_a_kill_from_outside_names_the_out_of_memory_killer():
    counter = workers.worker(COUNTER, {}, "the counter", "counter")
    os.kill(counter.process.pid, signal.SIGKILL)
    counter.process.wait()
    with pytest.raises(WorkerDied, match=r"^the counter crashed \(SIGKILL, killed from outside: the out-of-memory "
                                         r"killer, or someone ended it\): run `python -m geval doctor`$"):
        counter.call("add", 1, seconds=30)


def test_a_hang_is_stopped_after_the_calls_limit():
    os.environ[workers.FAULT] = "counter:hang:0"
    try:
        counter = workers.worker(COUNTER, {}, "the counter", "counter")
    finally:
        del os.environ[workers.FAULT]
    started = time.monotonic()
    with pytest.raises(WorkerDied, match=r"^the counter did not answer within 1 s and was stopped: it hung, or this "
                                         r"machine is far slower than measured; run `python -m geval doctor`$"):
        counter.call("add", 1, seconds=1.0)
    assert time.monotonic() - started < 10
    assert counter.process.poll() is not None  # the hung worker was ended


def test_the_worker_ends_with_its_caller():
    script = ("import sys; sys.path[:0] = ['stubs']; from geval.judging import worker as w; "
              f"print(w.worker('{COUNTER}', {{}}, 'the counter', 'counter').process.pid, flush=True); "
              "import os; os._exit(0)")  # no atexit: as if the caller were killed
    caller = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=120)
    pid = int(caller.stdout.split()[0])
    deadline = time.time() + 30
    while time.time() < deadline and _alive(pid):
        time.sleep(0.1)
    assert not _alive(pid)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    state = open(f"/proc/{pid}/stat").read().rpartition(")")[2].split()[0]
    return state != "Z"


@pytest.mark.model
@pytest.mark.timeout(900)
def test_the_judge_the_likelihood_and_the_embeddings_never_load_llama_cpp_in_the_callers_process(tmp_path):
    script = """
import sys
import geval
from geval.analysis.baselines import compute_baselines
dataset = geval.load_dataset(sys.argv[2])
store = geval.Store(sys.argv[1])
progress = geval.score(store, dataset.items[:2], geval.Template.load("topicalchat-naturalness"),
                       geval.make_judge("embedded"), dataset.name)
baselines = compute_baselines(dataset.items[:4], ["pmi", "embedding", "bertscore"], store=store)
print(progress.done, [round(float(b.scores.iloc[0]), 3) for b in baselines], "llama_cpp" in sys.modules,
      "tokenizers" in sys.modules)
"""
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path / "store.sqlite"),
                           str(short_topical_chat(tmp_path))], cwd=REPO,
                          capture_output=True, text=True, timeout=850)
    assert done.returncode == 0, done.stderr[-2000:]
    words = done.stdout.split()
    assert words[0] == "2" and words[-2:] == ["False", "False"], done.stdout  # scored, and no native model here
