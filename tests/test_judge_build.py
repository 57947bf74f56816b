"""The embedded judge's llama.cpp built in the background on a new machine (geval/judging/build.py):
`geval doctor --build` starts pip in a process of its own and returns; the build's step (ninja's
"[n/N]" lines in pip's log), a failure with its reason, and what to run, on the Score page and in
`geval doctor`; Start waits for the build."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest
from helpers import wait_while_progressing

from geval import cli
from geval.judging import build, checkup
from tests.apptest_helpers import open_app, texts

NINJA = "".join(f"[{n}/187] Building CXX object vendor/llama.cpp/src/llama-{n}.cpp.o\n" for n in range(1, 58))


@pytest.fixture
def unbuilt(monkeypatch, tmp_path):
    """A machine where llama-cpp-python is not installed, its build kept under tmp_path."""
    monkeypatch.setattr(build, "folder", lambda: tmp_path / "llama-build")
    monkeypatch.setattr(build, "installed", lambda: False)
    return build.folder()


def a_pip(folder, log: str) -> subprocess.Popen:
    """A process that stands for pip at work (its command line names pip), with `log` as its log."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "pip.log").write_text(log)
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "pip"])
    (folder / "started.json").write_text(json.dumps({"pid": process.pid, "time": time.time() - 360}))
    return process


def test_a_build_never_started_says_what_builds_it(unbuilt):
    now = build.status()
    assert now.state == "none"
    assert "`python -m geval doctor --build` builds it in the background" in now.line()


def test_a_build_going_on_says_its_step_and_its_minutes_then_a_failure_its_reason(unbuilt):
    pip = a_pip(unbuilt, "$ pip install\nRunning command Building wheel\n" + NINJA)
    try:
        now = build.status()
        assert (now.state, now.step, now.steps) == ("building", 57, 187)
        assert "being built in the background, for every x86-64 CPU with AVX2: step 57 of 187 (30%), 6 min so far" \
            in now.line()
    finally:
        pip.kill()
        pip.wait()
    (unbuilt / "pip.log").write_text(NINJA + "FAILED: src/llama.o\nc++: fatal error: Killed signal terminated\n"
                                     "ERROR: Failed building wheel for llama-cpp-python\n")
    failed = build.status()
    assert failed.state == "failed"
    assert failed.line().startswith("The embedded judge's llama.cpp build failed at step 57 of 187: ERROR: Failed "
                                    "building wheel for llama-cpp-python. The log is ")
    assert failed.line().endswith("build it again with `python -m geval doctor --build`.")


def test_before_compiling_the_build_says_it_is_preparing(unbuilt):
    pip = a_pip(unbuilt, "$ pip install\nCollecting llama-cpp-python\n")
    try:
        assert "preparing (pip is fetching and configuring llama.cpp), 6 min so far" in build.status().line()
    finally:
        pip.kill()
        pip.wait()


def test_start_runs_pip_in_the_background_and_its_failure_is_read_from_its_log(unbuilt, tmp_path, capsys,
                                                                            monkeypatch):
    requirements = tmp_path / "requirements-llama.txt"
    requirements.write_text("this is not a requirement ==\n")  # pip stops at once, before reaching any index
    monkeypatch.setattr(build, "REQUIREMENTS", requirements)
    assert cli.main(["doctor", "--build"]) == 0
    assert "being built in the background" in capsys.readouterr().out  # said as pip starts, then left to it
    log = unbuilt / "pip.log"
    wait_while_progressing(lambda: build.status().state == "failed", lambda: log.stat().st_size, "pip's failure")
    failed = build.status()
    assert "Invalid requirement" in failed.reason, log.read_text()
    assert build.start(requirements).state == "building"  # a failed build starts again when asked
    wait_while_progressing(lambda: build.status().state == "failed", lambda: log.stat().st_size, "pip's failure")


def test_an_installed_build_is_never_started_again(monkeypatch, tmp_path):
    monkeypatch.setattr(build, "folder", lambda: tmp_path / "llama-build")
    monkeypatch.setattr(build, "installed", lambda: True)
    assert build.start().state == "installed"
    assert not (build.folder() / "started.json").exists()


def test_the_doctor_says_the_build_is_going_on_instead_of_checking(unbuilt):
    pip = a_pip(unbuilt, NINJA)
    try:
        found = checkup.embedded(judge=None)
    finally:
        pip.kill()
        pip.wait()
    assert not found.works
    assert "[PROBLEM] llama-cpp-python is not installed yet" in found.text()
    assert found.verdict.startswith("The embedded judge's llama.cpp is being built in the background")


def test_the_score_page_shows_the_build_and_start_waits_for_it(unbuilt, monkeypatch, tmp_path):
    pip = a_pip(unbuilt, NINJA)
    try:
        at = open_app(monkeypatch, tmp_path, "views/3_score.py")
        assert not at.exception
        assert "step 57 of 187 (30%)" in texts(at)
        assert at.button(key="score_start").disabled
        monkeypatch.setattr(build, "installed", lambda: True)
    finally:
        pip.kill()
        pip.wait()
    at.run()
    assert "being built" not in texts(at) and not at.button(key="score_start").disabled


@pytest.mark.parametrize("cmdline, state, running", [
    (b"", "S", True),  # just started: the kernel sets the command line late in exec, after the parent goes on
    (b"python3\0-m\0pip\0install\0", "S", True),
    (b"python3\0-m\0pip\0install\0", "Z", False),  # ended, not yet reaped
    (b"python3\0-m\0http.server\0", "S", False),  # a later process that took the id
])
def test_a_pip_just_started_is_running_and_another_process_with_its_id_is_not(monkeypatch, cmdline, state, running):
    proc = {"/proc/7/cmdline": cmdline, "/proc/7/stat": f"7 (python3) {state} 1 7".encode()}

    class Proc(type(build.Path())):
        def read_bytes(self):
            return proc[str(self)]

        def read_text(self, *args, **kwargs):
            return proc[str(self)].decode()

    monkeypatch.setattr(build, "Path", Proc)
    assert build._running(7) is running
