#!/usr/bin/env bash
# Longer fuzzing runs than the test suite's short ones (tests/fuzz). One section per target:
#   scripts/fuzz.sh core [SECONDS] [default|tiny|all]
#       libFuzzer + ASan + UBSan over the device core, SECONDS (default 600) per buffer
#       configuration (default buffers, tiny buffers; default: both). The corpora grow in
#       build/fuzz/core/<buffers>/corpus; crashes are saved in tests/fuzz/core/regressions/,
#       which the suite replays (commit them). Needs clang (scripts/dev.sh setup installs it).
#   scripts/fuzz.sh sim [EXAMPLES]
#       the host simulator's WebSocket client against a hostile server (hypothesis, ASan +
#       UBSan build; default 20000 examples, fresh randomness). The smallest failing input is
#       saved in tests/fuzz/regressions/sim_ws/, which the suite replays from then on.
# Python: $PYTHON (default: python3 with mcpgen[test] installed).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}

usage() { sed -n '2,12p' "$0" >&2; exit 2; }

case "${1:-}" in
  core) shift; exec "$PY" tests/fuzz/core/fuzzlib.py "${1:-600}" "${2:-all}" ;;
  sim)
    export MCPGEN_FUZZ_EXAMPLES=${2:-20000}
    export MCPGEN_FUZZ_RANDOM=1
    export MCPGEN_FUZZ_SAVE_DIR=${MCPGEN_FUZZ_SAVE_DIR:-$PWD/tests/fuzz/regressions/sim_ws}
    echo "fuzz sim: $MCPGEN_FUZZ_EXAMPLES examples; failures saved in $MCPGEN_FUZZ_SAVE_DIR" >&2
    start=$(date +%s)
    "$PY" -m pytest -q -p no:cacheprovider tests/fuzz/simnet/test_sim_ws_fuzz.py
    echo "fuzz sim: $MCPGEN_FUZZ_EXAMPLES examples in $(( $(date +%s) - start )) s, no failure" >&2
    ;;
  *) usage ;;
esac
