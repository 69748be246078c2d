#!/usr/bin/env bash
# Runs a reference command and a second command, takes the last
# `checksum <value>` line each prints, and fails unless the two values agree
# within a relative tolerance (0: the printed values are equal).
#
#   compare_checksums.sh TOLERANCE REFERENCE_CMD... -- OTHER_CMD...
set -u
if [ $# -lt 4 ]; then
  echo "usage: $0 TOLERANCE REFERENCE_CMD... -- OTHER_CMD..." >&2
  exit 2
fi
tol=$1
shift
ref=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  ref+=("$1")
  shift
done
if [ $# -eq 0 ]; then
  echo "$0: missing -- between the two commands" >&2
  exit 2
fi
shift
other=("$@")

run() {
  local out
  out=$("$@") || { echo "$0: failed (exit $?): $*" >&2; echo "$out" >&2; return 1; }
  echo "$out" >&2
  echo "$out" | awk '$1 == "checksum" { v = $2 } END { if (v == "") exit 1; print v }'
}
a=$(run "${ref[@]}") || { echo "$0: no checksum from: ${ref[*]}" >&2; exit 1; }
b=$(run "${other[@]}") || { echo "$0: no checksum from: ${other[*]}" >&2; exit 1; }
awk -v a="$a" -v b="$b" -v tol="$tol" 'BEGIN {
  d = a - b; if (d < 0) d = -d
  m = a < 0 ? -a : a
  rel = m > 0 ? d / m : d
  printf "reference %s, other %s, relative difference %.3e (tolerance %s): %s\n", a, b, rel, tol, rel <= tol ? "match" : "MISMATCH"
  exit rel <= tol ? 0 : 1
}'
