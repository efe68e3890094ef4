#!/bin/sh
# Renders the timeline screenshots of docs/timeline.md (docs/screenshots/timeline-*.png) with the headless
# screenshot tool: every schedule on the default scenario (Llama 3 70B, TP 4 x CP 2) cut to
# 4 pipeline stages and 8 micro-batches, its DAG, a comparison and the 64 x 1,024 benchmark plan.
# Usage: views/timeline/make_screenshots.sh BUILD_DIR [OUT_DIR]
set -eu
build=${1:?usage: make_screenshots.sh BUILD_DIR [OUT_DIR]}
out=${2:-docs/screenshots}
shot="$build/views/parallax-timeline-shot"
mkdir -p "$out"
for s in gpipe 1f1b interleaved zb-h1 dualpipe; do
  "$shot" --schedule "$s" --pp 4 --microbatches 8 --size 1600x560 --out "$out/timeline-$s.png"
  "$shot" --schedule "$s" --pp 4 --microbatches 8 --view dag --size 1600x500 --out "$out/timeline-dag-$s.png"
done
"$shot" --schedule interleaved --compare 1f1b --pp 4 --microbatches 8 --size 1600x800 --out "$out/timeline-compare.png"
"$shot" --large --size 1600x900 --out "$out/timeline-large.png"
# The power pictures of docs/power.md: an uneven 1F1B plan at the nominal clock and with planned stage clocks.
for s in power-uneven-1f1b power-uneven-1f1b-planned; do
  "$shot" --scenario docs/examples/$s.json --range 1.2,1.7 --size 1600x600 --out "$out/$s.png"
done
