"""Chaos: scoring runs and dataset saves SIGKILLed at random moments, then checked and resumed.

Each round starts a process that scores a synthetic dataset into one shared store file (or saves a
large dataset into it), kills something at a random moment, and checks the store as an outsider
would, with plain sqlite3:

- `run`: the scoring process itself (an OpenAI-compatible stub judge, 4 calls at a time);
- `worker`: the embedded judge's worker process (Qwen2.5 1.5B on this machine's CPU); the scoring
  process must end the run as failed and live on;
- `save`: a process loading a 20,000-item file into the store (an upload does the same).

After each kill: `PRAGMA integrity_check` is ok; no item the process reported finished is lost;
none is stored twice (one row per item, aspect and template version); then the same run again
completes, asking the judge only for what was not stored (a save: the dataset is all there or not
at all, and saving again completes).

    python bench/chaos.py [--rounds 200] [--seed 0] [--kinds run,worker,save]

It prints one line per round and the figures; it exits 1 if any check failed. The browser kills
(the app's server) are in tests/test_e2e_crash.py.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from _common import REPO, header

ITEMS = 24
SAVE_ITEMS = 20_000


@dataclass
class Figures:
    rounds: dict[str, int] = field(default_factory=dict)  # by what was to be killed
    ended_first: int = 0  # rounds whose process ended before its random moment came (checked all the same)
    integrity_ok: int = 0
    lost: int = 0
    doubled: int = 0
    resumed: int = 0
    asked_again: int = 0  # judge calls of a resumed run for items already stored
    problems: list[str] = field(default_factory=list)
    save_seconds: float = 10.0  # how long the last whole save took (a kill falls within it)
    worker_seconds: float = 20.0  # about how long the judge takes for a round's items (likewise)

    def line(self) -> str:
        rounds = sum(self.rounds.values())
        return (f"rounds {rounds} ({', '.join(f'{k} {v}' for k, v in sorted(self.rounds.items()))}; "
                f"{self.ended_first} ended before the kill); integrity_check ok {self.integrity_ok}/{rounds}; "
                f"lost {self.lost}; doubled {self.doubled}; resumed and complete {self.resumed}/{rounds}; "
                f"asked again {self.asked_again}")


# --- the processes that are killed -------------------------------------------------------------------


def child(args: argparse.Namespace) -> None:
    """One scoring run (or dataset save) that prints what it finished, as it finishes it."""
    sys.path[:0] = [str(REPO), str(REPO / "stubs")]
    import geval

    store = geval.Store(args.store)
    if args.kind == "save":
        dataset = geval.load_dataset(args.dataset, name=args.name, store=store)
        print(f"saved {len(dataset.items)}", flush=True)
        return
    dataset = geval.load_dataset(args.dataset, name=args.name, store=store)
    template = geval.Template.parse(json.loads(args.template), source="chaos.txt")
    if args.kind == "worker":
        judge = geval.make_judge("embedded")
        judge.load()
        print(f"worker {judge.worker.process.pid}", flush=True)
        concurrency = 1
    else:
        judge = geval.make_judge("openai", model="stub", base_url=args.url, api_key="sk-chaos", mode="logprobs")
        concurrency = 4
    plan = geval.plan(store, dataset.items, template, judge)
    try:
        progress = geval.score(store, dataset.items, template, judge, args.name, concurrency=concurrency, plan=plan,
                               on_progress=lambda p: print(f"done {p.done}", flush=True))
    except geval.GevalError as exc:
        print(f"ended {exc}", flush=True)
        raise SystemExit(3) from None
    print(f"calls {progress.calls} status {progress.status}", flush=True)


# --- the rounds -------------------------------------------------------------------------------------


def query(store: Path, sql: str, *values) -> list[tuple]:
    with sqlite3.connect(store, timeout=60) as conn:
        return conn.execute(sql, values).fetchall()


def start(store: Path, kind: str, dataset: Path, name: str, url: str) -> subprocess.Popen:
    from _common import SYNTHETIC_TEMPLATE

    command = [sys.executable, __file__, "--child", kind, "--store", str(store), "--dataset", str(dataset),
               "--name", name, "--url", url, "--template", json.dumps(SYNTHETIC_TEMPLATE)]
    return subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "stubs")])})


def write_dataset(path: Path, size: int, per_group: int = 6) -> Path:
    """A USR-layout file of `size` scored responses, `per_group` to a dialogue."""
    path.write_text(json.dumps([
        {"context": f"hello number {group}\nhi there", "fact": f"fact {group}",
         "responses": [{"response": f"response {i} of {path.stem}", "model": f"sys{i % 3}",
                        "Natural": [1 + i % 3, 1 + (i * 7) % 3]}
                       for i in range(group * per_group, min(size, (group + 1) * per_group))]}
        for group in range((size + per_group - 1) // per_group)]))
    return path


def round_of(figures: Figures, number: int, kind: str, rng: random.Random, folder: Path, store: Path, url: str) -> str:
    """One round: start, kill at a random moment, check, resume, check. Returns its line."""
    name = f"chaos{number}"
    dataset = write_dataset(folder / f"{name}.json", SAVE_ITEMS if kind == "save" else ITEMS)
    process = start(store, kind, dataset, name, url)
    lines: list[str] = []
    # the kill comes at a random moment of the work: once the process says it starts it (its
    # worker's pid, its first item), or, one round in ten, while it is still starting
    window = {"run": 1.0, "worker": figures.worker_seconds * 1.2, "save": figures.save_seconds * 1.2}[kind]
    delay = rng.uniform(0.0, window)
    target = process.pid
    if kind != "save" and rng.random() >= 0.1:
        deadline = time.time() + 300
        while time.time() < deadline:
            line = process.stdout.readline()
            if not line:
                break
            lines.append(line.strip())
            if line.startswith("worker "):
                target = int(line.split()[1])
                break
            if line.startswith("done ") and kind == "run":
                break
    time.sleep(delay)
    figures.rounds[kind] = figures.rounds.get(kind, 0) + 1
    try:
        os.kill(target, signal.SIGKILL)
    except ProcessLookupError:  # the work ended before the random moment came: checked all the same
        figures.ended_first += 1
    out, _ = process.communicate(timeout=300)
    lines += out.splitlines()
    reported = max((int(line.split()[1]) for line in lines if line.startswith("done ")), default=0)
    if not store.exists():
        figures.integrity_ok += 1  # killed before the store was made: nothing to check
        return f"{kind} killed at {delay:.2f}s before the store existed"
    integrity = query(store, "PRAGMA integrity_check")[0][0]
    figures.integrity_ok += integrity == "ok"
    if integrity != "ok":
        figures.problems.append(f"round {number}: integrity_check says {integrity}")
    if kind == "save":
        return _check_save(figures, number, store, dataset, name, url, delay)
    stored = query(store, "SELECT COUNT(DISTINCT item_id) FROM judgments WHERE dataset = ? AND status = 'ok'", name)[0][0]
    twice = query(store, "SELECT COUNT(*) FROM (SELECT item_id FROM judgments WHERE dataset = ? "
                         "GROUP BY item_id, aspect, template_version HAVING COUNT(*) > 1)", name)[0][0]
    lost = max(0, reported - stored)
    figures.lost += lost
    figures.doubled += twice
    if lost or twice:
        figures.problems.append(f"round {number}: reported {reported}, stored {stored}, stored twice {twice}")
    started = time.time()
    again = start(store, kind, dataset, name, url)
    out, err = again.communicate(timeout=900)
    if kind == "worker":
        figures.worker_seconds = (time.time() - started) * (ITEMS - stored) / ITEMS if stored < ITEMS else 0.0
    final = [line for line in out.splitlines() if line.startswith("calls ")]
    complete = query(store, "SELECT COUNT(DISTINCT item_id) FROM judgments WHERE dataset = ? AND status = 'ok'", name)[0][0]
    calls = int(final[0].split()[1]) if final else -1
    ok = again.returncode == 0 and complete == ITEMS and calls == ITEMS - stored
    figures.resumed += ok
    figures.asked_again += max(0, calls - (ITEMS - stored)) if final else 0
    if not ok:
        figures.problems.append(f"round {number}: resume exit {again.returncode}, {complete}/{ITEMS} items, "
                                f"{calls} calls for {ITEMS - stored} left: {err[-300:]}")
    ended = next((line for line in lines if line.startswith("ended ")), "")
    return (f"{kind} killed at {delay:.2f}s: reported {reported}, stored {stored}, twice {twice}; resumed with "
            f"{calls} calls{'; ' + ended[:90] if ended else ''}")


def _check_save(figures: Figures, number: int, store: Path, dataset: Path, name: str, url: str, delay: float) -> str:
    """A killed save leaves the dataset all there or not there; saving again completes."""
    rows = query(store, "SELECT n_items FROM datasets WHERE name = ?", name)
    items = query(store, "SELECT COUNT(*) FROM items WHERE dataset = ?", name)[0][0]
    whole = (not rows and items == 0) or (rows and rows[0][0] == items == SAVE_ITEMS)
    if not whole:
        figures.lost += 1
        figures.problems.append(f"round {number}: a killed save left {items} items for {rows}")
    started = time.time()
    again = start(store, "save", dataset, name, url)
    out, err = again.communicate(timeout=900)
    figures.save_seconds = time.time() - started
    items = query(store, "SELECT COUNT(*) FROM items WHERE dataset = ?", name)[0][0]
    ok = again.returncode == 0 and items == SAVE_ITEMS
    figures.resumed += ok
    if not ok:
        figures.problems.append(f"round {number}: saving again: exit {again.returncode}, {items} items: {err[-300:]}")
    return f"save killed at {delay:.2f}s: {'all there' if rows else 'not there'} ({items} after saving again)"


def main(argv: list[str] | None = None) -> Figures:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--kinds", default="run,worker,save", help="what is killed, comma-separated")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    for hidden in ("--store", "--dataset", "--name", "--url", "--template"):
        parser.add_argument(hidden, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        args.kind = args.child
        child(args)
        raise SystemExit(0)
    from openai_stub import OpenAIStub

    header(f"chaos: {args.rounds} rounds, each killed at a random moment (seed {args.seed})")
    rng = random.Random(args.seed)
    kinds = args.kinds.split(",")
    figures = Figures()
    with tempfile.TemporaryDirectory(prefix="geval-chaos-") as tmp, OpenAIStub() as stub:
        stub.configure("logprobs", delay=0.1, hashed=True)
        folder = Path(tmp)
        store = folder / "chaos.sqlite"
        for number in range(args.rounds):
            kind = kinds[number % len(kinds)]
            print(f"{number + 1:3d} {round_of(figures, number, kind, rng, folder, store, stub.url)}", flush=True)
    print(f"FIGURES: {figures.line()}")
    for problem in figures.problems:
        print(f"  problem: {problem}")
    if figures.problems:
        raise SystemExit(1)
    return figures


if __name__ == "__main__":
    main()
