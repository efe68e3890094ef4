#!/bin/sh
# Regenerates the pictures of remote validation (docs/remote-runs.md) in the planner from real runs: the GUI-driven loop
# test (tests/remote/tst_remote_gui_loop) starts OpenSSH and a single-node SLURM on 127.0.0.1, sends the
# built-in probe from the planner window twice (tests/remote/data/tiny_probe_scenario.json as PP 2, then as
# TP 2; 2 CPU ranks with gloo), keeps the run store and its dialogs' pictures, and the planner renders the
# window with both runs compared. Needs root, like the remote tests (scripts/install-deps.sh --tests).
#   docs/screenshots/update-runs.sh [build/dev]
set -eu
build=${1:-build/dev}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
PARALLAX_TEST_ARTIFACTS="$tmp" QT_QPA_PLATFORM=offscreen \
    "$build/tests/tst_remote_gui_loop" probeSentFromTheWindowEndsMeasuredAndDrawn
runs=$("$build/app/parallax-cli" runs --store "$tmp/gui-probe-run.sqlite" --json |
    python3 -c 'import json, sys; print(",".join(r["id"] for r in json.load(sys.stdin)["runs"]))')
"$build/app/parallax" --scenario "$root/tests/remote/data/tiny_probe_scenario.json" --store "$tmp/gui-probe-run.sqlite" \
    --run "$runs" --screenshot "$here/runs-probe-compare.png"
cp "$tmp/gui-dispatch-dialog.png" "$here/runs-dispatch-dialog.png"
cp "$tmp/gui-host-key-dialog.png" "$here/runs-host-key-dialog.png"
echo "runs $runs"
