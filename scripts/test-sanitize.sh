#!/usr/bin/env bash
# The fast part of the test suite (every test not tagged [slow]) built with AddressSanitizer and
# UndefinedBehaviorSanitizer (preset `sanitize`, -fno-sanitize-recover: the first report fails the
# test). The CLI tests run the sanitized p0sim binary, so the bad-input table and the kill/resume
# tests are checked under the sanitizers too. Built at -O1 -g1: line tables are enough for file:line
# in the sanitizers' reports, and full -g costs about 40% more compile time (sim/model.cpp: 92 s vs
# 57 s CPU). Assumes scripts/install-deps.sh has run.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset sanitize >/dev/null
cmake --build --preset sanitize
ctest --preset sanitize
