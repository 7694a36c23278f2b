#!/usr/bin/env bash
# Long fuzzing runs (the test suite does a short one).
#   scripts/fuzz.sh core [seconds]   libFuzzer + ASan + UBSan over the device core (default 600 s)
# The corpus grows in build/fuzz/core/corpus; crashes are saved in tests/fuzz/core/regressions/,
# which the test suite replays (commit them). Needs clang and libcjson-dev (scripts/dev.sh setup).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}

case "${1:-}" in
  core) shift; exec $PY tests/fuzz/core/fuzzlib.py "${1:-600}" ;;
  *) echo "usage: scripts/fuzz.sh core [seconds]" >&2; exit 2 ;;
esac
