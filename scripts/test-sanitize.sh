#!/usr/bin/env bash
# The fast part of the test suite (every test not tagged [slow], nor [recorded_build]: the check
# that the build is the one the golden files were recorded by, g++) built with clang,
# AddressSanitizer and UndefinedBehaviorSanitizer (preset `sanitize`, -fno-sanitize-recover: the
# first report fails the test). The CLI tests run the sanitized p0sim binary, so the bad-input
# table and the kill/resume tests are checked under the sanitizers too. The same build makes the
# libFuzzer targets scripts/fuzz.sh runs (one compile of the engine for both). Built at -O1
# -gline-tables-only: line tables are enough for file:line in the sanitizers' reports. Assumes
# scripts/install-deps.sh has run.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset sanitize >/dev/null
cmake --build --preset sanitize
ctest --preset sanitize
