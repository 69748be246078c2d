#!/usr/bin/env bash
# Counts the code lines of each Minimod version's halo exchange: the lines
# between the `// halo-exchange: begin` and `// halo-exchange: end`
# markers, without blank lines and comment-only lines.
#
#   apps/count_halo_lines.sh [FILE...]
#
# Without arguments: every apps/minimod/*.cpp with the markers, i.e. one
# file per communication layer (minimod_mpi.cpp, minimod_weft.cpp).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
files=("$@")
[ ${#files[@]} -gt 0 ] || mapfile -t files < <(grep -l '// halo-exchange: begin' "$here"/minimod/*.cpp)
for f in "${files[@]}"; do
  n=$(awk '/\/\/ halo-exchange: begin/ { inside = 1; found = 1; next }
           /\/\/ halo-exchange: end/   { inside = 0; next }
           inside && !/^[[:space:]]*$/ && !/^[[:space:]]*\/\// { n++ }
           END { if (!found) exit 1; print n + 0 }' "$f") || { echo "$f: no halo-exchange markers" >&2; exit 1; }
  echo "$(basename "$f"): $n lines"
done
