"""Chaos and soak, small (bench/chaos.py and bench/soak.py run them at full size, with figures in
bench/README.md): runs and saves SIGKILLed at random moments leave a store that checks ok, lose no
finished judgment, store none twice and resume to the end; a run against a judge that fails 5% of
its calls in five ways stores every item once and counts every fault."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from helpers import REPO

pytestmark = pytest.mark.timeout(900)


def _bench(*args: str) -> str:
    done = subprocess.run([sys.executable, *args], cwd=REPO, capture_output=True, text=True, timeout=850)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return next(line for line in done.stdout.splitlines() if line.startswith("FIGURES: "))


@pytest.mark.model
def test_runs_workers_and_saves_killed_at_random_moments_lose_nothing_and_resume():
    figures = _bench("bench/chaos.py", "--rounds", "3", "--seed", "1")  # each kind once; bench/ runs 200
    assert re.match(r"FIGURES: rounds 3 \(run 1, save 1, worker 1; \d ended before the kill\); integrity_check ok 3/3; "
                    r"lost 0; doubled 0; resumed and complete 3/3; asked again 0$", figures), figures


def test_a_thousand_calls_with_five_percent_faults_store_every_item_once_and_count_every_fault():
    figures = _bench("bench/soak.py", "--calls", "1000", "--seed", "2")
    assert "; lost 0; doubled 0; " in figures, figures
    garbage = figures.split("garbage answers unscored ")[1].split(";")[0]
    assert garbage.split("/")[0] == garbage.split("/")[1] and garbage != "0/0", figures
    requests = figures.split("; requests ")[1].split(" (")[0]
    assert requests.split(" of ")[0] == requests.split(" of ")[1].replace(" expected", ""), figures
