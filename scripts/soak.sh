#!/usr/bin/env bash
# Long fault-injection soak of the device gateway (tests/faults, issue 18): by default
# 1000 misbehaving devices for 10 minutes in 10 cycles, every call checked, RSS per cycle.
#   scripts/soak.sh                      1000 devices, 600 s
#   DEVICES=300 DURATION=120 scripts/soak.sh
# Any MCPGEN_FAULTS_* variable (see tests/faults/faults_lib.py) can be set as well.
# Python: $PYTHON (default: python3 with mcpgen[test] installed).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}

export MCPGEN_FAULTS_DEVICES=${DEVICES:-${MCPGEN_FAULTS_DEVICES:-1000}}
export MCPGEN_FAULTS_DURATION=${DURATION:-${MCPGEN_FAULTS_DURATION:-600}}
export MCPGEN_FAULTS_CYCLES=${CYCLES:-${MCPGEN_FAULTS_CYCLES:-10}}
# Two device processes and a slower call rate per device keep the total near 500 calls/s,
# which two cores sustain with the gateway and the devices all in Python.
export MCPGEN_FAULTS_SWARMS=${MCPGEN_FAULTS_SWARMS:-2}
export MCPGEN_FAULTS_CALL_INTERVAL=${MCPGEN_FAULTS_CALL_INTERVAL:-2.0}
export MCPGEN_FAULTS_CALL_TIMEOUT=${MCPGEN_FAULTS_CALL_TIMEOUT:-5}
# Event loops lag by seconds when 1000 devices connect at once on 2 shared cores.
export MCPGEN_FAULTS_SLACK=${MCPGEN_FAULTS_SLACK:-10}
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"

echo "soak: $MCPGEN_FAULTS_DEVICES devices, ${MCPGEN_FAULTS_DURATION}s in $MCPGEN_FAULTS_CYCLES cycles" >&2
exec "$PY" -m pytest -q -s -p no:cacheprovider tests/faults/test_faults.py "$@"
