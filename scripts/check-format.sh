#!/usr/bin/env bash
# Every C++ file is formatted as .clang-format says (clang-format from Debian's clang-format
# package, which scripts/install-deps.sh installs). Fix with:
#   git ls-files '*.cpp' '*.hpp' | xargs clang-format -i
set -euo pipefail
cd "$(dirname "$0")/.."
files=$(git ls-files '*.cpp' '*.hpp')
if ! clang-format --dry-run --Werror $files 2>/tmp/p0sim-format.log; then
  grep -oE '^[^ :]+:[0-9]+:[0-9]+: (error|warning)' /tmp/p0sim-format.log | cut -d: -f1,2 | sort -u | head -20
  echo "format: $(grep -cE '^[^ :]+:[0-9]+:[0-9]+: (error|warning)' /tmp/p0sim-format.log) places differ from .clang-format (listed above)"
  exit 1
fi
echo "format: $(echo "$files" | wc -l) files match .clang-format"
