"""The OpenAI Batch API for large runs: write the JSONL, submit it, poll, import the answers.

    files = write_batch(store, items, template, judge, "tc_usr_data", folder)   # one run, its JSONL
    batch_id = submit_batch(store, judge, files)                               # upload + create
    wait_batch(judge, batch_id)                                                 # poll until it ends
    progress = import_batch(store, judge, batch_id)                             # into the store

One line per judge call, `custom_id` = the call's cache key, the body exactly what the live
judge sends first (`OpenAIJudge.batch_body`). Answers are read by the live judge's own
parsers, so an imported judgment is the same row, cache entry and signature as a live one,
and items already cached are never written into a batch. Answers are committed IMPORT_CHUNK
at a time (a stop or an error commits those read so far; a killed process loses at most the
last chunk): importing again (after a crash, or to be sure) skips the keys already stored.
Where a batch stands is kept in the store's batches table (its file, run, id and item ids;
the run stays "submitted" until every batch is imported), so `import_batch` needs only the
batch id.

A results file made elsewhere in the same format (vLLM's `run_batch`) is imported with
`output=PATH`; `write_batch` alone gives its input file.
"""

from __future__ import annotations

import json
import threading
import time
from itertools import islice
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from geval.errors import GevalError, JudgeError, JudgmentFailed, StoreError, TemplateError
from geval.judging.answers import scores_from_samples
from geval.judging.judgment import Judgment, accepted_settings, cache_key
from geval.judging.layouts import combine, parts
from geval.judging.templates import Template
from geval.processes import cycles_uncollected
from geval.scoring.lookup import Signer, by_group, cached_answers, neighbours
from geval.scoring.runner import Progress, collect, combined_rows, environment
from geval.scoring.steps import generate_steps
from geval.store import Store
from geval.store.records import failed_rows, judgment_rows
from geval.wording import counted

ENDPOINT = "/v1/chat/completions"
#: Batch API answers cost half the live price.
BATCH_DISCOUNT = 0.5
#: The Batch API takes at most 50,000 requests per file.
MAX_REQUESTS = 50_000
#: Items looked up in the cache at a time while writing a batch (and combined after an import).
CHUNK = 500
#: Answers imported per transaction: a kill loses at most these (the next import does them again).
IMPORT_CHUNK = 2_000
ENDED = ("completed", "failed", "expired", "cancelled")


__all__ = ["BatchError", "BatchFile", "BatchPlan", "batch_judge", "batch_status", "find_batch", "import_batch",
           "submit_batch", "wait_batch", "write_batch"]


class BatchError(GevalError):
    """A batch is unknown, not finished, or failed on the server."""


@dataclass
class BatchFile:
    """One JSONL file of requests and the items whose judgments it will bring."""

    path: Path
    run_id: int
    requests: int
    item_ids: list[str]
    batch_id: str = ""  # "local-RUN-N" until submitted
    input_file_id: str = ""


@dataclass
class BatchPlan:
    """What `write_batch` did: files to submit, items served from the cache or failing at once."""

    run_id: int
    files: list[BatchFile] = field(default_factory=list)
    cached: int = 0
    failed: int = 0

    def line(self) -> str:
        """One line for the CLI."""
        requests = sum(f.requests for f in self.files)
        return (f"{requests} requests in {len(self.files)} batch file(s), {counted(self.cached, 'item')} already "
                "cached, "
                f"{self.failed} cannot be rendered; run {self.run_id}")


def write_batch(store: Store, items, template: Template, judge, dataset: str, folder: str | Path,
                settings_given: dict | None = None, max_requests: int = MAX_REQUESTS) -> BatchPlan:
    """Write Batch API files for the `items` not in the cache, and record the run.

    Cached items get their judgment rows at once, as in a live run; items that cannot be
    rendered are stored as failed. Identical prompts become one request. The run stays
    "submitted" until every file is imported. The items are looked up `CHUNK` at a time and each
    request is written to its file as it is made (a million fit in little memory).
    """
    if not hasattr(judge, "batch_body"):
        raise JudgeError(f"batch scoring needs the openai judge, not '{judge.settings.get('backend')}'; "
                         "use --judge openai")
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    store.save_template(template)
    aspects = list(template.aspects)
    sign = Signer(template)
    sig_text, sig_json = sign(judge.settings)
    progress = Progress(total=len(items), template=template.label, signature=sig_text)
    progress.run_id = store.start_run(
        dataset=dataset, template=template.label, signature=sig_text, signature_json=sig_json,
        settings_given=json.dumps({**(settings_given or {}), "batch": True}), environment=json.dumps(environment()),
        n_items=len(items),
    )
    plan = BatchPlan(progress.run_id)
    asked = accepted_settings(judge)[0]  # the requests ask as the judge's next call would
    answered_as = sign(asked)
    try:
        steps = generate_steps(store, template, judge)
        around = neighbours(store, template, dataset, items)
        ordered = by_group(items)
        with _RequestFiles(plan, folder, template, max_requests) as requests, cycles_uncollected():
            for start in range(0, len(ordered), CHUNK):
                rows, rendered = [], []  # rows to store now; (item, base, calls) of the chunk's items
                for item in ordered[start:start + CHUNK]:
                    base = _base(item, template, progress.run_id)
                    try:
                        rendered.append((item, base, template.calls(item, steps, around)))
                    except TemplateError as exc:
                        rows += _fail(base, [a.key for a in aspects], str(exc), answered_as, progress)
                hits = iter(cached_answers(store, judge, [call for _, _, calls in rendered for call in calls]))
                for item, base, calls in rendered:
                    found = [next(hits) for _ in calls]
                    for call, hit in zip(calls, found):
                        if hit is None:
                            requests.add(item.id, cache_key(asked, call.prompt, list(call.aspects)), call, judge)
                        else:
                            key, cached = hit
                            rows += judgment_rows(base, key, cached, sign(cached.settings), call.keep, call.detail)
                    if all(hit is not None for hit in found):
                        rows += _combined(template, base, calls, found, answered_as)
                        progress.cached += 1
                        progress.done += 1
                store.save_judgments(rows)
        plan.cached, plan.failed = progress.cached, progress.failed
        for entry in plan.files:
            _record(store, entry)
    except BaseException:
        store.finish_run(progress.run_id, "crashed", progress.summary())
        raise
    store.finish_run(progress.run_id, "submitted" if plan.files else "finished", progress.summary())
    return plan


class _RequestFiles:
    """The plan's JSONL files, each request written as it comes, a new file every `max_requests`;
    a request asked again (the same cache key) is written once, each item noted in its file."""

    def __init__(self, plan: BatchPlan, folder: Path, template: Template, max_requests: int):
        self.plan, self.folder, self.name, self.max_requests = plan, folder, template.name, max_requests
        self.where: dict[str, BatchFile] = {}  # cache key -> the file its request is in
        self.out = None  # the file being written

    def add(self, item_id: str, key: str, call, judge) -> None:
        """Note that `item_id` waits for the answer to `key`, written the first time it comes."""
        if key not in self.where:
            if self.out is None or self.plan.files[-1].requests >= self.max_requests:
                self._next_file()
            body = judge.batch_body(call.prompt, list(call.aspects))
            self.out.write(json.dumps({"custom_id": key, "method": "POST", "url": ENDPOINT, "body": body},
                                      ensure_ascii=False) + "\n")
            self.plan.files[-1].requests += 1
            self.where[key] = self.plan.files[-1]
        self.where[key].item_ids.append(item_id)

    def _next_file(self) -> None:
        if self.out is not None:
            self.out.close()
        number, run_id = len(self.plan.files) + 1, self.plan.run_id
        path = self.folder / f"run{run_id}-{self.name}-{number}.jsonl"
        self.plan.files.append(BatchFile(path, run_id, 0, [], f"local-{run_id}-{number}"))
        self.out = path.open("w", encoding="utf-8")

    def __enter__(self) -> "_RequestFiles":
        return self

    def __exit__(self, *exc) -> None:
        if self.out is not None:
            self.out.close()


def submit_batch(store: Store, judge, plan: BatchPlan, completion_window: str = "24h") -> list[str]:
    """Upload each file of `plan` (purpose "batch") and create its batch; returns the batch ids."""
    client = _client(judge)
    ids = []
    for entry in plan.files:
        with entry.path.open("rb") as handle:
            uploaded = _api(lambda: client.files.create(file=handle, purpose="batch"), "upload the batch file")
        batch = _api(lambda: client.batches.create(
            input_file_id=uploaded.id, endpoint=ENDPOINT, completion_window=completion_window,
            metadata={"geval_run": str(plan.run_id), "geval_file": entry.path.name},
        ), "create the batch")
        entry.batch_id, entry.input_file_id = batch.id, uploaded.id
        ids.append(batch.id)
        _record(store, entry)
    return ids


def batch_status(judge, batch_id: str):
    """The server's Batch object."""
    client = _client(judge)
    return _api(lambda: client.batches.retrieve(batch_id), f"look up batch {batch_id}")


def wait_batch(judge, batch_id: str, interval: float = 30.0, timeout: float | None = None,
               stop: threading.Event | None = None, on_status: Callable | None = None):
    """Poll until the batch has ended (completed, failed, expired, cancelled); returns it."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        batch = batch_status(judge, batch_id)
        if on_status:
            on_status(batch)
        if batch.status in ENDED:
            return batch
        if deadline is not None and time.monotonic() >= deadline:
            raise BatchError(f"batch {batch_id} is still {batch.status} after {timeout:.0f}s; import it later")
        if stop is not None:
            if stop.wait(interval):
                return batch
        else:
            time.sleep(interval)


def import_batch(store: Store, judge, batch_id: str, output: str | Path | None = None,
                 folder: str | Path | None = None, items=None,
                 on_progress: Callable[[Progress], None] | None = None) -> Progress:
    """Import a finished batch's answers into the store; keys already stored are skipped.

    The batch's items are read from the store (the CLI stores its datasets) unless given as
    `items`. The answers are downloaded once into `folder` (default: beside the batch's
    JSONL) and read from there; `output` names a results file to read instead (nothing is
    downloaded). Failed requests are stored as failed judgments with the server's reason
    (a live run retries them). Returns the progress over the batch's items.
    """
    run, entry = find_batch(store, batch_id)
    settings = {k: v for k, v in json.loads(run["signature_json"]).items()
                if k not in ("template", "scale", "agg", "version") and v is not None}
    if {k: v for k, v in judge.settings.items() if v is not None} != settings:
        raise JudgeError(f"batch {batch_id} was written for judge settings {settings}, not {judge.settings}; "
                         "use the judge the batch was made with")
    template = store.template(run["template"].rpartition("@")[2])
    sign = Signer(template)
    steps = store.steps(template, judge.settings) if template.needs_generated_steps else None
    if template.needs_generated_steps and steps is None:
        raise StoreError(f"the evaluation steps of {template.label} are missing from {store.path}")
    wanted: dict[str, list] = {}  # key -> [(item, call)]
    ids = set(entry["items"])
    stored = store.items(run["dataset"]) if items is None else items
    items = [item for item in stored if item.id in ids]
    if len({item.id for item in items}) < len(ids):
        raise StoreError(f"{len(ids) - len({item.id for item in items})} of the {len(ids)} items of batch {batch_id} "
                         f"are not in {store.path}; store dataset {run['dataset']} first, or pass its items")
    around = neighbours(store, template, run["dataset"], stored)
    calls_of = {item.id: template.calls(item, steps, around) for item in items}
    asked = accepted_settings(judge)[0]
    failed_as = sign(asked)
    for item in items:
        for call in calls_of[item.id]:
            wanted.setdefault(cache_key(asked, call.prompt, list(call.aspects)), []).append((item, call))
    path = Path(output) if output else _download(judge, batch_id, entry, folder)
    # one unit of progress per (item, request): an item of a per-aspect template makes several requests
    progress = Progress(total=sum(map(len, wanted.values())), template=template.label, signature=run["signature"],
                        run_id=int(run["id"]))
    seen = set()
    answers, rows = [], []  # read and not yet committed: save_calls' calls, and judgment rows

    def commit() -> None:
        taken, taken_rows = answers[:], rows[:]
        answers.clear()
        rows.clear()
        if taken or taken_rows:
            store.save_calls(taken, taken_rows)

    try:
        with path.open(encoding="utf-8") as lines, cycles_uncollected():
            for records in _chunks(_answer_lines(lines, wanted, seen), IMPORT_CHUNK):
                imported_before = store.cached_calls([key for key, _ in records])
                for key, record in records:
                    if key in imported_before:
                        progress.done += len(wanted[key])
                        progress.cached += len(wanted[key])
                        continue
                    asked_call = wanted[key][0][1]
                    try:
                        judgment = _judgment(judge, record, list(asked_call.aspects))
                    except JudgmentFailed as exc:
                        for item, call in wanted[key]:
                            rows.extend(_fail(_base(item, template, progress.run_id), [s for _, s in call.keep],
                                              f"item {item.id}: {exc}", failed_as, progress))
                        continue
                    settings = judgment.settings or judge.settings
                    signed = sign(settings)
                    rows.extend(row for item, call in wanted[key]
                                for row in judgment_rows(_base(item, template, progress.run_id), key, judgment, signed,
                                                         call.keep, call.detail))
                    answers.append((key, settings, asked_call.prompt, [a.key for a in asked_call.aspects], judgment,
                                    0.0))
                    progress.done += len(wanted[key])
                    progress.prompt_tokens += judgment.prompt_tokens
                    progress.completion_tokens += judgment.completion_tokens
                    progress.cost += judgment.cost
                    progress.note_unread(len(wanted[key]) * [s.reason for s in judgment.scores.values()
                                                             if s.score is None])
                    if on_progress:
                        on_progress(progress)
                commit()
    except BaseException:
        commit()  # a stop (Ctrl-C, an error) keeps the answers read so far; a kill loses at most IMPORT_CHUNK
        raise
    if parts(template):  # checklists and batches: the scores made of several answers, once all are in
        for start in range(0, len(items), CHUNK):
            chunk = items[start:start + CHUNK]
            hits = iter(cached_answers(store, judge, [call for item in chunk for call in calls_of[item.id]]))
            combined = []
            for item in chunk:
                found = [next(hits) for _ in calls_of[item.id]]
                if all(hit is not None for hit in found):
                    combined += _combined(template, _base(item, template, progress.run_id), calls_of[item.id], found,
                                          failed_as)
            store.save_judgments(combined)
    missing = sum(len(pairs) for key, pairs in wanted.items() if key not in seen)
    if missing:
        progress.errors.append(f"{missing} items had no answer in {path}")
    store.save_batch(entry["file"], entry["run_id"], batch_id, entry["input_file_id"], entry["requests"],
                     entry["items"], imported=not missing)
    imported = all(b["imported"] for b in store.batches(entry["run_id"]))
    store.finish_run(entry["run_id"], "finished" if imported else "submitted")  # finished once all are imported
    return progress


def find_batch(store: Store, batch_id: str) -> tuple[dict, dict]:
    """The run that wrote `batch_id`, and the batch's record."""
    entry = store.find_batch(batch_id)
    if entry is None:
        raise BatchError(f"no batch {batch_id} in {store.path}; use the store it was submitted from (--store)")
    return store.run(entry["run_id"]), entry


def _judgment(judge, record: dict, aspects) -> Judgment:
    """One answer line, read by the live judge's parsers (logprobs, else samples)."""
    from openai.types.chat import ChatCompletion
    from pydantic import ValidationError

    if record.get("error"):
        error = record["error"]
        raise JudgmentFailed(f"the batch request failed: {error.get('message') or error}")
    response = record.get("response") or {}
    body = response.get("body") or {}
    if response.get("status_code") != 200:
        message = (body.get("error") or {}).get("message") if isinstance(body, dict) else None
        raise JudgmentFailed(f"HTTP {response.get('status_code')} in the batch: {message or body}")
    try:
        answer = ChatCompletion.model_validate(body)  # pydantic-core: several times faster than construct
    except ValidationError:
        answer = ChatCompletion.construct(**body)  # an answer off the schema, read as far as it goes
    if not isinstance(getattr(answer, "choices", None), list):
        raise JudgmentFailed("malformed answer in the batch (no 'choices' list)")
    if judge.mode != "samples":
        judgment = judge._from_logprobs(answer, aspects)
        if judgment is None:
            raise JudgmentFailed("the batch answer has no logprobs; score these items live, or batch with --mode samples")
    else:
        texts = [c.message.content or "" for c in answer.choices][: judge.n]
        if len(texts) < judge.n:
            raise JudgmentFailed(f"the batch answer has {len(texts)} of {judge.n} samples (the server ignores n); "
                                 "score these items live")
        tokens_in, tokens_out, cost = judge._usage([answer])
        judgment = Judgment(scores_from_samples(texts, aspects), texts, tokens_in, tokens_out, cost)
    judgment.cost *= BATCH_DISCOUNT
    return judgment


def _download(judge, batch_id: str, entry: dict, folder) -> Path:
    """The batch's results as a local file (downloaded once; errors appended)."""
    folder = Path(folder) if folder else Path(entry["file"]).parent
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{batch_id}.output.jsonl"
    if path.is_file():
        return path
    batch = batch_status(judge, batch_id)
    if batch.status not in ENDED:
        counts = batch.request_counts
        done = f" ({counts.completed + counts.failed}/{counts.total} answered)" if counts else ""
        raise BatchError(f"batch {batch_id} is {batch.status}{done}; import it when it has ended (or use --wait)")
    client = _client(judge)
    partial = folder / f"{batch_id}.output.jsonl.part"
    with partial.open("wb") as out:
        for file_id in (batch.output_file_id, batch.error_file_id):
            if file_id:
                data = _api(lambda: client.files.content(file_id), f"download {file_id}").content
                out.write(data if data.endswith(b"\n") or not data else data + b"\n")
    partial.replace(path)
    return path


def _base(item, template: Template, run_id: int) -> dict:
    return {"item_id": item.id, "dataset": item.dataset, "template": template.label,
            "template_version": template.version, "run_id": run_id}


def _answer_lines(lines, wanted: dict, seen: set) -> Iterator[tuple[str, dict]]:
    """(cache key, record) of each answer line for a key in `wanted`, the first time the key is
    met (noted in `seen`)."""
    for line in lines:
        if not line.strip():
            continue
        record = json.loads(line)
        key = record.get("custom_id")
        if key in wanted and key not in seen:
            seen.add(key)
            yield key, record


def _chunks(pairs: Iterator, size: int) -> Iterator[list]:
    """Lists of `size` of `pairs` (the last one shorter)."""
    while chunk := list(islice(pairs, size)):
        yield chunk


def _combined(template: Template, base: dict, calls, found, signed: tuple[str, str]) -> list[dict]:
    """The rows of an item's scores made of several answers (checklists, batches), all of them
    cached; none for forms."""
    answers, keys = {}, {}
    for call, (key, judgment) in zip(calls, found):
        collect(call, key, judgment, answers, keys)
    combined = combine(template, answers)
    return combined_rows(base, combined, keys, {}, signed) if combined else []


def _fail(base: dict, keys, reason: str, signed: tuple[str, str], progress: Progress) -> list[dict]:
    """An item's judgments under `keys` as failed rows with `reason`; the item counted done and failed."""
    progress.done += 1
    progress.failed += 1
    progress.errors.append(reason)
    return failed_rows(base, keys, reason, signed)


def _record(store: Store, entry: BatchFile) -> None:
    store.save_batch(str(entry.path), entry.run_id, entry.batch_id, entry.input_file_id, entry.requests,
                     entry.item_ids)


def _client(judge):
    client = getattr(judge, "_client", None)
    if client is None:
        raise JudgeError("batches need the openai judge; use --judge openai")
    return client


def _api(call: Callable, doing: str):
    """An SDK call whose errors become one-line BatchErrors."""
    import openai

    try:
        return call()
    except (openai.AuthenticationError, openai.PermissionDeniedError) as exc:
        raise JudgeError(f"the server refused the API key ({exc.status_code}); check the key") from None
    except openai.APIStatusError as exc:
        raise BatchError(f"could not {doing}: HTTP {exc.status_code} ({exc.message})") from None
    except openai.APIError as exc:
        raise BatchError(f"could not {doing}: {exc}") from None


def batch_judge(store: Store, batch_id: str, api_key: str | None = None, **options):
    """The openai judge a batch was written with, rebuilt from its run's settings."""
    from geval.judging.backends.openai import OpenAIJudge

    run, _ = find_batch(store, batch_id)
    s = json.loads(run["signature_json"])
    return OpenAIJudge(
        model=s["model"], base_url=s["base_url"], api_key=api_key, mode=s["mode"], n=s.get("n") or 20,
        temperature=1.0 if s.get("temp") is None else s["temp"], max_tokens=s["max_tokens"],
        top_logprobs=s.get("top_logprobs") or 20, **options,
    )
