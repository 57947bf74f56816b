"""A small OpenAI-compatible chat-completions server for tests and benchmarks.

It binds 127.0.0.1 on a free port, answers ``POST /v1/chat/completions`` (and ``GET
/v1/models``) with the JSON shape of the OpenAI API, and never reaches the internet.

    with OpenAIStub() as stub:                       # or: stub = OpenAIStub(); ...; stub.close()
        stub.configure("logprobs", distribution={1: 0.1, 2: 0.3, 3: 0.6})
        judge = OpenAIJudge("stub-model", base_url=stub.url, api_key="sk-test")
        ...
        stub.count, stub.requests[0]["body"], stub.max_in_flight

Behaviours (``stub.behaviour``, set with ``configure``):

- ``"logprobs"``: answers ``"Naturalness: 3\\nCoherence: 3"`` for the aspect names found in
  the prompt's evaluation form (lines like ``- Naturalness:``; ``stub.aspects`` overrides).
  When the request asks for logprobs, each score token carries ``top_logprobs`` built from
  ``distribution`` (or ``distributions[aspect name, lower case]``), plus a non-score token
  holding ``other`` of the mass, so the expected weighted mean is exactly computable. The
  answered score is the distribution's most likely one. With ``hashed=True`` the weights of
  the distribution's scores come from a hash of the aspect and the prompt: scores that vary
  from item to item, the same for the same prompt (so correlations are defined).
- ``"no-logprobs"``: content only, never logprobs. Each of the ``n`` choices answers the next
  score of ``cycle`` (a list of scores, default: ``distribution`` spread over 20 answers), so
  20 samples have known frequencies; with ``ignore_n=True`` one choice per request.
- ``"text"``: every choice answers ``text`` (garbage, an out-of-scale score, ``""``), with
  token logprobs of probability 1 when they are asked for.
- ``"invalid-json"``: a 200 whose body is not JSON.

In "logprobs" answers, ``label`` is the text before each score (default ``"{aspect}: "``; e.g.
``"- {aspect} (1-3): "`` puts a scale before the score), ``variants`` the spellings of each
score among the alternatives (e.g. ``(" {score}", "{score}\\n")``: the mass split between them),
and ``top_logprobs=False`` sends every token with an empty ``top_logprobs`` list. ``labels`` writes score k as
``labels[k]`` instead of its digit (a pairwise judge's ``("A", "B", "tie")``), in every behaviour that answers scores.

Random faults: with ``fault_rate`` (e.g. 0.05) each request gets, with that probability, one of
``FAULT_KINDS``: an HTTP 429 or 500 (Retry-After: 0), a timeout (no answer for ``fault_timeout``
seconds), a dropped connection, or a garbage answer (no score in it); seeded by ``fault_seed`` and the
request's number, counted in ``faults``. ``keep_requests=False`` keeps only the count (a soak of
many requests).

Orthogonal knobs: ``fail_first`` (K) requests answer ``fail_status`` (429, 500, 503 ...) with
``retry_after`` as the Retry-After header when set (``fail_first=None`` with a
``fail_status`` fails every request); ``delay`` seconds of sleep before answering (for
timeouts); ``reset_first`` (K) requests get their connection reset with no answer at all
(``None``: every request), before any ``fail_status``; ``echo_key=True`` puts the request's
Authorization header into error messages, as a careless server might.

The Files and Batch APIs (``POST /v1/files``, ``GET /v1/files/ID[/content]``, ``POST
/v1/batches``, ``GET /v1/batches/ID``) answer each line of a batch with ``completion``; see
``configure_batches`` for polls, failed lines and the final status.

Every chat-completion request is recorded in ``requests`` (path, lower-case headers, parsed body, time) with ``count``;
``max_in_flight`` is the most requests handled at the same time.

Run it by hand (e.g. for bench/): ``python stubs/openai_stub.py --port 8000 --behaviour logprobs``.
"""

from __future__ import annotations

import argparse
import email.parser
import hashlib
import email.policy
import gc
import json
import math
import random
import re
import socket
import struct
import threading
import time
from collections.abc import Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

__all__ = ["DEFAULT_DISTRIBUTION", "OpenAIStub", "form_aspects", "tokenize"]

DEFAULT_DISTRIBUTION: dict[int, float] = {1: 0.1, 2: 0.3, 3: 0.6}
BEHAVIOURS = ("logprobs", "no-logprobs", "text", "invalid-json")
FAULT_KINDS = ("429", "500", "timeout", "reset", "garbage")
GARBAGE = "I would rather not put a number on this response."
FORM_LINE = re.compile(r"^\s*-\s*([A-Za-z][A-Za-z ]{0,40}?)\s*:\s*$", re.MULTILINE)
TOKEN = re.compile(r"\d|[A-Za-z]+|\s+|[^\w\s]")


def form_aspects(prompt: str) -> list[str]:
    """Aspect names of the evaluation form at the end of a prompt ('- Naturalness:' lines)."""
    return list(dict.fromkeys(FORM_LINE.findall(prompt)))


def tokenize(text: str) -> list[str]:
    """A crude tokenizer: single digits, words, runs of spaces, single punctuation marks."""
    return TOKEN.findall(text)


def approx_tokens(text: str) -> int:
    """Tokens as characters / 4, rounded up (geval.judges.base.approx_tokens)."""
    return (len(text) + 3) // 4


def _logprob(token: str, logprob: float) -> dict:
    return {"token": token, "logprob": logprob, "bytes": list(token.encode("utf-8"))}


class OpenAIStub:
    """An OpenAI-compatible server on 127.0.0.1 with scripted behaviours (see the module doc)."""

    def __init__(self, port: int = 0):
        self._lock = threading.Lock()
        self.configure()
        stub = self

        class Handler(_Handler):
            owner = stub

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.server.daemon_threads = True
        self._thread = threading.Thread(target=self.server.serve_forever, name="openai-stub", daemon=True)
        self._thread.start()

    # --- configuration ------------------------------------------------------------------
    def configure(
        self,
        behaviour: str = "logprobs",
        *,
        distribution: dict[int, float] | None = None,
        distributions: dict[str, dict[int, float]] | None = None,
        other: float = 0.0,
        aspects: list[str] | None = None,
        cycle: list[int] | None = None,
        ignore_n: bool = False,
        text: str = "",
        fail_first: int | None = 0,
        fail_status: int = 0,
        retry_after: str | None = None,
        delay: float = 0.0,
        model: str | None = None,
        reset_first: int | None = 0,
        echo_key: bool = False,
        label: str = "{aspect}: ",
        variants: tuple[str, ...] = ("{score}",),
        top_logprobs: bool = True,
        hashed: bool = False,
        labels: tuple[str, ...] | None = None,
        fault_rate: float = 0.0,
        fault_seed: int = 0,
        fault_timeout: float = 2.0,
        keep_requests: bool = True,
    ) -> "OpenAIStub":
        """Set a behaviour and its knobs, and forget every recorded request."""
        if behaviour not in BEHAVIOURS:
            raise ValueError(f"behaviour '{behaviour}' is unknown; use one of {', '.join(BEHAVIOURS)}")
        with self._lock:
            self.behaviour = behaviour
            self.distribution = dict(distribution or DEFAULT_DISTRIBUTION)
            self.distributions = {k.lower(): dict(v) for k, v in (distributions or {}).items()}
            self.other = other
            self.aspects = aspects
            self.cycle = list(cycle) if cycle else spread(self.distribution, 20)
            self.ignore_n = ignore_n
            self.text = text
            self.fail_first = fail_first
            self.fail_status = fail_status
            self.retry_after = retry_after
            self.delay = delay
            self.model = model
            self.reset_first = reset_first
            self.echo_key = echo_key
            self.label = label
            self.variants = tuple(variants)
            self.top_logprobs = top_logprobs
            self.hashed = hashed
            self.labels = tuple(labels) if labels else None
            self.fault_rate, self.fault_timeout, self.keep_requests = fault_rate, fault_timeout, keep_requests
            self.fault_seed = fault_seed
            self.faults = {kind: 0 for kind in FAULT_KINDS}
            self.requests: list[dict] = []
            self.seen = 0
            self.generation = getattr(self, "generation", 0) + 1  # requests of an older configuration go unanswered
            self.sampled = 0  # answers given so far in no-logprobs mode (position in `cycle`)
            self.in_flight = 0
            self.max_in_flight = 0
        return self

    reset = configure

    @property
    def url(self) -> str:
        """The base_url to give an OpenAI client: http://127.0.0.1:PORT/v1."""
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    @property
    def count(self) -> int:
        """How many chat-completion requests came (failed ones included)."""
        return self.seen

    def bodies(self) -> list[dict]:
        """The JSON body of every request, in order."""
        return [r["body"] for r in self.requests]

    def close(self) -> None:
        """Stop serving and free the port."""
        self.server.shutdown()
        self.server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> "OpenAIStub":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # --- answering ---------------------------------------------------------------------
    def distribution_for(self, aspect: str, prompt: str = "") -> dict[int, float]:
        """The score distribution served for `aspect` (with `hashed`: its scores weighted by a hash
        of the aspect and `prompt`, so that answers vary from item to item, reproducibly)."""
        dist = self.distributions.get(aspect.lower(), self.distribution)
        if not self.hashed:
            return dist
        digest = hashlib.sha256(f"{aspect.lower()}\n{prompt}".encode()).digest()
        weights = {s: 1 + digest[i] for i, s in enumerate(sorted(dist))}
        return {s: w / sum(weights.values()) for s, w in weights.items()}

    def _record(self, path: str, headers: dict, body: object) -> tuple[int, int]:
        """Keep a request; returns its number (1-based) and the configuration generation."""
        with self._lock:
            if self.keep_requests:
                self.requests.append({"path": path, "headers": headers, "body": body, "time": time.monotonic()})
            self.seen += 1
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            return self.seen, self.generation

    def _random_fault(self, number: int) -> str | None:
        """The fault request `number` gets, drawn with probability `fault_rate` (seeded by the number,
        so a run is reproducible), counted in `faults`."""
        if not self.fault_rate:
            return None
        draw = random.Random(f"{self.fault_seed}:{number}")
        if draw.random() >= self.fault_rate:
            return None
        kind = draw.choice(FAULT_KINDS)
        with self._lock:
            self.faults[kind] += 1
        return kind

    def _done(self, generation: int) -> None:
        with self._lock:
            if generation == self.generation:
                self.in_flight = max(0, self.in_flight - 1)

    def _failure(self, number: int) -> tuple[int, dict] | None:
        """(status, headers) when request `number` (1-based) is to fail."""
        if not self.fail_status:
            return None
        if self.fail_first is not None and number > self.fail_first:
            return None
        headers = {"Retry-After": self.retry_after} if self.retry_after is not None else {}
        return self.fail_status, headers

    def _resets(self, number: int) -> bool:
        """True when request `number` (1-based) is to get its connection reset."""
        return self.reset_first is None or number <= self.reset_first

    def _written(self, score: int) -> str:
        """How score `score` is written: its label (``labels``), else its digit."""
        return self.labels[score] if self.labels else str(score)

    def _aspects(self, prompt: str) -> list[str]:
        return self.aspects or form_aspects(prompt) or ["Score"]

    def _score_choice(self, aspects: list[str], logprobs: bool, top_n: int,
                      prompt: str = "") -> tuple[str, list[dict] | None]:
        """The greedy answer: each aspect's most likely score, with top_logprobs at the score."""
        lines, content = [], []
        for index, aspect in enumerate(aspects):
            dist = self.distribution_for(aspect, prompt)
            best = max(dist, key=dist.get)
            prefix = ("\n" if index else "") + self.label.format(aspect=aspect)
            lines.append(prefix + self._written(best))
            for token in tokenize(prefix):
                content.append({**_logprob(token, 0.0), "top_logprobs": [_logprob(token, 0.0)] if self.top_logprobs else []})
            share = (1.0 - self.other) / len(self.variants)  # each score's mass split over its spellings
            alternatives = [_logprob(variant.format(score=self._written(s)), math.log(p * share))
                            for s, p in dist.items() if p > 0 for variant in self.variants]
            if self.other > 0:
                alternatives.append(_logprob(" ", math.log(self.other)))
            alternatives.sort(key=lambda a: -a["logprob"])
            chosen = _logprob(self._written(best), math.log(dist[best] * share))
            content.append({**chosen, "top_logprobs": alternatives[:top_n] if self.top_logprobs else []})
        return "".join(lines), (content if logprobs else None)

    def _text_choice(self, text: str, logprobs: bool) -> tuple[str, list[dict] | None]:
        if not logprobs:
            return text, None
        return text, [{**_logprob(t, 0.0), "top_logprobs": [_logprob(t, 0.0)]} for t in tokenize(text)]

    def _sample_text(self, aspects: list[str]) -> str:
        with self._lock:
            score = self.cycle[self.sampled % len(self.cycle)]
            self.sampled += 1
        return "\n".join(f"{aspect}: {self._written(score)}" for aspect in aspects)

    def completion(self, body: dict, garbage: str | None = None) -> dict:
        """The chat-completion object answering `body` under the current behaviour (every choice
        answering `garbage` instead, when given)."""
        messages = body.get("messages") or []
        prompt = "\n".join(str(m.get("content", "")) for m in messages if isinstance(m, dict))
        n = 1 if self.ignore_n else max(1, int(body.get("n") or 1))
        wants_logprobs = bool(body.get("logprobs"))
        top_n = int(body.get("top_logprobs") or 1)
        aspects = self._aspects(prompt)
        choices = []
        for index in range(n):
            if garbage is not None:
                text, content = self._text_choice(garbage, wants_logprobs)
            elif self.behaviour == "logprobs":
                text, content = self._score_choice(aspects, wants_logprobs, top_n, prompt)
            elif self.behaviour == "no-logprobs":
                text, content = self._sample_text(aspects), None
            else:
                text, content = self._text_choice(self.text, wants_logprobs)
            choices.append({
                "index": index,
                "message": {"role": "assistant", "content": text, "refusal": None},
                "logprobs": {"content": content, "refusal": None} if content is not None else None,
                "finish_reason": "stop",
            })
        # usage counted as geval estimates it before a call (characters / 4, rounded up), so that a
        # plan's estimate can be checked against what a run reports; the prompt once per request
        completion_tokens = sum(approx_tokens(c["message"]["content"]) for c in choices)
        prompt_tokens = approx_tokens(prompt)
        return {
            "id": f"chatcmpl-stub-{self.count}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": self.model or body.get("model", "stub"),
            "system_fingerprint": "fp_stub",
            "choices": choices,
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }


    # --- the Files and Batch APIs -------------------------------------------------------
    # Enough for the openai SDK's files.create / files.content / batches.create /
    # batches.retrieve. A batch's lines are answered by `completion` (the current behaviour)
    # when it is created; it reads "in_progress" for `batch_polls` retrieves, then
    # `batch_final` with its output file (and an error file for the first `batch_errors` lines).
    batch_polls = 1
    batch_errors = 0
    batch_final = "completed"

    def configure_batches(self, polls: int = 1, errors: int = 0, final: str = "completed") -> "OpenAIStub":
        """How the next batches behave (see above)."""
        with self._lock:
            self.batch_polls, self.batch_errors, self.batch_final = polls, errors, final
        return self

    @property
    def files(self) -> dict[str, dict]:
        """Uploaded and produced files: id -> {"bytes", "filename", "purpose"}."""
        return self.__dict__.setdefault("_files", {})

    @property
    def batches(self) -> dict[str, dict]:
        """Batches: id -> the Batch object served (plus its answered "_polls")."""
        return self.__dict__.setdefault("_batches", {})

    def _new_file(self, data: bytes, filename: str, purpose: str) -> dict:
        with self._lock:
            file_id = f"file-stub-{len(self.files) + 1}"
            self.files[file_id] = {"bytes": data, "filename": filename, "purpose": purpose}
        return _file_object(file_id, self.files[file_id])

    def _new_batch(self, body: dict) -> dict:
        source = self.files.get(body.get("input_file_id", ""))
        if source is None:
            return {}
        collecting = gc.isenabled()
        gc.disable()  # the answers die by reference count; a collection would walk every object of the process
        try:
            output, errors = self._answer_lines(source["bytes"])
        finally:
            if collecting:
                gc.enable()
        jsonl = lambda rows: "".join(json.dumps(r) + "\n" for r in rows).encode()  # noqa: E731
        output_id = self._new_file(jsonl(output), "output.jsonl", "batch_output")["id"] if output else None
        error_id = self._new_file(jsonl(errors), "errors.jsonl", "batch_output")["id"] if errors else None
        with self._lock:
            batch_id = f"batch_stub_{len(self.batches) + 1}"
            self.batches[batch_id] = {
                "id": batch_id, "object": "batch", "endpoint": body.get("endpoint"), "errors": None,
                "input_file_id": body["input_file_id"], "completion_window": body.get("completion_window"),
                "status": "validating", "output_file_id": None, "error_file_id": None,
                "created_at": int(time.time()), "metadata": body.get("metadata"),
                "request_counts": {"total": len(output) + len(errors), "completed": 0, "failed": 0},
                "_polls": 0, "_result": (output_id, error_id, len(output), len(errors)),
            }
        return self._batch_view(batch_id)

    def _answer_lines(self, data: bytes) -> tuple[list[dict], list[dict]]:
        """A batch input file's answer lines: (the output file's, the error file's)."""
        output, errors = [], []
        for number, line in enumerate(data.decode("utf-8").splitlines()):
            if not line.strip():
                continue
            request = json.loads(line)
            if number < self.batch_errors:
                answer = {"status_code": 500, "request_id": f"req-{number}",
                          "body": {"error": {"message": f"stub batch failure {number + 1}", "type": "server_error"}}}
                errors.append({"id": f"batch_req_{number}", "custom_id": request["custom_id"], "response": answer,
                               "error": None})
            else:
                answer = {"status_code": 200, "request_id": f"req-{number}", "body": self.completion(request["body"])}
                output.append({"id": f"batch_req_{number}", "custom_id": request["custom_id"], "response": answer,
                               "error": None})
        return output, errors

    def _poll_batch(self, batch_id: str) -> dict:
        with self._lock:
            batch = self.batches[batch_id]
            batch["_polls"] += 1
            if batch["_polls"] > self.batch_polls:
                output_id, error_id, completed, failed = batch["_result"]
                batch.update(status=self.batch_final, output_file_id=output_id, error_file_id=error_id,
                             request_counts={"total": completed + failed, "completed": completed, "failed": failed})
            else:
                batch["status"] = "in_progress"
        return self._batch_view(batch_id)

    def _batch_view(self, batch_id: str) -> dict:
        return {k: v for k, v in self.batches[batch_id].items() if not k.startswith("_")}

    def _batch_api(self, handler: "_Handler", method: str, raw: bytes) -> bool:
        """Answer a /files or /batches request; False for any other path."""
        path = handler.path.split("?")[0].rstrip("/")
        parts = path.split("/")
        if "files" in parts:
            rest = parts[parts.index("files") + 1:]
            if method == "POST" and not rest:
                fields = _multipart(handler.headers.get("Content-Type", ""), raw)
                data, filename = fields.get("file", (b"", "upload.jsonl"))
                handler._send(200, json.dumps(self._new_file(data, filename, fields.get("purpose", (b"",))[0]
                                                             .decode())).encode())
            elif method == "GET" and rest and rest[0] in self.files:
                if rest[1:] == ["content"]:
                    handler._send(200, self.files[rest[0]]["bytes"], content_type="application/octet-stream")
                else:
                    handler._send(200, json.dumps(_file_object(rest[0], self.files[rest[0]])).encode())
            else:
                handler._error(404, f"no file route {method} {handler.path}")
            return True
        if "batches" in parts:
            rest = parts[parts.index("batches") + 1:]
            if method == "POST" and not rest:
                batch = self._new_batch(json.loads(raw or b"{}"))
                if batch:
                    handler._send(200, json.dumps(batch).encode())
                else:
                    handler._error(400, "input_file_id is not an uploaded file")
            elif method == "GET" and len(rest) == 1 and rest[0] in self.batches:
                handler._send(200, json.dumps(self._poll_batch(rest[0])).encode())
            else:
                handler._error(404, f"no batch route {method} {handler.path}")
            return True
        return False


def spread(distribution: dict[int, float], n: int) -> list[int]:
    """`n` scores whose frequencies follow `distribution` (largest remainders), interleaved."""
    total = sum(distribution.values())
    exact = {s: p / total * n for s, p in distribution.items()}
    counts = {s: int(v) for s, v in exact.items()}
    for s in sorted(exact, key=lambda s: exact[s] - counts[s], reverse=True)[: n - sum(counts.values())]:
        counts[s] += 1
    pool = [s for s, c in counts.items() for _ in range(c)]
    return pool[::2] + pool[1::2]


def _file_object(file_id: str, file: dict) -> dict:
    return {"id": file_id, "object": "file", "bytes": len(file["bytes"]), "created_at": int(time.time()),
            "filename": file["filename"], "purpose": file["purpose"], "status": "processed"}


def _multipart(content_type: str, raw: bytes) -> dict[str, tuple[bytes, str]]:
    """Form fields of a multipart/form-data body: name -> (bytes, filename)."""
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        f"Content-Type: {content_type}\r\n\r\n".encode() + raw)
    fields = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        fields[name] = (part.get_payload(decode=True) or b"", part.get_filename() or "")
    return fields


class _Handler(BaseHTTPRequestHandler):
    owner: OpenAIStub
    server_version = "openai-stub/1.0"

    def log_message(self, format: str, *args: object) -> None:  # keep test output quiet
        pass

    def _answered(self) -> None:
        """Count the chat request in hand out of `in_flight` (once), before its answer leaves: a client that has it
        may send its next request at once, which the stub would otherwise count beside this one (9 of a limit of 8)."""
        generation, self._in_hand = getattr(self, "_in_hand", None), None
        if generation is not None:
            self.owner._done(generation)

    def _send(self, status: int, payload: bytes, headers: dict | None = None,
              content_type: str = "application/json") -> None:
        self._answered()
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(payload)))
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (a timeout test)
            pass

    def _error(self, status: int, message: str, headers: dict | None = None) -> None:
        kind = {429: "rate_limit_exceeded", 401: "invalid_api_key", 404: "not_found"}.get(status, "server_error")
        body = {"error": {"message": message, "type": kind, "param": None, "code": kind}}
        self._send(status, json.dumps(body).encode(), headers)

    def _reset(self) -> None:
        """Drop the connection with a TCP reset (SO_LINGER 0), sending no answer."""
        self._answered()
        self.close_connection = True
        try:
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            socket.close(self.connection.detach())
        except OSError:
            pass

    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        if self.owner._batch_api(self, "GET", b""):
            return
        if self.path.rstrip("/").endswith("/models"):
            model = self.owner.model or "stub-model"
            self._send(200, json.dumps({"object": "list", "data": [
                {"id": model, "object": "model", "created": 0, "owned_by": "stub"}]}).encode())
        else:
            self._error(404, f"no route {self.path}")

    def do_POST(self) -> None:  # noqa: N802
        stub = self.owner
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if stub._batch_api(self, "POST", raw):
            return
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            body = {"_raw": raw.decode("utf-8", "replace")}
        if not self.path.split("?")[0].rstrip("/").endswith("/chat/completions"):
            self._error(404, f"no route {self.path}")
            return
        number, generation = stub._record(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
        self._in_hand = generation
        try:
            if stub.delay:
                time.sleep(stub.delay)
            failure = stub._failure(number)
            fault = stub._random_fault(number)
            if generation != stub.generation:  # the stub was reconfigured meanwhile (a timed-out request)
                self.close_connection = True
            elif fault == "timeout":  # longer than the client waits: it gives up and asks again
                time.sleep(stub.fault_timeout)
                self.close_connection = True
            elif fault == "reset":
                self._reset()
            elif fault in ("429", "500"):
                self._error(int(fault), f"stub fault {number} (HTTP {fault})", {"Retry-After": "0"})
            elif fault == "garbage":
                self._send(200, json.dumps(stub.completion(body, GARBAGE)).encode())
            elif stub._resets(number):
                self._reset()
            elif failure is not None:
                status, headers = failure
                echoed = f" for key {self.headers.get('Authorization', '')}" if stub.echo_key else ""
                self._error(status, f"stub failure {number} (HTTP {status}){echoed}", headers)
            elif stub.behaviour == "invalid-json":
                self._send(200, b"{this is not json", content_type="application/json")
            else:
                self._send(200, json.dumps(stub.completion(body)).encode())
        finally:
            self._answered()  # one that got no answer (a timeout, a reconfigured stub)


def main(argv: Iterable[str] | None = None) -> None:
    """Serve until interrupted: `python stubs/openai_stub.py --port 8000`."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--behaviour", default="logprobs", choices=BEHAVIOURS)
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--hashed", action="store_true", help="logprobs: scores that vary by prompt (1-3)")
    args = parser.parse_args(list(argv) if argv is not None else None)
    stub = OpenAIStub(args.port).configure(args.behaviour, delay=args.delay, hashed=args.hashed)
    print(f"serving {stub.url} ({args.behaviour}); Ctrl-C to stop", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        stub.close()


if __name__ == "__main__":
    main()
