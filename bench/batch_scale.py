"""A study bigger than one machine, end to end at 1,000,000 judgments: the Batch API path on the
OpenAI stub (stubs/openai_stub.py), as a user of `geval score --batch` and `geval batch import`
meets it.

One run over N synthetic items (one aspect, one request each): the requests written and split into
files of at most 50,000 (the Batch API's limit), each uploaded and its batch created on the stub,
polled until it ends, and imported; the import is killed in the middle of one batch, while it
commits a chunk of answers (that chunk is lost, those committed before it kept) and that batch imported again (it skips what is stored and
does only the rest); then the same run written again, every item a cache hit (no request, no file).
Each phase's time and rate, and what the store holds after it (every item judged once per run, each
request answered and cached once).

    nice python bench/batch_scale.py [--judgments 1000000] [--per-file 50000] [--import-chunk 2000]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from _common import fail, header, machine, synthetic_dataset, synthetic_template

import geval


class Killed(Exception):
    """The process killed in the middle of a batch's import, while a chunk of answers is committed."""


def killed_in_a_commit(store: geval.Store, after: int) -> list[int]:
    """Make `store` die (raise Killed, nothing written) in the commit that would take the answers
    committed past `after`: a kill at the worst moment. Returns the sizes of the commits made."""
    save_calls, made = store.save_calls, []

    def dies(calls, rows):
        if sum(made) + len(calls) > after:
            raise Killed
        save_calls(calls, rows)
        made.append(len(calls))

    store.save_calls = dies
    return made


def timed(what: str, started: float, judgments: int) -> float:
    seconds = time.perf_counter() - started
    print(f"{what}: {seconds:,.1f} s ({judgments / seconds:,.0f} judgments/s)", flush=True)
    return seconds


def judged(store: geval.Store, run_id: int) -> tuple[int, int]:
    """The run's judgments, and its distinct items."""
    return store.db.execute("SELECT COUNT(*), COUNT(DISTINCT item_id) FROM judgments WHERE run_id = ?",
                            [run_id]).fetchone()


def main(judgments: int, per_file: int, folder: Path) -> None:
    from openai_stub import OpenAIStub

    header(f"the Batch API path at {judgments:,} judgments on the OpenAI stub (files of at most {per_file:,})")
    started = time.perf_counter()
    items = synthetic_dataset(judgments, folder / "items.jsonl").items
    print(f"items written and loaded (not part of the path): {time.perf_counter() - started:,.1f} s", flush=True)
    template = synthetic_template()
    store = geval.Store(folder / "store.sqlite")
    with OpenAIStub() as stub:
        stub.configure("logprobs", hashed=True).configure_batches(polls=1)
        judge = geval.make_judge("openai", model="stub-model", base_url=stub.url, api_key="sk-bench", mode="logprobs",
                                 max_retries=0, timeout=600.0)
        started = time.perf_counter()
        plan = geval.batch.write_batch(store, items, template, judge, "synthetic", folder / "batches",
                                       max_requests=per_file)
        written = timed(f"write: {plan.line()}", started, judgments)
        if sum(f.requests for f in plan.files) != judgments or len(plan.files) != -(-judgments // per_file):
            fail(f"expected {judgments} requests in {-(-judgments // per_file)} files: {plan.line()}")

        started = time.perf_counter()
        ids = geval.batch.submit_batch(store, judge, plan)
        submitted = timed(f"upload and create {len(ids)} batches", started, judgments)

        killed_in = ids[len(ids) // 2]
        stop_after = min(per_file, judgments) // 2
        started = time.perf_counter()
        imported, resumed = 0, None
        for number, batch_id in enumerate(ids, 1):
            if number > 1:
                print(f"  {number - 1}/{len(ids)} batches imported, {time.perf_counter() - started:,.0f} s", flush=True)
            geval.batch.wait_batch(judge, batch_id, interval=0.01)
            if batch_id == killed_in:
                committed = killed_in_a_commit(store, stop_after)
                try:
                    geval.batch.import_batch(store, judge, batch_id, items=items)
                except Killed:
                    pass
                del store.save_calls  # the store's own method again
                again = time.perf_counter()
                progress = geval.batch.import_batch(store, judge, batch_id, items=items)
                resumed = (time.perf_counter() - again, progress.cached, progress.done - progress.cached)
                if progress.cached != sum(committed):
                    fail(f"the import again skipped {progress.cached} answers, not the {sum(committed)} committed")
                imported += progress.done
                continue
            imported += geval.batch.import_batch(store, judge, batch_id, items=items).done
        poll_import = timed(f"poll and import {len(ids)} batches (one killed half way and imported again)", started,
                            judgments)
        if resumed is not None:
            skipped, answers = resumed[1], resumed[1] + resumed[2]
            print(f"  killed while committing answers {skipped + 1:,}-{min(skipped + geval.batch.IMPORT_CHUNK, answers):,} "
                  f"of its {answers:,}; imported again in {resumed[0]:.1f} s: {resumed[1]:,} answers "
                  f"already stored (skipped), {resumed[2]:,} imported", flush=True)
        count, distinct = judged(store, plan.run_id)
        calls = store.db.execute("SELECT COUNT(*) FROM calls").fetchone()[0]
        status = store.run(plan.run_id)["status"]
        print(f"  stored: {count:,} judgments of {distinct:,} items, {calls:,} cached calls; run {status}")
        if (count, distinct, calls, imported, status) != (judgments, judgments, judgments, judgments, "finished"):
            fail("the store does not hold each judgment once")
        asked = stub.count

        started = time.perf_counter()
        again = geval.batch.write_batch(store, items, template, judge, "synthetic", folder / "batches",
                                        max_requests=per_file)
        rerun = timed(f"the same run again: {again.line()}", started, judgments)
        if again.files or again.cached != judgments or stub.count != asked:
            fail(f"the rerun was not all cache hits: {again.line()}")
        print(f"  stored: {judged(store, again.run_id)[0]:,} judgments for the rerun, no request")
    store.close()
    total = written + submitted + poll_import
    print(f"FIGURE batch path at {judgments:,} judgments: {total / 60:.1f} min from items to every answer stored "
          f"(write {written:.0f} s, upload {submitted:.0f} s, import {poll_import:.0f} s); the rerun all cache hits "
          f"in {rerun:.0f} s ({rerun / total:.2f} of the first)")
    print(f"machine at the end: {machine()}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--judgments", type=int, default=1_000_000)
    parser.add_argument("--per-file", type=int, default=geval.batch.MAX_REQUESTS)
    parser.add_argument("--import-chunk", type=int, default=geval.batch.IMPORT_CHUNK,
                        help="answers committed per transaction by the import")
    parser.add_argument("--folder", type=Path, help="where the store and files go (default: a temporary folder)")
    args = parser.parse_args()
    geval.batch.IMPORT_CHUNK = args.import_chunk
    if args.folder:
        args.folder.mkdir(parents=True, exist_ok=True)
        main(args.judgments, args.per_file, args.folder)
    else:
        with tempfile.TemporaryDirectory(prefix="geval-batch-") as scratch:
            main(args.judgments, args.per_file, Path(scratch))
    sys.exit(0)
