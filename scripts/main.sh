#!/usr/bin/env bash
# The main job: installs packages if missing, builds, and runs the headline experiment on its
# default config (configs/p0sink.toml: firstrecall, causal NoPE/no-BOS vs its controls, 3 seeds,
# verdict with Student-t intervals and Welch tests), plots it, and runs the cone-model theory that
# explains the asymmetry (configs/theory_cone.toml). Results go to a new directory under out/
# (never over earlier results).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
./scripts/build.sh
stamp=$(date -u +%Y%m%dT%H%M%SZ)
out="out/p0sink-$stamp"
mkdir -p out
./build/p0sim experiment --config configs/p0sink.toml --seeds 3 --threads "$(nproc)" --out "$out"
./build/p0sim plot "$out"
mkdir -p "$out/theory"
./build/p0sim theory cone --config configs/theory_cone.toml --threads "$(nproc)" --out "$out/theory/cone.csv"
echo "results: $out (verdict.json, results.csv, ablations.csv, plots/; theory/cone.csv)"
