#!/usr/bin/env bash
# One command: install dependencies, build everything with warnings as errors, run every test,
# and a short benchmark smoke run. This is exactly what .ci/run executes.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --tests
cmake --preset ci >/dev/null
cmake --build --preset ci
ctest --preset ci -j "$(nproc)"
# Benchmarks are not timed tests: a short smoke run proves they build and run.
build/ci/bench/parallax_bench --benchmark_min_time=0.01 >/dev/null
echo "test.sh: all tests passed"
