"""Requests- and tokens-per-minute limits for a run's calls to a judge."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from geval.errors import GevalError


class RateLimiter:
    """Requests- and tokens-per-minute limits: two token buckets shared by a run's workers.

    Each bucket holds one second's worth of its rate (at least one request), so calls are
    spread evenly instead of bursting a minute's quota at once. A call costing more tokens
    than the bucket holds waits for a full bucket and leaves it in debt, so the rate over
    any long stretch stays within the limit. Token costs are estimated before a call and
    corrected with the real usage after it (`settle`).
    """

    def __init__(self, rpm: float | None = None, tpm: float | None = None,
                 clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep):
        for name, value in (("rpm", rpm), ("tpm", tpm)):
            if value is not None and not value > 0:
                raise GevalError(f"{name} {value} is not a positive number; leave it unset for no limit")
        self.rpm, self.tpm = rpm, tpm
        self._clock, self._sleep = clock, sleep
        self._lock = threading.Lock()
        now = clock()
        # per bucket: [rate per second, capacity, level, last refill]
        self._requests = [rpm / 60, max(1.0, rpm / 60), max(1.0, rpm / 60), now] if rpm else None
        self._tokens = [tpm / 60, tpm / 60, tpm / 60, now] if tpm else None

    def acquire(self, tokens: int = 0, stop: threading.Event | None = None) -> bool:
        """Wait until a call of about `tokens` tokens may go; False if `stop` is set meanwhile."""
        while True:
            with self._lock:
                now = self._clock()
                waits = [self._wait(bucket, cost, now) for bucket, cost in ((self._requests, 1), (self._tokens, tokens))
                         if bucket is not None]
                delay = max(waits, default=0.0)
                if delay <= 0:
                    if self._requests is not None:
                        self._requests[2] -= 1
                    if self._tokens is not None:
                        self._tokens[2] -= tokens
                    return True
            if stop is not None:
                if stop.wait(delay):
                    return False
            else:
                self._sleep(delay)

    def settle(self, estimated: int, actual: int) -> None:
        """Correct the token bucket once a call's real usage is known."""
        if self._tokens is not None and actual > 0:
            with self._lock:
                self._tokens[2] += estimated - actual

    @staticmethod
    def _wait(bucket: list, cost: float, now: float) -> float:
        """Refill `bucket` to `now`; seconds until it holds `cost` (or is full, for a bigger cost)."""
        rate, capacity, level, last = bucket
        level = min(capacity, level + (now - last) * rate)
        bucket[2], bucket[3] = level, now
        return max(0.0, (min(cost, capacity) - level) / rate)
