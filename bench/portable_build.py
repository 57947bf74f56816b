"""Prefill speed of the portable llama.cpp build (requirements-llama.txt: AVX2/FMA/F16C/BMI2, no
AVX-512, no AMX) against llama.cpp's default build for this machine (-march=native), side by side.

The same measurement runs in two interpreters, one after the other, `--pairs` times: this one
(the installed, portable build) and `--native-python` (a virtual environment whose only difference
is llama-cpp-python built with llama.cpp's defaults). Each evaluates one ~2,000-token prompt from
an empty context with the judge's model (2 warm-ups, then the median of 3). Make the native one with:

    pip wheel --no-deps --no-cache-dir --no-binary llama-cpp-python llama-cpp-python==0.3.36 -w /tmp/native
    python -m venv --system-site-packages /tmp/native-venv
    /tmp/native-venv/bin/pip install --no-deps --force-reinstall /tmp/native/llama_cpp_python-*.whl

    nice -n 10 python bench/portable_build.py --native-python /tmp/native-venv/bin/python [--pairs 3]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import time

from _common import REPO, child, fail, header

TEXT = " ".join(f"Speaker {n % 2}: I read that the judge weighs item {n} against the annotators' scores." for n in range(120))


def measure() -> dict:
    """Prefill tokens/s of this interpreter's llama.cpp on the judge's model (run with --child)."""
    from llama_cpp import Llama, llama_print_system_info

    import geval

    llm = Llama(model_path=str(geval.make_judge("embedded").path), n_ctx=4096, n_threads=len(os.sched_getaffinity(0)),
                n_batch=512, verbose=False)
    tokens = llm.tokenize(TEXT.encode(), add_bos=False)[:2000]
    speeds = []
    for _ in range(5):
        llm.reset()
        started = time.perf_counter()
        llm.eval(tokens)
        speeds.append(len(tokens) / (time.perf_counter() - started))
    llm.close()
    features = sorted(name for name, on in re.findall(r"(\w+) = (\d)", llama_print_system_info().decode()) if on == "1")
    return {"tokens": len(tokens), "speed": statistics.median(speeds[2:]), "features": features}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--native-python", help="the interpreter of a venv with llama.cpp's default (native) build")
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        sys.path.insert(0, str(REPO))
        print(json.dumps(measure()))
        raise SystemExit(0)
    if not args.native_python:
        fail("--native-python is needed (see this script's docstring for how to make it)")
    header("prefill speed: the portable llama.cpp build vs llama.cpp's default build for this machine")
    portable, native = [], []
    for pair in range(args.pairs):
        p, n = child(sys.executable, __file__), child(args.native_python, __file__)
        portable.append(p["speed"])
        native.append(n["speed"])
        print(f"pair {pair + 1}: portable {p['speed']:.1f} tok/s, native {n['speed']:.1f} tok/s ({p['tokens']} tokens)",
              flush=True)
    print(f"portable build: {', '.join(p['features'])}")
    print(f"native build:   {', '.join(n['features'])}")
    ratios = [a / b for a, b in zip(portable, native)]
    print(f"FIGURE portable/native prefill: median {statistics.median(ratios):.2f} "
          f"(pairs: {', '.join(f'{r:.2f}' for r in ratios)})")
