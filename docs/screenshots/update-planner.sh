#!/bin/sh
# Regenerates the planner screenshots of the README and docs/planner.md with the planner's own --screenshot option (offscreen).
#   docs/screenshots/update-planner.sh [path/to/parallax]
set -e
here=$(cd "$(dirname "$0")" && pwd)
gui=${1:-$here/../../build/release/app/parallax}
"$gui" --scenario default --screenshot "$here/planner-window.png"
"$gui" --scenario gpt3-175b-1024-a100 --dark --screenshot "$here/planner-window-dark-1024-gpus.png"
"$gui" --scenario gpt3-175b-1024-a100 --panel heatmap --size 1600x1100 --screenshot "$here/planner-tp-pp-heatmap.png"
"$gui" --scenario default --panel strategy --dpi-scale 2 --screenshot "$here/planner-strategy-2x.png"
"$gui" --scenario "$here/../examples/power-uneven-1f1b-planned.json" --panel power --size 2400x1500 --screenshot "$here/power-panel.png"
"$gui" --scenario default --panel improvements --size 1100x300 --screenshot "$here/improvements-waterfall.png"
"$gui" --scenario "$here/../examples/hetero-h100-a100.json" --size 1600x1000 --screenshot "$here/hetero-planner.png"
"$gui" --scenario "$here/../examples/hetero-h100-a100-stages.json" --panel timeline --size 2400x1500 --screenshot "$here/hetero-timeline.png"
