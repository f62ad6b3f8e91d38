#!/usr/bin/env bash
# The whole test suite: installs packages if missing, builds, runs every test with CTest.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
./scripts/build.sh
ctest --preset release
