#!/usr/bin/env bash
# Installs the weft build tree into a scratch prefix and builds the consumer
# project against it with find_package, then again with add_subdirectory.
# Usage: check.sh SOURCE_DIR BUILD_DIR SCRATCH_DIR
set -euo pipefail
src=$1 build=$2 scratch=$3
rm -rf "$scratch" && mkdir -p "$scratch"
cmake --install "$build" --prefix "$scratch/prefix" >/dev/null
cmake -S "$src/tests/packaging/consumer" -B "$scratch/installed" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$scratch/prefix" >/dev/null
cmake --build "$scratch/installed" >/dev/null
"$scratch/installed/consumer" --weft:threads=2
# The subdirectory build compiles the whole runtime again: at -O0 (Debug),
# which takes a fraction of an optimized build; it checks the packaging, not
# the code generation.
cmake -S "$src/tests/packaging/consumer" -B "$scratch/subdir" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
  -DWEFT_SOURCE_DIR="$src" >/dev/null
cmake --build "$scratch/subdir" >/dev/null
"$scratch/subdir/consumer" --weft:threads=2
