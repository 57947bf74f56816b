"""The tests' wait (tests/helpers.py): it follows the work's progress, however long the work takes in
all, and fails only when the progress stops moving for the stall period."""

from __future__ import annotations

import time

import pytest
from helpers import wait_while_progressing


def test_work_that_keeps_moving_is_waited_for_past_the_stall_period():
    started = time.monotonic()
    wait_while_progressing(lambda: time.monotonic() - started > 1.5, lambda: int((time.monotonic() - started) / 0.1),
                           "moving work", stall=0.5, poll=0.02)  # 3 stall periods in all, never 0.5 s still


def test_work_that_stops_moving_fails_after_the_stall_period_saying_where_it_stood():
    started = time.monotonic()
    with pytest.raises(AssertionError, match=r"^stuck work: no progress for 0.4 s \(still at 7\)$"):
        wait_while_progressing(lambda: False, lambda: 7, "stuck work", stall=0.4, poll=0.02)
    assert 0.4 <= time.monotonic() - started < 5
