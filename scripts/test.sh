#!/usr/bin/env bash
# Installs everything the tests need (a virtualenv with the test extras, Debian's chromium and postgresql) and runs
# all tests.
set -euo pipefail
cd "$(dirname "$0")/.."
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
if ! command -v chromium >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
fi
# PostgreSQL's server binaries for the scale-out tests: tests/plugins/postgres.py runs initdb into a temporary folder
# and starts its own throwaway cluster on a free loopback port. The default cluster Debian's package may create and
# start is stopped: nothing depends on it.
if ! command -v initdb >/dev/null 2>&1 && ! compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null; then
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends postgresql >/dev/null
  if command -v pg_lsclusters >/dev/null 2>&1; then
    pg_lsclusters -h 2>/dev/null | while read -r version cluster _; do
      $SUDO pg_ctlcluster "$version" "$cluster" stop >/dev/null 2>&1 || true
    done
  fi
fi
# A project virtualenv: works whether python3 is a pyenv build or Debian's externally-managed one.
[ -x .venv/bin/python ] || "${PYTHON:-python3}" -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -e '.[test]'
.venv/bin/python userscript/build.py  # builds the one arbitro.user.js the service serves and tests load
exec .venv/bin/python -m pytest "$@"
