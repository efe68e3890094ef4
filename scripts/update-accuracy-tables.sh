#!/usr/bin/env bash
# Regenerates the generated tables of docs/accuracy.md (between its <!-- NAME:begin --> / <!-- NAME:end -->
# markers) from the project's own validate, calibrate and error-bands commands. Idempotent: a second run
# changes nothing.
#   scripts/update-accuracy-tables.sh [RUNS.json]    (PARALLAX_CLI: the parallax-cli to use, default build/dev's)
set -euo pipefail
cd "$(dirname "$0")/.."
doc=docs/accuracy.md
# Replaces what stands between <!-- NAME:begin --> and <!-- NAME:end --> in $doc with FILE's text. Missing
# markers are an error: the table would silently go nowhere.
replace_between_markers() {
  python3 - "$1" "$2" "$doc" <<'PY'
import sys, re
name, path, doc = sys.argv[1], sys.argv[2], sys.argv[3]
table = open(path).read().strip()
text = open(doc).read()
pattern = r'(<!-- %s:begin -->)(.*?)(<!-- %s:end -->)' % (re.escape(name), re.escape(name))
if not re.search(pattern, text, flags=re.S):
    sys.exit('%s: no <!-- %s:begin --> ... <!-- %s:end --> markers' % (doc, name, name))
new = re.sub(pattern, lambda m: m.group(1) + '\n' + table + '\n' + m.group(3), text, flags=re.S)
if new != text:
    open(doc, 'w').write(new)
PY
}
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
replace_between_markers validation "$table"
rm -f "$table"
# The project's own MoE and long-context runs (validation/), as their own table.
moe=$(mktemp)
"$cli" validate validation/published-moe-and-long-context-runs.json --markdown --calibration none > "$moe"
replace_between_markers validation-moe "$moe"
rm -f "$moe"
# Measured runs on mixed clusters (Sailor, AMP, HexiScale): their own table.
hetero=$(mktemp)
"$cli" validate validation/measured-hetero-runs.json --markdown --calibration none > "$hetero"
replace_between_markers validation-hetero "$hetero"
rm -f "$hetero"
# The error bands: per workload class, and their leave-one-source-out coverage.
bands=$(mktemp)
"$cli" error-bands --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
lv = round(100 * d["level"])
print("%d%% bands from %d out-of-sample runs (%s)." % (lv, d["runs"], d["provenance"]))
print()
print("| workload class | runs | %d%% band (measured vs predicted) | from |" % lv)
print("|---|---:|---|---|")
for c in d["classes"]:
    print("| %s | %d | %+.1f%% .. %+.1f%% | %d runs, %d sources |" % (c["class"], c["runs"], 100 * (c["low_factor"] - 1),
          100 * (c["high_factor"] - 1), c["rows"], c["sources"]))
print()
print("| group | runs | covered (leave-one-source-out) | mean band width |")
print("|---|---:|---:|---:|")
for v in d["coverage"]:
    print("| %s | %d | %.1f%% | %.1f%% |" % (v["group"], v["rows"], 100 * v["coverage"], 100 * v["mean_width"]))
' > "$bands"
replace_between_markers error-bands "$bands"
rm -f "$bands"
# The serving model against the measured deployments and TensorRT-LLM's published throughput table.
serving=$(mktemp)
{
  echo "Measured deployments (\`validation/measured-serving.json\`):"
  echo
  "$cli" validate validation/measured-serving.json --markdown
  echo
  echo "TensorRT-LLM's published offline throughput (\`validation/published-serving-throughput.json\`):"
  echo
  "$cli" validate validation/published-serving-throughput.json --markdown
} > "$serving"
replace_between_markers validation-serving "$serving"
rm -f "$serving"
# The serving bands: per deployment class and metric, and their leave-one-model-out coverage.
serving_bands=$(mktemp)
"$cli" error-bands --serving --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
lv = round(100 * d["level"])
band = lambda m: "%+.0f%% .. %+.0f%%" % (100 * (m["low_factor"] - 1), 100 * (m["high_factor"] - 1))
print("%d%% serving bands from %d measured rows (%s)." % (lv, d["rows"], d["provenance"]))
print()
print("| deployment class | rows | TTFT | TPOT | output tokens/s |")
print("|---|---:|---|---|---|")
for c in d["classes"]:
    print("| %s | %d | %s | %s | %s |" % (c["class"], c["rows"], band(c["ttft"]), band(c["tpot"]), band(c["throughput"])))
print()
print("| metric | rows | covered (leave-one-model-out) | mean band width |")
print("|---|---:|---:|---:|")
for v in d["coverage"]:
    print("| %s | %d | %.1f%% | %.1f%% |" % (v["metric"], v["rows"], 100 * v["coverage"], 100 * v["mean_width"]))
' > "$serving_bands"
replace_between_markers serving-error-bands "$serving_bands"
rm -f "$serving_bands"
echo "$doc: accuracy tables updated"
