#!/usr/bin/env bash
# The engine's promise across CPUs: the golden runs (tests/golden/commands.txt) under qemu's
# emulation of an Intel CPU without AVX-512 (Haswell-v4) and an AMD Zen 2 (EPYC-Rome) must write
# the golden files of this engine version byte for byte, as they do natively. Emulation gives each
# instruction its architectural result on that CPU model, so vendor-dependent instructions (the
# rsqrt estimate behind Eigen's fast-math sqrt, say) show up here. About a minute.
#   usage: scripts/cross-cpu-check.sh [BINARY]   (default build/p0sim; needs qemu-x86_64)
set -euo pipefail
cd "$(dirname "$0")/.."
. tests/golden/golden.sh
bin=$(realpath "${1:-build/p0sim}")
command -v qemu-x86_64 >/dev/null || { echo "cross-cpu-check: qemu-x86_64 not found (Debian package qemu-user)" >&2; exit 2; }
engine=$("$bin" --version | sed -n 's/.*engine version \([0-9]*\).*/\1/p')
golden="tests/golden/engine-$engine"
[ -d "$golden" ] || { echo "cross-cpu-check: $golden does not exist (tests/golden/record.sh)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
for cpu in Haswell-v4 EPYC-Rome; do
  n=0 bad=0
  mkdir -p "$work/$cpu"
  for run in train experiment sweep_train sweep_theory; do
    # shellcheck disable=SC2046  # the arguments are words of commands.txt
    qemu-x86_64 -cpu "$cpu" "$bin" $(golden_args "$run") --out "$work/$cpu/$run" >/dev/null 2>"$work/$cpu.$run.err" ||
      { echo "cross-cpu-check: $run failed under -cpu $cpu:" >&2; cat "$work/$cpu.$run.err" >&2; exit 1; }
    while read -r produced name; do
      n=$((n + 1))
      cmp -s "$produced" "$golden/$name" || { echo "  $cpu: $name differs" >&2; bad=$((bad + 1)); }
    done < <(golden_files "$run" "$work/$cpu/$run")
  done
  echo "cross-cpu-check: -cpu $cpu: $((n - bad)) of $n golden files identical"
  [ "$bad" = 0 ] || status=1
done
exit $status
