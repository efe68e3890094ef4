#!/usr/bin/env bash
# One command for a newcomer: install dependencies, build, and start the planner on the built-in
# default scenario. Without a display it says how to run headless and prints the CLI prediction.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release --target parallax parallax-cli
if [[ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]]; then
  exec build/release/app/parallax --scenario default "$@"
fi
cat <<'MSG'
No display found, so the window cannot open here. To run the planner headless:
  xvfb-run -a build/release/app/parallax --scenario default
  QT_QPA_PLATFORM=offscreen build/release/app/parallax --scenario default --screenshot planner.png
The command-line planner works everywhere; here is the default scenario:

MSG
build/release/app/parallax-cli predict default || true
