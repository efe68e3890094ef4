#!/usr/bin/env bash
# Regenerates the accuracy table between the validation markers of README.md from the project's own
# validate command.
set -euo pipefail
cd "$(dirname "$0")/.."
cli=${PARALLAX_CLI:-build/dev/app/parallax-cli}
runs=${1:-validation/published-runs.json}
table=$(mktemp)
"$cli" validate "$runs" --markdown --calibration none > "$table"
{
  echo
  echo "Calibration (\`parallax-cli calibrate --cross-validate\`): scales per GPU generation and framework fitted"
  echo "with a prior towards 1; *leave-one-source-out* = each source predicted by a fit that never saw it."
  echo
  "$cli" calibrate "$runs" --cross-validate --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
cv = d["cross_validation"]
print("| held-out source | rows | MAPE | worst |")
print("|---|---:|---:|---:|")
for k, v in cv["by_source"].items():
    print("| %s | %d | %.1f%% | %.1f%% |" % (k, v["rows"], 100 * v["mape"], 100 * v["worst"]))
print()
print("**Leave-one-source-out: %d rows, MAPE %.1f%%, median %.1f%%, worst %.1f%%.** In-sample RMS log error %.3f -> %.3f." % (
    cv["rows"], 100 * cv["mape"], 100 * cv["median"], 100 * cv["worst"], d["rms_log_error_before"], d["rms_log_error_after"]))
'
  echo
  "$cli" validate "$runs" --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
s = d["summary"]
print("With the shipped calibration `%s` (what `predict` and, by default, `validate` use; in-sample on this set): "
      "MAPE %.1f%%, median %.1f%%, worst %.1f%%." % (d["calibration"], 100 * s["mape"], 100 * s["median"], 100 * s["worst"]))
'
} >> "$table"
python3 - "$table" <<'PY'
import sys, re
table = open(sys.argv[1]).read().strip()
readme = open('README.md').read()
new = re.sub(r'(<!-- validation:begin -->)(.*?)(<!-- validation:end -->)',
             lambda m: m.group(1) + '\n' + table + '\n' + m.group(3), readme, flags=re.S)
open('README.md', 'w').write(new)
PY
rm -f "$table"
# The project's own MoE and long-context runs (validation/), as their own table.
moe=$(mktemp)
"$cli" validate validation/published-moe-and-long-context-runs.json --markdown --calibration none > "$moe"
python3 - "$moe" <<'PY'
import sys, re
table = open(sys.argv[1]).read().strip()
readme = open('README.md').read()
new = re.sub(r'(<!-- validation-moe:begin -->)(.*?)(<!-- validation-moe:end -->)',
             lambda m: m.group(1) + '\n' + table + '\n' + m.group(3), readme, flags=re.S)
open('README.md', 'w').write(new)
PY
rm -f "$moe"
echo "README.md validation tables updated"
