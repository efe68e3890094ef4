#!/usr/bin/env bash
# Fails when a tracked C++ file differs from what clang-format (the repository's .clang-format) makes of it.
# `scripts/check-format.sh --fix` rewrites the files instead.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files '*.cpp' '*.hpp' '*.h')
if [[ "${1:-}" == "--fix" ]]; then
  clang-format -i "${files[@]}"
  exit 0
fi
if ! clang-format --dry-run --Werror "${files[@]}" 2>/tmp/parallax-format.$$; then
  grep -E '^[^ ].*: (error|warning):' /tmp/parallax-format.$$ | cut -d: -f1 | sort -u | sed 's/^/check-format: not formatted: /' >&2
  rm -f /tmp/parallax-format.$$
  echo "check-format: run scripts/check-format.sh --fix" >&2
  exit 1
fi
rm -f /tmp/parallax-format.$$
echo "check-format: ${#files[@]} files formatted"
