#!/usr/bin/env bash
# The main job: installs packages if missing, builds, and runs the headline experiment on its
# default config. Results go to a new directory under out/ (never over earlier results).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
./scripts/build.sh
stamp=$(date -u +%Y%m%dT%H%M%SZ)
out="out/theory-cone-$stamp"
mkdir -p "$out"
./build/p0sim theory cone --config configs/theory_cone.toml --threads "$(nproc)" --out "$out/cone.csv"
echo "results: $out/cone.csv (resolved config: $out/cone.config.toml)"
