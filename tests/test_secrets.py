"""Secrets and the web surface. A scoring job through the stub with a known fake API key — from
the environment of a CLI subprocess, or given to OpenAIJudge in-process — and every file made
afterwards (store, WAL, logs, the agreement CSV, the HTML report) is scanned for the key's bytes.
Error messages never carry the key, even from a server that echoes it. The app binds to
127.0.0.1 and limits uploads (.streamlit/config.toml)."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from helpers import REPO, make_items, make_template, run_cli

import geval
from geval.errors import JudgeError
from geval.judging.backends.openai import OpenAIJudge

KEY = "sk-test-SECRET-8d1e5f0b2c"
TEMPLATE = make_template()


def files_under(*folders: Path) -> list[Path]:
    return [path for folder in folders for path in sorted(folder.rglob("*")) if path.is_file()]


def assert_no_key(*folders: Path) -> list[Path]:
    """Scan every file under `folders` for the key; returns the files scanned."""
    files = files_under(*folders)
    for path in files:
        assert KEY.encode() not in path.read_bytes(), f"the API key leaked into {path}"
    return files


def write_dataset(folder: Path, n: int = 6) -> Path:
    path = folder / "secret.json"
    path.write_text(json.dumps([{
        "context": "hello there\nhi, how are you?", "fact": "a fact",
        "responses": [{"response": f"reply number {i}", "model": f"sys{i % 2}", "Natural": [1 + i % 3, 1 + (i * 7) % 3]}
                      for i in range(n)],
    }]))
    return path


def test_a_key_from_the_environment_of_the_cli_is_written_nowhere(stub, tmp_path):
    data, work = tmp_path / "data", tmp_path / "work"
    data.mkdir(), work.mkdir()
    dataset, template, store = write_dataset(data), data / "secret-naturalness.txt", work / "store.sqlite"
    template.write_text(TEMPLATE.text)
    env = {"OPENAI_API_KEY": KEY, "OPENAI_LOG": "debug"}  # the SDK's debug log goes to stderr
    stub.configure("logprobs", distribution={1: 0.2, 2: 0.3, 3: 0.5})
    score = run_cli("score", str(dataset), "-t", str(template), "--judge", "openai", "--base-url", stub.url,
                    "--model", "m", "--mode", "logprobs", "--store", str(store), env=env)
    assert score.returncode == 0, score.stderr
    assert stub.count == 6 and {r["headers"]["authorization"] for r in stub.requests} == {f"Bearer {KEY}"}
    csv = work / "agreement.csv"
    agree = run_cli("agree", "secret", "--store", str(store), "--bootstrap", "50", "--csv", str(csv), env=env)
    assert agree.returncode == 0, agree.stderr
    for name, result in (("score", score), ("agree", agree)):  # what a shell would have logged
        (work / f"{name}.log").write_text(result.stdout + result.stderr)
    assert "DEBUG" in (work / "score.log").read_text()  # the SDK's debug log really was on

    scanned = assert_no_key(work, data)
    names = {path.name for path in scanned}
    assert {"store.sqlite", "agreement.csv", "score.log", "agree.log"} <= names
    assert "pearson" in csv.read_text()


def test_a_key_given_in_process_is_written_nowhere(stub, tmp_path, caplog):
    caplog.set_level(logging.DEBUG)  # every logger, the SDK's and httpx's included
    store_path = tmp_path / "store.sqlite"
    store = geval.Store(store_path)
    items = make_items(8)
    dataset = geval.Dataset("synthetic", "synthetic.csv", "table", items)
    store.save_dataset(dataset)
    judge = OpenAIJudge("stub-model", base_url=stub.url, api_key=KEY, mode="logprobs", max_retries=0, timeout=5)
    progress = geval.score(store, items, TEMPLATE, judge, "synthetic",
                                 settings_given={"judge": "openai", "model": "stub-model", "base_url": stub.url})
    assert progress.done == 8 and progress.failed == 0
    assert {r["headers"]["authorization"] for r in stub.requests} == {f"Bearer {KEY}"}

    geval.reporting.report(store, dataset, tmp_path, combos=[(TEMPLATE.version, progress.signature)], n_boot=50,
                 baselines=["length"])  # synthetic.md and synthetic.html
    geval.agree(store, "synthetic", None, n_boot=50).to_csv(tmp_path / "agreement.csv", index=False)
    store.judgments("synthetic").to_csv(tmp_path / "judgments.csv", index=False)
    (tmp_path / "run.log").write_text(caplog.text)
    assert "HTTP Request: POST" in caplog.text  # the logs were captured
    assert KEY not in caplog.text
    assert KEY not in repr(vars(judge)) and KEY not in json.dumps(judge.settings)
    assert Path(f"{store_path}-wal").exists()  # scanned while the WAL still holds the last writes
    assert_no_key(tmp_path)
    store.close()
    assert_no_key(tmp_path)


@pytest.mark.parametrize("echo_key", [False, True], ids=["plain 401", "401 echoing the key"])
def test_a_refused_key_is_not_in_the_error_message(stub, store, echo_key):
    stub.configure("logprobs", fail_first=None, fail_status=401, echo_key=echo_key)
    judge = OpenAIJudge("stub-model", base_url=stub.url, api_key=KEY, mode="logprobs", max_retries=0, timeout=5)
    with pytest.raises(JudgeError) as error:
        geval.score(store, make_items(2), TEMPLATE, judge, "synthetic")
    assert str(error.value) == "the server refused the API key (401); check the key"
    assert KEY not in store.runs().to_json()


def test_a_server_echoing_the_key_into_an_error_gets_it_masked(stub, tmp_path):
    """A 500 whose message repeats the Authorization header: the failed judgment's reason,
    stored in SQLite and shown on the Score page, has the key masked."""
    stub.configure("logprobs", fail_first=None, fail_status=500, echo_key=True, retry_after="0.01")
    store = geval.Store(tmp_path / "store.sqlite")
    judge = OpenAIJudge("stub-model", base_url=stub.url, api_key=KEY, mode="logprobs", max_retries=1, timeout=5)
    progress = geval.score(store, make_items(2), TEMPLATE, judge, "synthetic")
    assert progress.failed == 2
    assert all(error.endswith("stub failure 2 (HTTP 500) for key Bearer [API key]") or
               error.endswith("stub failure 4 (HTTP 500) for key Bearer [API key]") for error in progress.errors)
    assert KEY not in " ".join(progress.errors)
    store.close()
    assert_no_key(tmp_path)


def test_the_app_binds_to_localhost_and_limits_uploads():
    config = tomllib.loads((REPO / ".streamlit" / "config.toml").read_text())
    assert config["server"]["address"] == "127.0.0.1"
    assert config["server"]["maxUploadSize"] == 50  # MB
    assert config["browser"]["serverAddress"] == "127.0.0.1"
    assert config["browser"]["gatherUsageStats"] is False
    # and Streamlit itself reads them so (a misspelt option would be ignored silently)
    probe = ("from streamlit import config; config.get_config_options(force_reparse=True); "
             "print(config.get_option('server.address'), config.get_option('server.maxUploadSize'))")
    result = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert result.stdout.split() == ["127.0.0.1", "50"], result.stderr


def test_a_short_key_is_masked_as_a_word_not_inside_the_message_s_words():
    """With the key "x" (a local server's), "Expecting property name" read "E[API key]pecting property name"."""
    judge = OpenAIJudge("stub-model", base_url="http://127.0.0.1:9/v1", api_key="x", mode="logprobs")
    assert judge._mask("Expecting property name: line 1 (Bearer x)") == \
        "Expecting property name: line 1 (Bearer [API key])"
    long = OpenAIJudge("stub-model", base_url="http://127.0.0.1:9/v1", api_key="sk-abc123", mode="logprobs")
    assert long._mask("for key Bearer sk-abc123, key=sk-abc123.") == "for key Bearer [API key], key=[API key]."
