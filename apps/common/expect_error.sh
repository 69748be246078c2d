#!/usr/bin/env bash
# Passes when a command exits non-zero and its stderr matches a pattern
# (grep -E): bad input must be refused with a clear message.
#
#   expect_error.sh PATTERN CMD...
set -u
if [ $# -lt 2 ]; then
  echo "usage: $0 PATTERN CMD..." >&2
  exit 2
fi
pattern=$1
shift
err=$("$@" 2>&1 >/dev/null)
rc=$?
echo "$err"
if [ $rc -eq 0 ]; then
  echo "$0: expected a non-zero exit from: $*" >&2
  exit 1
fi
if ! grep -Eq -- "$pattern" <<<"$err"; then
  echo "$0: exit $rc, but stderr does not match '$pattern'" >&2
  exit 1
fi
echo "exit $rc with the expected message"
