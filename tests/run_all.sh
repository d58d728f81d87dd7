#!/usr/bin/env bash
# Installs everything the test suite needs on a fresh machine, then runs the whole suite.
# Browser tests need Debian's chromium (installed here when missing and running as root)
# and poppler-utils; Python packages go into ./.venv.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v chromium >/dev/null 2>&1 || ! command -v pdftotext >/dev/null 2>&1; then
    if [ "$(id -u)" = "0" ]; then
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
            chromium chromium-driver poppler-utils >/dev/null
    else
        echo "chromium and poppler-utils are missing; install them (as root: apt-get install chromium poppler-utils)" >&2
        exit 1
    fi
fi

[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip >/dev/null
.venv/bin/python -m pip install -q -e '.[test]'
# One worker per core, each test file on one worker (its module fixtures built once).
exec .venv/bin/python -m pytest -q -n auto --dist loadfile --durations=25 "$@"
