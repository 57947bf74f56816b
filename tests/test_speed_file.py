"""The suite keeps its own speeds measured here (tests/conftest.py sets GEVAL_SPEED_FILE): an app
scoring with the embedded judge in another process rewrote the user's cache folder's speed.json
between a test's run and its assertion ("measured on this machine over 2 judgments" read "over 25
judgments 1 s ago"). The model files stay in the shared cache folder."""

from __future__ import annotations

import os
import time
from pathlib import Path

from platformdirs import user_cache_dir

from geval.judging import native
from geval.judging.weights import cache_dir


def test_speeds_are_kept_in_the_file_geval_speed_file_names_not_the_cache_folder(monkeypatch, tmp_path):
    monkeypatch.setenv("GEVAL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("GEVAL_SPEED_FILE", str(tmp_path / "speeds.json"))
    native.remember_speed("qwen@abc", native.Speed(100.0, 10.0, time.time(), 2))
    assert (tmp_path / "speeds.json").is_file() and not (cache_dir() / native.SPEED_FILE).exists()
    assert native.remembered_speed("qwen@abc").judgments == 2
    monkeypatch.delenv("GEVAL_SPEED_FILE")
    assert native.remembered_speed("qwen@abc") is None  # the cache folder's own, untouched


def test_the_suite_has_a_speed_file_of_its_own_and_shares_the_model_files():
    speeds = Path(os.environ["GEVAL_SPEED_FILE"])
    assert native.speed_path() == speeds
    assert Path(user_cache_dir("geval-studio")) not in speeds.parents
    assert os.environ.get("GEVAL_CACHE_DIR") is None or "geval-tests-" not in os.environ["GEVAL_CACHE_DIR"]
