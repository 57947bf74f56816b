"""The server gives the memory of large freed blocks back to the system (studio/memory.py)."""

import platform
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

#: In a fresh process: glibc's threshold raised as any program raises it (a 20 MB block freed), then a
#: 6 MB block made and freed; prints how many MB the process still holds of it.
HELD_AFTER_FREE = """
import os, sys
sys.path.insert(0, sys.argv[1])
from studio import memory
def resident():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
block = b"x" * (20 << 20)
del block
took = memory.freed_blocks_returned() if sys.argv[2] == "returned" else None
before = resident()
block = b"y" * (6 << 20)
del block
print(took, round(resident() - before, 1))
"""


def _held(mode: str) -> tuple[str, float]:
    done = subprocess.run([sys.executable, "-c", HELD_AFTER_FREE, str(REPO), mode], capture_output=True, text=True,
                          check=True)
    took, held = done.stdout.split()
    return took, float(held)


@pytest.mark.skipif(platform.system() != "Linux" or platform.libc_ver()[0] != "glibc", reason="glibc's allocator")
def test_a_large_block_freed_is_given_back_to_the_system():
    assert _held("kept")[1] >= 5  # glibc's default: the freed 6 MB stay with the process
    assert _held("returned") == ("True", pytest.approx(0, abs=1))
