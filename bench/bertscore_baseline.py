"""Figure (f): the BERTScore baseline on all 360 responses of Topical-Chat USR, cold and cached,
beside the agreement with people it reaches (and ROUGE-L's, timed the same way, as context).

For each baseline in turn, in one process: a fresh store (a temporary file) holds the dataset,
and `geval.leaderboard` with that baseline alone (no judge rows, no ceiling, 1,000 bootstrap
resamples, each protocol's own metric) is timed twice: cold (for BERTScore: the model loaded,
every distinct response and reference encoded, the scores written to the store) and cached
(the scores read back). cold - cached is the metric's own cost; cached is the bootstrap's. The
script fails unless the cached run gives the same correlations. OpenBLAS threads are as the
environment sets them (OPENBLAS_NUM_THREADS, printed).

    nice -n 10 python bench/bertscore_baseline.py [--baselines bertscore,rouge-l]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from _common import SHARED_DATA, fail, header

import geval


def timed_board(store, name: str, baseline: str):
    started = time.perf_counter()
    board = geval.leaderboard(store, name, baselines=[baseline], ceiling=False, primary_only=True)
    return time.perf_counter() - started, board


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--baselines", default="bertscore,rouge-l")
    args = parser.parse_args()
    header("BERTScore baseline on Topical-Chat USR (360 responses): cold and cached, beside its agreement")
    print(f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', '(unset)')}")
    path = SHARED_DATA / "tc_usr_data.json"
    if not path.is_file():
        fail(f"{path} is not there")
    dataset = geval.load_dataset(path)
    with tempfile.TemporaryDirectory() as folder:
        for baseline in args.baselines.split(","):
            store = geval.Store(Path(folder) / f"{baseline}.sqlite")
            store.save_dataset(dataset)
            try:
                cold, board = timed_board(store, dataset.name, baseline)
                cached, again = timed_board(store, dataset.name, baseline)
            except geval.GevalError as exc:
                fail(f"{baseline}: {exc}")
            finally:
                store.close()
            if not board.values().equals(again.values()):
                fail(f"{baseline}: the cached run gave other correlations")
            row = board.wide().iloc[0]
            print(f"{row['row']}: {len(dataset.items)} responses, cold {cold:.1f}s, cached {cached:.1f}s "
                  f"(the metric itself: {cold - cached:.1f}s)")
            print(f"  signature: {row['signature']}")
            columns = [c for c in board.wide().columns if c not in ("row", "kind", "reference", "signature")]
            print("  Pearson with people [95% CI over dialogues]: " + "; ".join(f"{c} {row[c]}" for c in columns))
