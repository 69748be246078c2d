#!/usr/bin/env bash
# The README's test command. Installs what is missing, builds the Release
# preset, runs every test (unit, multi-rank on smp and under mpiexec, the
# Python tools), then builds the tests under ThreadSanitizer and under
# AddressSanitizer + UBSan (with leak checks) and runs them again.
#   Usage: scripts/test.sh [--no-sanitizer]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
sanitizers=(tsan asan)
[[ "${1:-}" == "--no-sanitizer" ]] && sanitizers=()

bash scripts/setup.sh
jobs=$(nproc)

echo "== release build"
cmake --preset release >/dev/null
cmake --build --preset release -j "$jobs"
echo "== release tests"
ctest --preset release -j "$jobs"

for sanitizer in "${sanitizers[@]}"; do
  echo "== $sanitizer build (tests only)"
  cmake --preset "$sanitizer" >/dev/null
  cmake --build --preset "$sanitizer" -j "$jobs"
  echo "== $sanitizer tests"
  ctest --preset "$sanitizer" -j "$jobs"
done
