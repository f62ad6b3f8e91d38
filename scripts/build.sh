#!/usr/bin/env bash
# Configures and builds p0sim (Release, -march=x86-64-v3: the engine's arithmetic) into ./build.
#   bash scripts/build.sh [TARGET ...]   (default: everything, tests and benchmarks included;
#                                         the main job builds only the p0sim binary it runs)
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset release >/dev/null
if [ "$#" -gt 0 ]; then
  cmake --build --preset release --target "$@"
else
  cmake --build --preset release
fi
