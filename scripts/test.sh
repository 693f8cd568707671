#!/usr/bin/env bash
# Installs everything the tests need (Python packages, Debian's chromium) and runs all tests.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v chromium >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
fi
python3 -m pip install -q --disable-pip-version-check -e '.[test]'
python3 userscript/build.py  # builds the one arbitro.user.js the service serves and tests load
exec python3 -m pytest "$@"
