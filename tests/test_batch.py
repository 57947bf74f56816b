"""geval.batch against the stub's Files and Batch APIs: write, submit, poll, import, resume."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
from helpers import FULL_ITEM, REPO, make_items, make_template, run_cli, scripted

import geval
from geval import batch
from geval.data.items import Item, make_item
from geval.errors import JudgeError, StoreError
from geval.judging.backends.openai import OpenAIJudge
from geval.judging.judgment import cache_key

ONE = make_template()
MULTI = make_template(name="test-multi", aspects=(("Naturalness", 1, 5), ("Coherence", 1, 5)))
KEY = "sk-test-batch"


@pytest.fixture
def stub(openai_stub):
    """The session's stub with default behaviour and default batches (one "in_progress" poll, no failures)."""
    return openai_stub.configure().configure_batches()


def make(stub, **options) -> OpenAIJudge:
    settings = {"model": "stub-model", "base_url": stub.url, "api_key": KEY, "mode": "logprobs",
                "max_retries": 0, "timeout": 10.0}
    return OpenAIJudge(**{**settings, **options})


def keep(store: geval.Store, items: list[Item]) -> list[Item]:
    """Store `items` as dataset "synthetic" (import_batch reads a batch's items from the store)."""
    store.save_dataset(geval.Dataset("synthetic", "", "table", items))
    return items


def rows(store: geval.Store) -> list[tuple]:
    return store.db.execute("SELECT item_id, aspect, status, score FROM judgments ORDER BY item_id, aspect").fetchall()


def lines(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.parametrize("options", [{"mode": "logprobs"}, {"mode": "auto"}, {"mode": "samples", "n": 5}])
def test_the_batch_body_is_what_the_live_judge_sends(stub, options):
    if options["mode"] == "samples":
        stub.configure("no-logprobs")
    judge = make(stub, **options)
    prompt = MULTI.render(FULL_ITEM)
    judge.judge(prompt, list(MULTI.aspects))
    assert stub.bodies()[0] == judge.batch_body(prompt, list(MULTI.aspects))


def test_write_submit_poll_import_then_a_second_import_adds_nothing(store, stub, tmp_path):
    stub.configure("logprobs", distribution={1: 0.2, 2: 0.3, 3: 0.5})
    stub.configure_batches(polls=2)
    items = make_items(8)
    twin = make_item("synthetic", "turn", items[0].context, items[0].response, grounding=items[0].grounding,
                     system="another-system", group=items[0].group)  # same prompt, another item
    keep(store, items + [twin])
    judge = make(stub)
    plan = batch.write_batch(store, items + [twin], ONE, judge, "synthetic", tmp_path)
    assert (len(plan.files), plan.cached, plan.failed) == (1, 0, 0)
    written = lines(plan.files[0].path)
    assert len(written) == 8  # the twin shares its request
    assert [w["custom_id"] for w in written] == [cache_key(judge.settings, ONE.render(i), list(ONE.aspects))
                                                for i in items]
    assert all(w["method"] == "POST" and w["url"] == "/v1/chat/completions" for w in written)
    assert written[0]["body"] == judge.batch_body(ONE.render(items[0]), list(ONE.aspects))
    assert sorted(plan.files[0].item_ids) == sorted(i.id for i in items + [twin])
    assert store.runs().iloc[0]["status"] == "submitted"

    [batch_id] = batch.submit_batch(store, judge, plan)
    uploaded = stub.files[plan.files[0].input_file_id]
    assert uploaded["purpose"] == "batch" and uploaded["bytes"] == plan.files[0].path.read_bytes()
    assert stub.batches[batch_id]["endpoint"] == "/v1/chat/completions"
    assert stub.batches[batch_id]["metadata"]["geval_run"] == str(plan.run_id)

    with pytest.raises(batch.BatchError, match=rf"^batch {batch_id} is in_progress \(0/8 answered\); import it"):
        batch.import_batch(store, judge, batch_id)
    statuses = []
    ended = batch.wait_batch(judge, batch_id, interval=0.01, on_status=lambda b: statuses.append(b.status))
    assert ended.status == "completed" and statuses[-1] == "completed" and "in_progress" in statuses

    progress = batch.import_batch(store, judge, batch_id)
    assert (progress.total, progress.done, progress.cached, progress.failed) == (9, 9, 0, 0)
    assert store.db["calls"].count == 8 and len(rows(store)) == 9
    assert stub.count == 0  # answered by the batch: no live call
    assert progress.run_id == plan.run_id and store.runs().iloc[0]["status"] == "finished"

    # the same judgments a live run makes: same signature, same cache keys, same scores
    live = geval.Store(":memory:")
    live_progress = geval.score(live, items + [twin], ONE, judge, "synthetic")
    assert live_progress.signature == progress.signature
    assert rows(live) == rows(store)
    assert {r[0] for r in live.db.execute("SELECT key FROM calls")} == {w["custom_id"] for w in written}
    live.close()

    before = (rows(store), store.db["calls"].count)
    again = batch.import_batch(store, judge, batch_id)
    assert (again.done, again.cached, again.failed) == (9, 9, 0)
    assert (rows(store), store.db["calls"].count) == before
    # and a live run of the same items is all cached
    assert geval.score(store, items + [twin], ONE, judge, "synthetic").cached == 9


def test_a_half_imported_batch_resumes_without_duplicates(store, stub, tmp_path, monkeypatch):
    """A kill while the third chunk of answers is committed: the two chunks before it are kept,
    that one is lost as a whole, and the same import does only the rest."""
    monkeypatch.setattr(batch, "IMPORT_CHUNK", 2)
    items = keep(store, make_items(10))
    judge = make(stub)
    plan = batch.write_batch(store, items, ONE, judge, "synthetic", tmp_path)
    [batch_id] = batch.submit_batch(store, judge, plan)
    batch.wait_batch(judge, batch_id, interval=0.01)

    save_calls = store.save_calls
    commits = []

    def dies_in_the_third(calls, rows):
        if len(commits) == 2:
            raise KeyboardInterrupt  # killed in the middle of the import
        commits.append([key for key, *_ in calls])
        return save_calls(calls, rows)

    monkeypatch.setattr(store, "save_calls", dies_in_the_third)
    with pytest.raises(KeyboardInterrupt):
        batch.import_batch(store, judge, batch_id)
    assert store.db["calls"].count == 4 and len(rows(store)) == 4
    assert store.runs().iloc[0]["status"] == "submitted"

    monkeypatch.setattr(store, "save_calls", save_calls)
    progress = batch.import_batch(store, judge, batch_id)
    assert (progress.done, progress.cached, progress.failed) == (10, 4, 0)
    assert store.db["calls"].count == 10
    ids = [r[0] for r in rows(store)]
    assert len(ids) == 10 and set(ids) == {i.id for i in items}
    assert store.runs().iloc[0]["status"] == "finished"


def test_an_import_stopped_in_a_chunk_keeps_the_answers_read_so_far(store, stub, tmp_path, monkeypatch):
    """A stop (Ctrl-C) between two commits commits the answers of the chunk read so far."""
    monkeypatch.setattr(batch, "IMPORT_CHUNK", 4)
    items = keep(store, make_items(10))
    judge = make(stub)
    [batch_id] = batch.submit_batch(store, judge, batch.write_batch(store, items, ONE, judge, "synthetic", tmp_path))
    batch.wait_batch(judge, batch_id, interval=0.01)

    def stop(progress):
        if progress.done == 6:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        batch.import_batch(store, judge, batch_id, on_progress=stop)
    assert store.db["calls"].count == 6 and len(rows(store)) == 6
    progress = batch.import_batch(store, judge, batch_id)
    assert (progress.done, progress.cached) == (10, 6) and store.db["calls"].count == 10 and len(rows(store)) == 10


def test_failed_batch_lines_are_stored_as_failed_and_retried_live(store, stub, tmp_path):
    stub.configure_batches(errors=2)
    items = keep(store, make_items(6))
    judge = make(stub)
    plan = batch.write_batch(store, items, ONE, judge, "synthetic", tmp_path)
    [batch_id] = batch.submit_batch(store, judge, plan)
    batch.wait_batch(judge, batch_id, interval=0.01)
    progress = batch.import_batch(store, judge, batch_id)
    assert (progress.done, progress.failed) == (6, 2)
    failed = store.judgments("synthetic", status="failed")
    assert sorted(failed["reason"]) == sorted(
        f"item {items[i].id}: HTTP 500 in the batch: stub batch failure {i + 1}" for i in (0, 1))
    assert store.db["calls"].count == 4  # failures are never cached
    count = stub.count
    live = geval.score(store, items, ONE, judge, "synthetic")
    assert (live.cached, live.failed) == (4, 0) and stub.count == count + 2


def test_cached_items_are_not_batched_and_get_their_rows_at_once(store, stub, tmp_path):
    items = make_items(10)
    judge = make(stub)
    geval.score(store, items[:4], ONE, judge, "synthetic")
    plan = batch.write_batch(store, items, ONE, judge, "synthetic", tmp_path)
    assert plan.cached == 4 and plan.files[0].requests == 6
    assert plan.line() == f"6 requests in 1 batch file(s), 4 items already cached, 0 cannot be rendered; run {plan.run_id}"
    nothing = batch.write_batch(store, items[:4], ONE, judge, "synthetic", tmp_path)
    assert nothing.files == [] and store.runs().iloc[0]["status"] == "finished"


def test_samples_mode_batches_read_frequencies_like_the_live_judge(store, stub, tmp_path):
    stub.configure("no-logprobs", cycle=[3, 3, 2, 1, 3])
    items = keep(store, make_items(3))
    judge = make(stub, mode="samples", n=5)
    plan = batch.write_batch(store, items, ONE, judge, "synthetic", tmp_path)
    [batch_id] = batch.submit_batch(store, judge, plan)
    batch.wait_batch(judge, batch_id, interval=0.01)
    progress = batch.import_batch(store, judge, batch_id, folder=tmp_path / "answers")
    assert progress.failed == 0 and (tmp_path / "answers" / f"{batch_id}.output.jsonl").is_file()
    frame = store.judgments("synthetic")
    assert list(frame["score"]) == pytest.approx([(3 * 3 + 2 + 1) / 5] * 3)


def test_large_runs_are_split_into_files_of_max_requests(store, stub, tmp_path):
    judge = make(stub)
    plan = batch.write_batch(store, keep(store, make_items(10)), ONE, judge, "synthetic", tmp_path, max_requests=4)
    assert [f.requests for f in plan.files] == [4, 4, 2]
    assert [len(f.item_ids) for f in plan.files] == [4, 4, 2]
    assert [f.batch_id for f in plan.files] == [f"local-{plan.run_id}-{n}" for n in (1, 2, 3)]
    ids = batch.submit_batch(store, judge, plan)
    for batch_id in ids:
        batch.wait_batch(judge, batch_id, interval=0.01)
        batch.import_batch(store, judge, batch_id)
        assert store.runs().iloc[0]["status"] == ("finished" if batch_id == ids[-1] else "submitted")
    assert len(rows(store)) == 10


def test_a_results_file_made_elsewhere_is_imported(store, stub, tmp_path):
    """vLLM's run_batch: write the JSONL only, answer it elsewhere, import the results file."""
    items = make_items(4)  # not in the store: given to the import
    judge = make(stub)
    plan = batch.write_batch(store, items, ONE, judge, "synthetic", tmp_path)
    results = tmp_path / "results.jsonl"
    results.write_text("".join(json.dumps({
        "id": f"vllm-{n}", "custom_id": line["custom_id"], "error": None,
        "response": {"status_code": 200, "request_id": f"r{n}", "body": stub.completion(line["body"])},
    }) + "\n" for n, line in enumerate(lines(plan.files[0].path))))
    with pytest.raises(StoreError, match=rf"^4 of the 4 items of batch local-{plan.run_id}-1 are not in :memory:"):
        batch.import_batch(store, judge, plan.files[0].batch_id, output=results)
    progress = batch.import_batch(store, judge, plan.files[0].batch_id, output=results, items=items)
    assert (progress.done, progress.failed) == (4, 0) and stub.count == 0


def test_a_batch_needs_the_openai_judge_and_a_known_id(store, stub, tmp_path):
    with pytest.raises(JudgeError, match="^batch scoring needs the openai judge, not 'scripted'"):
        batch.write_batch(store, make_items(2), ONE, scripted(), "synthetic", tmp_path)
    with pytest.raises(batch.BatchError, match="^no batch batch_nope in :memory:; use the store"):
        batch.import_batch(store, make(stub), "batch_nope")


def test_another_judge_cannot_import_a_batch(store, stub, tmp_path):
    plan = batch.write_batch(store, make_items(2), ONE, make(stub), "synthetic", tmp_path)
    [batch_id] = batch.submit_batch(store, make(stub), plan)
    with pytest.raises(JudgeError, match=f"^batch {batch_id} was written for judge settings"):
        batch.import_batch(store, make(stub, max_tokens=5), batch_id)


def test_batch_costs_are_half_price(store, stub, tmp_path):
    judge = make(stub, prices=(1.0, 2.0))
    plan = batch.write_batch(store, keep(store, make_items(2)), ONE, judge, "synthetic", tmp_path)
    [batch_id] = batch.submit_batch(store, judge, plan)
    batch.wait_batch(judge, batch_id, interval=0.01)
    progress = batch.import_batch(store, judge, batch_id)
    full = (progress.prompt_tokens * 1.0 + progress.completion_tokens * 2.0) / 1e6
    assert progress.cost == pytest.approx(full * batch.BATCH_DISCOUNT)


def test_cli_score_batch_then_batch_import(stub, tmp_path):
    store_path = tmp_path / "cli.sqlite"
    common = ["--store", str(store_path)]
    env = {"OPENAI_API_KEY": KEY}
    judge = ["--judge", "openai", "--model", "stub-model", "--base-url", stub.url, "--mode", "logprobs"]
    result = run_cli("score", "topicalchat_usr_sample", "-t", "topicalchat-naturalness", "--limit", "5", *judge,
                     "--batch", *common, env=env)
    assert result.returncode == 0, result.stderr
    batch_id = result.stdout.strip()
    assert batch_id.startswith("batch_stub_")
    assert "5 requests in 1 batch file(s)" in result.stderr
    assert list((tmp_path / "batches").glob("run*-topicalchat-naturalness-1.jsonl"))

    status = run_cli("batch", "status", batch_id, *common, env=env)
    assert status.returncode == 0 and status.stdout.startswith(f"{batch_id}: in_progress")
    imported = run_cli("batch", "import", batch_id, "--wait", "--poll", "0.05", *common, env=env)
    assert imported.returncode == 0, imported.stderr
    assert imported.stdout.startswith(f"{batch_id}: 5/5 items, 5 imported, 0 already stored, 0 failed")
    again = run_cli("batch", "import", batch_id, *common, env=env)
    assert again.stdout.startswith(f"{batch_id}: 5/5 items, 0 imported, 5 already stored, 0 failed")
    stored = geval.Store(store_path)
    assert len(stored.judgments("topicalchat_usr_sample")) == 5
    stored.close()


def test_cli_concurrency_is_recorded_as_given_but_not_in_the_signature(stub, tmp_path):
    store_path = tmp_path / "cli.sqlite"
    judge = ["--judge", "openai", "--model", "stub-model", "--base-url", stub.url, "--mode", "logprobs"]
    result = run_cli("score", "topicalchat_usr_sample", "-t", "topicalchat-naturalness", "--limit", "6", *judge,
                     "--concurrency", "4", "--rpm", "6000", "--store", str(store_path),
                     env={"OPENAI_API_KEY": KEY})
    assert result.returncode == 0, result.stderr
    assert stub.count == 6 and 1 <= stub.max_in_flight <= 4
    stored = geval.Store(store_path)
    run = stored.runs().iloc[0]
    assert json.loads(run["settings_given"])["concurrency"] == 4 and json.loads(run["settings_given"])["rpm"] == 6000
    assert "concurrency" not in run["signature"] and "rpm" not in run["signature"]
    assert json.loads(run["summary"])["concurrency"] == 4
    stored.close()


def test_the_api_key_is_not_written_anywhere(store, stub, tmp_path):
    judge = make(stub)
    plan = batch.write_batch(store, make_items(2), ONE, judge, "synthetic", tmp_path)
    batch.submit_batch(store, judge, plan)
    assert KEY not in plan.files[0].path.read_text()
    assert KEY not in json.dumps(store.runs().to_dict())
    assert not os.environ.get("OPENAI_API_KEY") or os.environ["OPENAI_API_KEY"] not in plan.files[0].path.read_text()


def test_a_per_aspect_template_batches_one_request_per_aspect(store, stub, tmp_path):
    stub.configure("logprobs", distribution={1: 0.2, 2: 0.3, 3: 0.5})
    per_aspect = make_template(name="test-per-aspect", aspects=(("Naturalness", 1, 3), ("Coherence", 1, 3)),
                               body="Response:\n{{response}}\n\n- {{aspect}}:")
    items = keep(store, make_items(3))
    judge = make(stub)
    plan = batch.write_batch(store, items, per_aspect, judge, "synthetic", tmp_path)
    written = lines(plan.files[0].path)
    assert [w["custom_id"] for w in written] == [cache_key(judge.settings, call.prompt, call.aspects)
                                                for item in items for call in per_aspect.calls(item)]
    [batch_id] = batch.submit_batch(store, judge, plan)
    batch.wait_batch(judge, batch_id, interval=0.01)
    progress = batch.import_batch(store, judge, batch_id)
    assert (progress.total, progress.done, progress.failed) == (6, 6, 0)
    assert len(rows(store)) == 6 and {r[2] for r in rows(store)} == {"ok"}
    assert geval.score(store, items, per_aspect, judge, "synthetic").cached == 3 and stub.count == 0


def test_a_pairwise_batch_combines_its_two_orders_as_a_live_run_does(store, stub, tmp_path, monkeypatch):
    """A template whose aspect is made of parts (a pair asked in both orders): once every answer is
    imported, each item's combined score is stored, the items looked up a few at a time."""
    from helpers import pair_rows, write_pairs

    from geval.judging import pairwise

    monkeypatch.setattr(batch, "CHUNK", 3)
    stub.configure("logprobs", hashed=True, distribution={0: 0.3, 1: 0.3, 2: 0.4}, aspects=["Preference"],
                   labels=pairwise.ANSWERS)
    template = geval.Template.parse('+++\nname = "pw"\nkind = "pairwise"\ntask = "Compare."\n[[aspects]]\n'
                                    'name = "Preference"\n+++\nQuestion:\n{{context}}\n\nA: {{response_a}}\n'
                                    'B: {{response_b}}\n\nWhich is better? Answer A, B or tie.\n', source="pw.txt")
    dataset = geval.load_dataset(write_pairs(tmp_path / "pairs.jsonl", pair_rows(4, 2)), store=store)
    judge = make(stub)
    plan = batch.write_batch(store, dataset.items, template, judge, dataset.name, tmp_path, max_requests=7)
    assert sum(f.requests for f in plan.files) == 16 and len(plan.files) == 3
    for batch_id in batch.submit_batch(store, judge, plan):
        batch.wait_batch(judge, batch_id, interval=0.01)
        batch.import_batch(store, judge, batch_id)
    live = geval.Store(":memory:")
    live.save_dataset(dataset)
    geval.score(live, dataset.items, template, judge, dataset.name)
    assert rows(store) == rows(live) and len(rows(store)) == 8 * 3  # each pair: two orders and their combination
    assert {r[1] for r in rows(store)} == {"preference", "preference#order1", "preference#order2"}
    live.close()


def test_the_batch_path_at_scale_is_split_killed_and_resumed_and_all_cache_hits_on_a_rerun(tmp_path):
    """bench/batch_scale.py (1,000,000 judgments in bench/README's "A study bigger than one machine"),
    small: 300 judgments in files of 100, the import killed half way through the 2nd batch, in the commit of its
    answers 41-60 (20 to a commit)."""
    done = subprocess.run([sys.executable, "bench/batch_scale.py", "--judgments", "300", "--per-file", "100",
                           "--import-chunk", "20", "--folder", str(tmp_path)],
                          cwd=REPO, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "write: 300 requests in 3 batch file(s), 0 items already cached, 0 cannot be rendered; run 1: " in out, out
    assert "upload and create 3 batches: " in out
    assert re.search(r"killed while committing answers 41-60 of its 100; imported again in [\d.]+ s: 40 answers already "
                     r"stored \(skipped\), 60 imported", out), out
    assert "stored: 300 judgments of 300 items, 300 cached calls; run finished" in out
    assert "the same run again: 0 requests in 0 batch file(s), 300 items already cached, 0 cannot be rendered; run 2" \
        in out
    assert "stored: 300 judgments for the rerun, no request" in out
    assert re.search(r"^FIGURE batch path at 300 judgments: ", out, re.M), out
