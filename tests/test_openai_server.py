"""The openai judge against a real OpenAI-compatible server: llama-cpp-python's own
(`python -m llama_cpp.server`, tests/llama_server.py) serving the bundled GGUF on 127.0.0.1,
scored through the CLI. Marked `model` (run with `pytest -m model`).

The embedded judge prefills "Naturalness: " after the chat template and reads the next-token
logits; the server's logprobs condition the same way only if the model writes "Naturalness: "
itself. With the bundled form ("- Naturalness:") this model answers a bare digit, so these tests
use the bundled template with one change: its form asks for the line "Naturalness: <score>".
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from helpers import PROMPTS, REPO, SHORT_TC, short_topical_chat
from llama_server import LlamaServer, local_env

import geval
from geval.analysis.disagreement import distributions
from geval.analysis.variants import with_samples
from geval.judging.templates import load_template
from geval.judging.weights import ensure_weights

pytestmark = [pytest.mark.model, pytest.mark.timeout(600)]

MODEL = "qwen2.5-coder-1.5b-instruct-q4_k_m"
#: The shortest dialogue of the sample (~330 prompt tokens): the server computes the logits of
#: every prompt token (logprobs need `logits_all`), so long prompts cost it several times more.
GROUP = "ctx-008"
#: Largest |p_server(s) - p_embedded(s)| allowed: same weights and same tokens, but llama.cpp
#: evaluates them in other batch shapes (the server decodes the label one token at a time), so
#: the logits differ slightly; measured up to 0.017 on 18 items of 3 dialogues. With the bundled
#: form (a bare digit, no label) the two differ by 0.05 to 0.28 on the same items.
TOLERANCE = 0.03
BUNDLED_FORM = "Evaluation Form (scores ONLY):\n\n- Naturalness:\n"
LABELLED_FORM = "Evaluation Form (scores ONLY). Answer with exactly one line in this form:\n\nNaturalness: <score>\n"


def cli(*args: str) -> subprocess.CompletedProcess:
    """`python -m geval ARGS` with no proxy and no OpenAI key in its environment."""
    env = local_env()
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "-m", "geval", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=300, check=False)


def counts(output: str) -> tuple[int, int, int, int]:
    """(items, cached, judge calls, failed) from the line `score` prints at the end."""
    found = re.search(r"(\d+) items, (\d+) cached, (\d+) judge calls, (\d+) failed", output)
    assert found, output
    return tuple(int(n) for n in found.groups())


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """The bundled GGUF behind llama_cpp.server, started once for this file."""
    log = tmp_path_factory.mktemp("llama-server") / "server.log"
    with LlamaServer(ensure_weights(), log=log, alias=MODEL) as running:
        yield running


@pytest.fixture(scope="module")
def labelled(tmp_path_factory):
    """prompts/topicalchat-naturalness.txt whose form asks for "Naturalness: <score>"."""
    text = (PROMPTS / "topicalchat-naturalness.txt").read_text(encoding="utf-8")
    assert text.count(BUNDLED_FORM) == 1, "the bundled template's form changed; update BUNDLED_FORM"
    text = text.replace(BUNDLED_FORM, LABELLED_FORM).replace(
        'name = "topicalchat-naturalness"', 'name = "topicalchat-naturalness-labelled"')
    path = tmp_path_factory.mktemp("templates") / "topicalchat-naturalness-labelled.txt"
    path.write_text(text, encoding="utf-8")
    return path


def score(server, template, store, *options: str) -> subprocess.CompletedProcess:
    """`geval score` of the short Topical-Chat sample (written beside `store`) on the server."""
    done = cli("score", str(short_topical_chat(store.parent)), "-t", str(template), "--judge", "openai", "--base-url",
               server.url, "--model", MODEL, "--store", str(store), "--group", GROUP, *options)
    assert done.returncode == 0, done.stdout + done.stderr + server.log_tail()
    return done


def test_logprobs_match_the_embedded_judge_and_a_rerun_asks_nothing(server, labelled, tmp_path):
    store_path = tmp_path / "store.sqlite"
    before = server.requests()
    first = score(server, labelled, store_path, "--mode", "logprobs", "--limit", "3")
    assert counts(first.stdout) == (3, 0, 3, 0)
    assert server.requests() - before == 3  # one greedy answer with top_logprobs per item

    store = geval.Store(store_path)
    frame = store.judgments(SHORT_TC)
    assert len(frame) == 3 and set(frame["status"]) == {"ok"}, frame[["status", "reason"]]
    assert all(s.startswith(f"backend:openai|model:{MODEL}|base_url:{server.url}|") for s in frame["signature"])
    assert all("mode:logprobs" in s for s in frame["signature"])
    # The model wrote the label itself: its score token follows "Naturalness: ", as the
    # embedded judge's prefill does. Without that the two distributions are not comparable.
    assert all(re.fullmatch(r'\["Naturalness: [123]"\]', raw) for raw in frame["raw"]), list(frame["raw"])

    embedded = geval.make_judge("embedded")
    template = load_template(labelled)
    for prompt, served, mean in zip(frame["prompt"], distributions(frame), frame["score"]):
        assert set(served) == {1, 2, 3} and sum(served.values()) == pytest.approx(1.0, abs=1e-9)
        assert mean == pytest.approx(sum(s * p for s, p in served.items()), abs=1e-9)
        local = embedded.judge(prompt, list(template.aspects)).scores["naturalness"].distribution
        worst = max(abs(served[s] - local[s]) for s in (1, 2, 3))
        assert worst <= TOLERANCE, f"server {served} vs embedded {local}: differ by {worst:.4f}"
    store.close()

    again = score(server, labelled, store_path, "--mode", "logprobs", "--limit", "3")
    assert counts(again.stdout) == (3, 3, 0, 0)
    assert server.requests() - before == 3  # the rerun sent nothing


def test_samples_are_parsed_and_a_rerun_asks_nothing(server, labelled, tmp_path):
    store_path = tmp_path / "store.sqlite"
    before = server.requests()
    first = score(server, labelled, store_path, "--mode", "samples", "--n", "5", "--temperature", "1.0",
                  "--limit", "2")
    assert counts(first.stdout) == (2, 0, 2, 0)
    # llama_cpp.server ignores n (one choice per answer): the judge asked 5 times per item.
    # It samples with its own defaults besides the temperature (top_k 40, top_p 0.95, min_p 0.05),
    # which keep this form's label; its --seed makes the run repeat exactly.
    assert server.requests() - before == 2 * 5

    store = geval.Store(store_path)
    frame = with_samples(store, store.judgments(SHORT_TC))
    assert len(frame) == 2 and set(frame["status"]) == {"ok"}, frame[["status", "reason"]]
    assert all("mode:samples" in s and "n:5" in s and "temp:1.0" in s for s in frame["signature"])
    for samples, distribution, mean in zip(frame["samples"], distributions(frame), frame["score"]):
        assert len(samples) == 5 and set(samples) <= {1, 2, 3}
        assert distribution == pytest.approx({s: samples.count(s) / 5 for s in set(samples)}, abs=1e-9)
        assert mean == pytest.approx(sum(samples) / 5, abs=1e-9)
    store.close()

    again = score(server, labelled, store_path, "--mode", "samples", "--n", "5", "--temperature", "1.0",
                  "--limit", "2")
    assert counts(again.stdout) == (2, 2, 0, 0)
    assert server.requests() - before == 2 * 5  # the rerun sent nothing
