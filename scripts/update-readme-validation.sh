#!/usr/bin/env bash
# Regenerates the accuracy table between the validation markers of README.md from the project's own
# validate command.
set -euo pipefail
cd "$(dirname "$0")/.."
cli=${PARALLAX_CLI:-build/dev/app/parallax-cli}
runs=${1:-../shared/validation/published-runs.json}
table=$(mktemp)
"$cli" validate "$runs" --markdown > "$table"
python3 - "$table" <<'PY'
import sys, re
table = open(sys.argv[1]).read().strip()
readme = open('README.md').read()
new = re.sub(r'(<!-- validation:begin -->)(.*?)(<!-- validation:end -->)',
             lambda m: m.group(1) + '\n' + table + '\n' + m.group(3), readme, flags=re.S)
open('README.md', 'w').write(new)
PY
rm -f "$table"
echo "README.md validation table updated"
