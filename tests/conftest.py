"""Fixtures shared by every test file (helpers live in tests/helpers.py)."""

from __future__ import annotations

import hashlib
import os
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import settings

# In CI every property test draws the same examples: a landing never fails on a new random draw.
# Explore with HYPOTHESIS_PROFILE=thorough (tests/test_fuzz_inputs.py) and keep what it finds.
settings.register_profile("ci", derandomize=True, deadline=None)
if os.environ.get("CI"):
    settings.load_profile("ci")

# The suite keeps its own speeds measured here (the model files stay shared): an app scoring with the embedded
# judge in another process rewrites the user's cache folder's speed.json, and an estimate a test reads changed
# under it. Set before anything starts: the apps and workers the tests start inherit it.
os.environ["GEVAL_SPEED_FILE"] = str(Path(tempfile.mkdtemp(prefix="geval-tests-")) / "speed.json")

from openai_stub import OpenAIStub  # noqa: E402

import geval  # noqa: E402
from geval.data.dataset import SHARED_DATA_DIR  # noqa: E402

REPO = Path(__file__).resolve().parent.parent

#: The test files that take longest on the 2-core CI machine (a minute or more each, measured with --durations),
#: longest first. They are collected first: `--dist loadfile` hands the files out in the order collected, and one
#: of them handed out last kept one process working minutes after the other had finished.
LONGEST = ("test_embedded_model.py", "test_stats.py", "test_e2e_crash.py", "test_e2e_label.py", "test_e2e_tune.py",
           "test_e2e_session.py", "test_e2e_browser.py", "test_chaos_and_soak.py", "test_judge_crash.py",
           "test_e2e_alttest.py", "test_worker.py", "test_openai_server.py", "test_e2e_embedded.py",
           "test_e2e_navigation.py", "test_leaderboard.py", "test_alttest.py")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The longest files first (`LONGEST`), each file's tests in their order, the others as collected."""
    rank = {name: place for place, name in enumerate(LONGEST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(LONGEST)))


def _changed_tracked_files() -> dict[str, str] | None:
    """Tracked files that differ from the last commit, each with a hash of its content (None
    outside a git checkout). With GEVAL_PUBLISH_SCREENSHOTS set, docs/screenshots/ is left out:
    the README's shots are then retaken on purpose."""
    try:
        names = subprocess.run(["git", "diff", "--name-only", "HEAD"], cwd=REPO, capture_output=True, text=True,
                               check=True, timeout=60).stdout.splitlines()
    except (OSError, subprocess.SubprocessError):
        return None
    if os.environ.get("GEVAL_PUBLISH_SCREENSHOTS"):
        names = [name for name in names if not name.startswith("docs/screenshots/")]
    return {name: hashlib.sha256((REPO / name).read_bytes()).hexdigest() if (REPO / name).is_file() else "gone"
            for name in names}


@pytest.fixture(scope="session", autouse=True)
def tracked_files_unchanged():
    """The suite leaves every tracked file as it found it: tests write under tmp_path, and screenshots
    into tests/artifacts/ (ignored by git). Checked once, after the last test."""
    before = _changed_tracked_files()
    yield
    after = _changed_tracked_files()
    if before is not None and after is not None and after != before:
        changed = sorted(name for name in {*before, *after} if before.get(name) != after.get(name))
        pytest.fail(f"the tests changed tracked files: {', '.join(changed)}; write under tmp_path instead "
                    "(screenshots: tests/artifacts/)", pytrace=False)


@pytest.fixture(scope="module", autouse=True)
def native_workers_end_with_their_module():
    """The worker processes a test module started (a model each, about 2 GB) end with it."""
    yield
    from geval.judging import worker

    worker.close_all()


@pytest.fixture
def store():
    """A fresh in-memory store."""
    fresh = geval.Store(":memory:")
    yield fresh
    fresh.close()


@pytest.fixture
def file_store(tmp_path: Path):
    """A fresh store in a temporary SQLite file (WAL mode)."""
    fresh = geval.Store(tmp_path / "store.sqlite")
    yield fresh
    fresh.close()


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """../shared/data, the full public datasets; skips when it is not there."""
    if not SHARED_DATA_DIR.is_dir():
        pytest.skip(f"{SHARED_DATA_DIR} is not there")
    return SHARED_DATA_DIR


def _shared_file(folder: Path, name: str) -> Path:
    path = folder / name
    if not path.is_file():
        pytest.skip(f"{path} is not there")
    return path


@pytest.fixture(scope="session")
def shared_file(shared_data):
    """shared_file('tc_usr_data.json') -> its path, or skip."""
    return lambda name: _shared_file(shared_data, name)


@pytest.fixture(scope="session")
def tc_dataset(shared_data) -> geval.Dataset:
    """USR Topical-Chat (360 items), loaded once per session."""
    return geval.load_dataset(_shared_file(shared_data, "tc_usr_data.json"))


@pytest.fixture(scope="session")
def openai_stub():
    """One OpenAI-compatible stub server for the session (see tests/openai_stub.py)."""
    server = OpenAIStub()
    yield server
    server.close()


@pytest.fixture
def stub(openai_stub):
    """The session's stub, reset to the default 'logprobs' behaviour with no requests recorded."""
    return openai_stub.configure()
