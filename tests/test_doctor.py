"""`python -m geval doctor` and the sidebar's "Check the judge": versions, CPU and llama.cpp build, the
model file, one test judgment in a worker process and the speed measured; each problem with the
command that fixes it, and a non-zero exit when the judge cannot work."""

from __future__ import annotations

import re
import threading

import pytest
from helpers import run_cli, scripted

from geval.errors import JudgmentFailed
from geval.judging import worker as workers
from geval.judging.backends import embedded
from geval.judging.native import REINSTALL
from tests.apptest_helpers import open_app, wait_for

WORKS = re.compile(r"The embedded judge works: [\d.]+ s per judgment here \(its test judgment\); prefill [\d.]+ "
                   r"tokens/s, decode [\d.]+ tokens/s\.")


@pytest.mark.model
@pytest.mark.timeout(900)
def test_the_doctor_checks_everything_and_ends_with_the_judge_working_and_its_speed():
    done = run_cli("doctor", timeout=800)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.strip().splitlines()
    assert WORKS.fullmatch(lines[-1]), lines[-1]
    text = done.stdout
    assert re.search(r"^\[--\] Python 3\.\d+\.\d+; .*llama-cpp-python 0\.3\.36", text, re.M)
    assert re.search(r"^\[--\] CPU: .+, \d+ CPUs.*; AVX2 yes, AVX-512 (yes|no), AMX (yes|no)$", text, re.M)
    assert re.search(r"^\[ok\] llama-cpp-python 0\.3\.36, built with AVX AVX2 BMI2 F16C FMA SSE3 SSSE3: runs on every "
                     r"x86-64 CPU with AVX2$", text, re.M), text
    assert re.search(r"^\[ok\] model qwen2\.5-coder-1\.5b-instruct-q4_k_m: .+ \(1,117,320,768 bytes, sha256 cc324af070c2… "
                     r"verified\)$", text, re.M)
    assert re.search(r"^\[ok\] test judgment in a worker process: Naturalness \d\.\d\d \(1: 0\.\d\d, 2: 0\.\d\d, 3: 0\.\d\d\)",
                     text, re.M)


@pytest.mark.model
@pytest.mark.timeout(900)
def test_a_judge_that_crashes_is_a_problem_with_its_fix_and_a_non_zero_exit():
    done = run_cli("doctor", env={workers.FAULT: "judge:SIGSEGV:0"}, timeout=800)
    assert done.returncode == 1
    assert re.search(r"^\[PROBLEM\] the test judgment: the embedded judge crashed \(SIGSEGV, a fault in native code",
                     done.stdout, re.M), done.stdout
    assert f"fix: rebuild llama-cpp-python for every x86-64 CPU: {REINSTALL}" in done.stdout
    assert done.stdout.strip().splitlines()[-1].startswith(
        "The embedded judge cannot work: the test judgment: the embedded judge crashed (SIGSEGV, a fault in native code")
    assert done.stdout.strip().endswith(f"; fix: rebuild llama-cpp-python for every x86-64 CPU: {REINSTALL}")


@pytest.fixture
def fake_model(monkeypatch):
    """The embedded judge's model replaced by a stand-in that answers at once; the speed it says it
    has is not remembered in this machine's cache (the real model's estimates would read it)."""
    monkeypatch.setattr(embedded, "TARGET", "fake_native:FakeJudgeModel")
    monkeypatch.setattr(embedded, "remember_speed", lambda model, speed: None)
    yield
    workers.close_all()


def _checked(at):
    """The app once its check of the judge has ended (it runs in the background)."""
    at.sidebar.button(key="judge_check").click().run()
    wait_for(at, lambda at: at.sidebar.success or at.sidebar.error)
    return at


def test_the_sidebar_checks_the_judge_and_headlines_the_time_of_a_judgment(monkeypatch, tmp_path, fake_model):
    at = _checked(open_app(monkeypatch, tmp_path))
    [verdict] = [s.value for s in at.sidebar.success]
    assert re.fullmatch(r"The embedded judge works: 0\.\d s per judgment here \(its test judgment\); prefill "
                        r"1000 tokens/s, decode 100 tokens/s\.", verdict), verdict
    shown = " ".join(m.value for m in at.sidebar.markdown)
    assert "test judgment in a worker process: Naturalness" in shown and "runs on every x86" in shown
    assert "speed on this machine: prefill 1000 tokens/s, decode 100 tokens/s" in shown
    assert not at.sidebar.get("progress")  # the bar of the check's steps is gone with it


def test_the_sidebar_shows_the_check_going_on_as_a_bar_of_its_step_not_a_dimmed_page(monkeypatch, tmp_path,
                                                                                      fake_model):
    from studio import checking

    release = threading.Event()
    monkeypatch.setattr(embedded.EmbeddedJudge, "load", lambda judge: release.wait(60))
    monkeypatch.setattr(embedded.EmbeddedJudge, "load_seconds", 40.0)
    at = open_app(monkeypatch, tmp_path)
    at.sidebar.button(key="judge_check").click().run()
    wait_for(at, lambda at: "loading the model" in " ".join(b.proto.text for b in at.sidebar.get("progress")))
    [bar] = at.sidebar.get("progress")
    assert re.fullmatch(r"Checking the judge: loading the model \(about 40 s\), \d+ s so far", bar.proto.text)
    assert at.sidebar.button(key="judge_check").disabled and not at.exception  # the page went on running
    check = checking.get(at.session_state["judge_check_id"])
    assert check.steps == 3 and check.expected == 40.0
    release.set()
    wait_for(at, lambda at: at.sidebar.success)  # then it ends as any check does


def test_the_sidebar_shows_a_problem_in_red_with_its_fix(monkeypatch, tmp_path, fake_model):
    monkeypatch.setenv(workers.FAULT, "judge:SIGSEGV:0")
    at = _checked(open_app(monkeypatch, tmp_path))
    [verdict] = [e.value for e in at.sidebar.error]
    assert verdict.startswith("The embedded judge cannot work: the test judgment: the embedded judge crashed "
                              "(SIGSEGV") and verdict.endswith(f"; fix: rebuild llama-cpp-python for every "
                                                               f"x86-64 CPU: {REINSTALL}")
    assert "above" not in verdict  # the findings are shown below it here
    shown = " ".join(m.value for m in at.sidebar.markdown)
    assert "crashed \\(SIGSEGV" in shown and "requirements-llama.txt" in shown, shown
    assert not at.exception


def test_a_judge_that_answers_headlines_the_time_of_a_judgment_and_one_that_cannot_names_its_problem():
    works = scripted().check()
    assert re.fullmatch(r"The judge works: 0\.\d s per judgment here \(its test judgment\)\.", works.verdict)
    assert works.seconds is not None and works.seconds < 1

    def refuse(prompt, aspect):
        raise JudgmentFailed("HTTP 500 from the server: overloaded")

    broken = scripted(refuse).check()
    assert not broken.works
    assert broken.verdict == "The judge cannot work: the test judgment: HTTP 500 from the server: overloaded"
    assert broken.text().splitlines()[-1] == broken.verdict  # the same line in a terminal, after the findings
