#!/bin/sh
# Usage: expect_failure.sh PATTERN COMMAND...
# Passes when COMMAND exits non-zero (or with exactly EXPECT_STATUS, when
# that is set) and its output matches PATTERN (grep -E).
pattern=$1
shift
out=$("$@" 2>&1)
rc=$?
printf '%s\n(exit status %d)\n' "$out" "$rc"
[ "$rc" -ne 0 ] || { echo "expected a non-zero exit"; exit 1; }
[ -z "$EXPECT_STATUS" ] || [ "$rc" -eq "$EXPECT_STATUS" ] || { echo "expected exit status $EXPECT_STATUS"; exit 1; }
printf '%s\n' "$out" | grep -Eq -- "$pattern" || { echo "expected output matching: $pattern"; exit 1; }
