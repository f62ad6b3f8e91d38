#!/usr/bin/env bash
# Builds the libFuzzer targets (preset `sanitize`: clang, ASan + UBSan, build-sanitize/, the build
# the sanitized tests run from, so after scripts/test-sanitize.sh there is nothing to compile) and
# runs each for a bounded time from its seed corpus (config: tests/fuzz_corpus/config/; npy: written
# by build-sanitize/npy_seeds from tests/fuzz/npy_seeds.hpp), printing executions per second and
# total executions. Compiled at -O1 -gline-tables-only, the flags OSS-Fuzz builds its targets with:
# line tables are all a sanitizer's file:line needs.
# Usage: scripts/fuzz.sh [SECONDS_PER_TARGET]   (default 60)
# A crash leaves its input in build-sanitize/artifacts/ (emptied at the start of every run, so what
# is there is this run's) and fails the script: fix it, add the input
# to tests/fuzz_corpus/<target>/ (tests/cli_fuzz_corpus.cpp replays it in every build).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
build="build-sanitize"  # the sanitize preset's binaryDir
cmake --preset sanitize >/dev/null
cmake --build --preset fuzz
rm -rf "$build/artifacts" && mkdir -p "$build/artifacts"
status=0
rm -rf "$build/seeds-npy"
"$build/npy_seeds" "$build/seeds-npy"
for target in npy config; do
  seeds=()
  [ "$target" = npy ] && seeds+=("$build/seeds-npy")
  [ -d "tests/fuzz_corpus/$target" ] && seeds+=("tests/fuzz_corpus/$target")
  work="$build/corpus-$target"
  rm -rf "$work" && mkdir -p "$work"
  log="$build/fuzz_$target.log"
  # New inputs go to the scratch corpus; the seed directories are only read.
  if ! "$build/fuzz_$target" -max_total_time="$seconds" -rss_limit_mb=2048 -max_len=4096 -timeout=10 \
       -print_final_stats=1 -artifact_prefix="$build/artifacts/" "$work" "${seeds[@]}" >"$log" 2>&1; then
    status=1
    echo "fuzz_$target: FAILED (see $log and $build/artifacts/)"
    tail -n 40 "$log"
  fi
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  echo "fuzz_$target: ${seconds} s, ${execs} executions, ${rate} exec/s, corpus $(find "$work" -type f | wc -l) inputs"
done
exit "$status"
