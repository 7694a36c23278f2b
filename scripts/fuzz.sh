#!/usr/bin/env bash
# Long fuzzing runs (the test suite does a short one).
#   scripts/fuzz.sh core [seconds] [default|tiny|all]
#       libFuzzer + ASan + UBSan over the device core, SECONDS (default 600) per buffer
#       configuration (default buffers, tiny buffers; default: both)
# The corpora grow in build/fuzz/core/<buffers>/corpus; crashes are saved in
# tests/fuzz/core/regressions/, which the test suite replays (commit them). Needs clang
# (scripts/dev.sh setup installs it).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}

case "${1:-}" in
  core) shift; exec $PY tests/fuzz/core/fuzzlib.py "${1:-600}" "${2:-all}" ;;
  *) echo "usage: scripts/fuzz.sh core [seconds] [default|tiny|all]" >&2; exit 2 ;;
esac
