#!/usr/bin/env bash
# Sourced by scripts/dev.sh (tests/cli/test_dev_passes.py runs it alone).
# The test command's passes: each runs with its status and wall time recorded (run_pass), and
# report_passes prints one line per pass at the end and fails if any pass failed.
PASS_LINES=()
PASS_FAILED=0
run_pass() {
  local name=$1; shift
  log "$name"
  local start=$SECONDS status=0
  "$@" || status=$?
  local took=$((SECONDS - start))
  if [ "$status" -eq 0 ]; then
    PASS_LINES+=("ok      $name (${took} s)")
  else
    PASS_LINES+=("FAILED  $name (exit $status, ${took} s)")
    PASS_FAILED=1
  fi
}
report_passes() {
  log "summary of the test command's passes"
  printf '  %s\n' "${PASS_LINES[@]}" >&2
  if [ "$PASS_FAILED" -ne 0 ]; then
    log "a pass failed (see above)"
    exit 1
  fi
}
