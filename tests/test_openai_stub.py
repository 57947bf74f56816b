"""tests/openai_stub.py itself: the JSON it serves, what it records, concurrency counting."""

from __future__ import annotations

import json
import math
import threading
import time
import urllib.error
import urllib.request

import pytest
from openai_stub import OpenAIStub, form_aspects, spread, tokenize


def post(stub: OpenAIStub, body: dict, timeout: float = 5) -> tuple[int, dict]:
    request = urllib.request.Request(f"{stub.url}/chat/completions", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json", "Authorization": "Bearer k"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, {"headers": dict(error.headers), **json.loads(error.read())}


PROMPT = {"model": "m", "messages": [{"role": "user", "content": "Rate it.\n\n- Naturalness:\n- Coherence:\n"}]}


def test_it_binds_localhost_only(stub):
    assert stub.server.server_address[0] == "127.0.0.1"
    assert stub.url.startswith("http://127.0.0.1:")


def test_logprobs_answer_has_the_openai_shape(stub):
    stub.configure("logprobs", distribution={1: 0.2, 2: 0.8})
    status, answer = post(stub, {**PROMPT, "logprobs": True, "top_logprobs": 5})
    assert status == 200
    assert answer["object"] == "chat.completion" and answer["model"] == "m"
    assert {"id", "created", "usage", "choices"} <= answer.keys()
    choice = answer["choices"][0]
    assert choice["finish_reason"] == "stop"
    assert choice["message"] == {"role": "assistant", "content": "Naturalness: 2\nCoherence: 2", "refusal": None}
    positions = choice["logprobs"]["content"]
    assert "".join(p["token"] for p in positions) == choice["message"]["content"]
    assert all(p["bytes"] == list(p["token"].encode()) for p in positions)
    scores = [p for p in positions if p["token"].isdigit()]
    assert len(scores) == 2
    assert {a["token"]: round(math.exp(a["logprob"]), 12) for a in scores[0]["top_logprobs"]} == {"2": 0.8, "1": 0.2}
    assert answer["usage"]["total_tokens"] == answer["usage"]["prompt_tokens"] + answer["usage"]["completion_tokens"]


def test_records_requests_and_lower_case_headers(stub):
    post(stub, PROMPT)
    post(stub, PROMPT)
    assert stub.count == 2
    assert stub.bodies() == [PROMPT, PROMPT]
    assert stub.requests[0]["headers"]["authorization"] == "Bearer k"
    stub.configure()
    assert stub.count == 0


def test_failures_for_the_first_k_requests_then_success(stub):
    stub.configure("logprobs", fail_first=1, fail_status=429, retry_after="2")
    status, answer = post(stub, PROMPT)
    assert status == 429 and answer["headers"]["Retry-After"] == "2"
    assert answer["error"]["type"] == "rate_limit_exceeded"
    assert post(stub, PROMPT)[0] == 200


def test_no_logprobs_samples_follow_the_cycle_and_n(stub):
    stub.configure("no-logprobs", cycle=[1, 2, 3])
    _, answer = post(stub, {**PROMPT, "n": 4, "logprobs": True})
    assert [c["message"]["content"].split()[1] for c in answer["choices"]] == ["1", "2", "3", "1"]
    assert all(c["logprobs"] is None for c in answer["choices"])
    stub.configure("no-logprobs", ignore_n=True)
    assert len(post(stub, {**PROMPT, "n": 4})[1]["choices"]) == 1


def test_invalid_json_body(stub):
    stub.configure("invalid-json")
    request = urllib.request.Request(f"{stub.url}/chat/completions", data=b"{}")
    with urllib.request.urlopen(request, timeout=5) as answer:
        with pytest.raises(json.JSONDecodeError):
            json.loads(answer.read())


def test_max_in_flight_counts_concurrent_requests(stub):
    stub.configure("logprobs", delay=0.3)
    threads = [threading.Thread(target=post, args=(stub, PROMPT)) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert stub.count == 4
    assert stub.max_in_flight == 4
    deadline = time.monotonic() + 5  # a handler counts itself out just after its answer is sent
    while stub.in_flight and time.monotonic() < deadline:
        time.sleep(0.01)
    assert stub.in_flight == 0


def test_models_route_and_unknown_routes(stub):
    with urllib.request.urlopen(f"{stub.url}/models", timeout=5) as answer:
        assert json.loads(answer.read())["data"][0]["id"] == "stub-model"
    assert post_to(stub, "/nope") == 404


def post_to(stub: OpenAIStub, path: str) -> int:
    try:
        urllib.request.urlopen(urllib.request.Request(stub.url + path, data=b"{}"), timeout=5)
    except urllib.error.HTTPError as error:
        return error.code
    return 200


def test_unknown_behaviour_is_refused(stub):
    with pytest.raises(ValueError, match="behaviour 'chatty' is unknown"):
        stub.configure("chatty")


@pytest.mark.parametrize("prompt, aspects", [
    ("Form:\n\n- Naturalness:\n- Maintains Context:\n", ["Naturalness", "Maintains Context"]),
    ("- Naturalness: 3\nno form here", []),
])
def test_form_aspects(prompt, aspects):
    assert form_aspects(prompt) == aspects


def test_spread_and_tokenize():
    assert sorted(spread({1: 0.1, 2: 0.3, 3: 0.6}, 20)) == [1] * 2 + [2] * 6 + [3] * 12
    assert tokenize("Naturalness: 3") == ["Naturalness", ":", " ", "3"]
