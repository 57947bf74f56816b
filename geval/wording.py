"""Counts in words, so that one thing is never "1 judge calls", and figures to a few decimals, never "-0.000":
every stage's messages use them."""

from __future__ import annotations


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """`n` and `noun`, the noun in the plural unless `n` is 1: "1 judge call", "0 items", "3 labels".
    `plural`: the plural of a noun that does not take an s ("1 item with a note", "2 items with a note")."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def few(names, shown: int = 3) -> str:
    """The first `shown` of `names` and how many more, for one line: "r000, r001, r002 and 357 more"."""
    names = [str(name) for name in names]
    listed = ", ".join(names[:shown])
    return f"{listed} and {len(names) - shown} more" if len(names) > shown else listed


def natural_key(name: str) -> tuple:
    """A sort key putting names in the order a person reads them: M2 before M10 (a name's trailing number read as
    a number)."""
    digits = "".join(c for c in name if c.isdigit())
    return (name.rstrip("0123456789"), int(digits) if digits and name.endswith(digits) else -1, name)


def fixed(value: float, digits: int = 3, signed: bool = False) -> str:
    """`value` to `digits` decimals, with its sign when `signed` ("+0.120"); a value that rounds to zero reads 0
    ("0.000", "+0.000"), never "-0.000" (an interval's bound keeps its sign: "[-0.00, +0.51]" holds 0)."""
    value = 0.0 if round(value, digits) == 0 else value
    return f"{value:{'+' if signed else ''}.{digits}f}"


def duration(seconds: float) -> str:
    """A time in words: '42s', '3 min 05s', '1 h 02 min'."""
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60:02d}s"
    return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"


def run_status(status: str, went_on: int | None) -> str:
    """A run's status as the runs' tables show it: "stopped (run 7 went on)" for one a later run went on with
    (`Store.runs`' `went_on`: a Resume is a run of its own), else the status."""
    return status if went_on is None else f"{status} (run {went_on} went on)"
