#!/usr/bin/env bash
# The whole test suite, from a fresh machine: installs what the tests need, then runs pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install --quiet --disable-pip-version-check -r requirements.txt -r requirements-dev.txt
python3 -m pip install --quiet --disable-pip-version-check --no-deps -r requirements-bertscore.txt
if [ ! -x /usr/bin/chromium ]; then
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq && $sudo apt-get install -y -qq chromium >/dev/null
fi
exec python3 -m pytest "$@"
