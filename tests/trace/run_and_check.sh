#!/bin/sh
# Runs a program with --weft:trace (through WEFT_TRACE, which reaches every
# rank a launcher starts) and checks the file it writes.
# Usage: run_and_check.sh PYTHON TRACE RANKS WORKERS CALLS -- COMMAND...
# Fails when the program fails (its exit status) or the check does.
set -u
python=$1 trace=$2 ranks=$3 workers=$4 calls=$5
shift 6
rm -f "$trace" "$trace".rank-*.part
WEFT_TRACE=$trace WEFT_THREADS=$workers "$@" || { echo "run_and_check: the program failed ($?)"; exit 1; }
[ -f "$trace" ] || { echo "run_and_check: no $trace"; exit 1; }
if ls "$trace".rank-*.part >/dev/null 2>&1; then echo "run_and_check: parts left beside $trace"; exit 1; fi
exec "$python" "$(dirname "$0")/check_trace.py" "$trace" "$ranks" "$workers" "$calls"
