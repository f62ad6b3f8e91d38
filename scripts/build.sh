#!/usr/bin/env bash
# Configures and builds p0sim (Release, -march=x86-64-v3: the engine's arithmetic) into ./build.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset release >/dev/null
cmake --build --preset release
