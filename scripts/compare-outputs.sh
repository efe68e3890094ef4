#!/usr/bin/env bash
# Regenerate the CLI's reference outputs with a given parallax-cli and diff them against a directory
# of reference outputs made the same way (by an earlier build). A behaviour-preserving change must
# leave every output byte-identical; only the "seconds" line of search JSON (wall time) may differ.
#
#   scripts/compare-outputs.sh build/dev/app/parallax-cli /path/to/reference-outputs
#
# Reference files (any subset may be present; only those present are compared):
#   validate.txt, validate.json          validate validation/published-runs.json [--json]
#   val_<name>.txt                       validate validation/<name>.json
#   search_<n>.json, predict_<n>.json,   search <n> --json, predict <n> --json,
#   predsim_<n>.json                     predict <n> --fidelity simulated --json
#                                        for each preset scenario presets/scenarios/<n>.json
# Exit status: 0 when every output matches, 1 otherwise.
set -uo pipefail

if [[ $# -ne 2 ]]; then
    echo "usage: $0 <parallax-cli> <reference-output-dir>" >&2
    exit 2
fi
cli=$(realpath "$1")
ref=$(realpath "$2")
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

published=validation/published-runs.json
if [[ -f $published ]]; then
    "$cli" validate "$published" >"$out/validate.txt" 2>/dev/null
    "$cli" validate "$published" --json >"$out/validate.json" 2>/dev/null
fi
for f in validation/*.json; do
    name=$(basename "$f" .json)
    [[ -f $ref/val_$name.txt ]] && "$cli" validate "$f" >"$out/val_$name.txt" 2>/dev/null
done
for f in presets/scenarios/*.json; do
    n=$(basename "$f" .json)
    "$cli" search "$n" --json >"$out/search_$n.json" 2>/dev/null
    "$cli" predict "$n" --json >"$out/predict_$n.json" 2>/dev/null
    "$cli" predict "$n" --fidelity simulated --json >"$out/predsim_$n.json" 2>/dev/null
done

status=0
compared=0
for r in "$ref"/validate.txt "$ref"/validate.json "$ref"/val_*.txt "$ref"/search_*.json "$ref"/predict_*.json \
    "$ref"/predsim_*.json; do
    [[ -f $r ]] || continue
    name=$(basename "$r")
    compared=$((compared + 1))
    if [[ ! -f $out/$name ]]; then
        echo "MISSING  $name (not regenerated)"
        status=1
        continue
    fi
    if [[ $name == search_*.json ]]; then
        filter=(grep -v '^ *"seconds": ')
    else
        filter=(cat)
    fi
    if diff <("${filter[@]}" "$r") <("${filter[@]}" "$out/$name") >"$out/diff.txt"; then
        echo "same     $name"
    else
        echo "DIFFERS  $name"
        head -20 "$out/diff.txt"
        status=1
    fi
done
echo "$compared outputs compared: $([[ $status -eq 0 ]] && echo all identical || echo some differ)"
exit $status
