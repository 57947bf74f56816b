"""`python -m geval doctor` and the sidebar's "Check the judge": versions, CPU and llama.cpp build, the
model file, one test judgment in a worker process and the speed measured; each problem with the
command that fixes it, and a non-zero exit when the judge cannot work."""

from __future__ import annotations

import re

import pytest
from helpers import run_cli

from geval.judging import worker as workers
from geval.judging.backends import embedded
from geval.judging.native import REINSTALL
from tests.apptest_helpers import open_app

WORKS = re.compile(r"The embedded judge works: prefill \d+ tokens/s, decode \d+ tokens/s\.")


@pytest.mark.model
@pytest.mark.timeout(900)
def test_the_doctor_checks_everything_and_ends_with_the_judge_working_and_its_speed():
    done = run_cli("doctor", timeout=800)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.strip().splitlines()
    assert WORKS.fullmatch(lines[-1]), lines[-1]
    text = done.stdout
    assert re.search(r"^-- Python 3\.\d+\.\d+; .*llama-cpp-python 0\.3\.36", text, re.M)
    assert re.search(r"^-- CPU: .+, \d+ CPUs.*; AVX2 yes, AVX-512 (yes|no), AMX (yes|no)$", text, re.M)
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
    assert done.stdout.strip().splitlines()[-1] == ("The embedded judge cannot work here: 1 problem(s) above, each with "
                                                    "its fix.")


def test_the_sidebar_checks_the_judge_and_says_it_works_with_its_speed(monkeypatch, tmp_path):
    monkeypatch.setattr(embedded, "TARGET", "fake_native:FakeJudgeModel")
    try:
        at = open_app(monkeypatch, tmp_path)
        at.sidebar.button(key="judge_check").click().run()
        assert [s.value for s in at.sidebar.success] == ["The embedded judge works: prefill 1000 tokens/s, "
                                                         "decode 100 tokens/s."]
        shown = " ".join(m.value for m in at.sidebar.markdown)
        assert "test judgment in a worker process: Naturalness" in shown and "runs on every x86" in shown
    finally:
        workers.close_all()


def test_the_sidebar_shows_a_problem_in_red_with_its_fix(monkeypatch, tmp_path):
    monkeypatch.setattr(embedded, "TARGET", "fake_native:FakeJudgeModel")
    monkeypatch.setenv(workers.FAULT, "judge:SIGSEGV:0")
    try:
        at = open_app(monkeypatch, tmp_path)
        at.sidebar.button(key="judge_check").click().run()
        assert [e.value for e in at.sidebar.error] == ["The embedded judge cannot work here: 1 problem(s) above, "
                                                       "each with its fix."]
        shown = " ".join(m.value for m in at.sidebar.markdown)
        assert "crashed \\(SIGSEGV" in shown and "requirements-llama.txt" in shown, shown
        assert not at.exception
    finally:
        workers.close_all()
