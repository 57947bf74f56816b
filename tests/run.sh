#!/usr/bin/env bash
# The whole test suite, from a fresh machine: installs what the tests need, then runs pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
# llama.cpp's common library, which the judge never loads, left out of its build (geval/judging/build.py, WITHOUT_COMMON)
CMAKE_ARGS="${CMAKE_ARGS:-} -DCMAKE_PROJECT_llama.cpp_INCLUDE=$PWD/geval/judging/llama_without_common.cmake" \
    python3 -m pip install --quiet --disable-pip-version-check -r requirements.txt -r requirements-llama.txt \
    -r requirements-dev.txt
python3 -m pip install --quiet --disable-pip-version-check --no-deps -r requirements-bertscore.txt
# ppi-python (a test-only reference) installs its own tests as a top-level package named `tests`,
# which would hide this project's tests/ from every test file: remove that package it left.
python3 - <<'PY'
import importlib.metadata, shutil
files = importlib.metadata.distribution("ppi-python").files or []
for folder in {f.locate().parents[len(f.parts) - 2] for f in files if f.parts[0] == "tests"}:
    shutil.rmtree(folder, ignore_errors=True)
PY
if [ ! -x /usr/bin/chromium ]; then
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq && $sudo apt-get install -y -qq chromium >/dev/null
fi
# Two processes (the CI machine's two cores: the browser tests mostly wait), each test file whole in one, handed
# out in the order tests/conftest.py collects them (the longest first), not by their number of tests.
exec python3 -m pytest --numprocesses 2 --dist loadfile --no-loadscope-reorder "$@"
