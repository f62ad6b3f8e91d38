#!/usr/bin/env bash
# Every C++ file is formatted as .clang-format says (clang-format from Debian's clang-format
# package, which scripts/install-deps.sh installs). Fix with:
#   git ls-files '*.cpp' '*.hpp' | xargs clang-format -i
set -euo pipefail
cd "$(dirname "$0")/.."
files=$(git ls-files '*.cpp' '*.hpp')
if ! clang-format --dry-run --Werror $files 2>/tmp/p0sim-format.log; then
  grep -o '^[^:]*:[0-9]*' /tmp/p0sim-format.log | sort -u | head -20
  echo "format: $(grep -c 'error:' /tmp/p0sim-format.log) lines differ from .clang-format (see above)"
  exit 1
fi
echo "format: $(echo "$files" | wc -l) files match .clang-format"
