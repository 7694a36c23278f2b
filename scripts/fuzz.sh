#!/usr/bin/env bash
# Longer fuzzing runs than the test suite's (tests/fuzz, issue 18). One section per target:
#   scripts/fuzz.sh sim [EXAMPLES]   the host simulator's WebSocket client against a hostile
#                                    server (hypothesis, ASan + UBSan build; default 20000
#                                    examples, fresh randomness). The smallest failing input
#                                    is saved in tests/fuzz/regressions/sim_ws/, which the
#                                    suite replays from then on.
# Python: $PYTHON (default: python3 with mcpgen[test] installed).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}

usage() { sed -n '2,8p' "$0" >&2; exit 2; }

case "${1:-}" in
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
