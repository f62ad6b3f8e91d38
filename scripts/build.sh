#!/usr/bin/env bash
# Configures and builds p0sim (Release, -march=native) into ./build.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset release >/dev/null
cmake --build --preset release
