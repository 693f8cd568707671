#!/usr/bin/env bash
# Installs everything the tests need (a virtualenv with the test extras, Debian's chromium) and runs all tests.
set -euo pipefail
cd "$(dirname "$0")/.."
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
if ! command -v chromium >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
fi
# A project virtualenv: works whether python3 is a pyenv build or Debian's externally-managed one.
[ -x .venv/bin/python ] || "${PYTHON:-python3}" -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -e '.[test]'
.venv/bin/python userscript/build.py  # builds the one arbitro.user.js the service serves and tests load
exec .venv/bin/python -m pytest "$@"
