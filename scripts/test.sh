#!/usr/bin/env bash
# One command: install dependencies, build everything with warnings as errors, run every test,
# and a short benchmark smoke run. This is exactly what .ci/run executes.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --tests
scripts/check-format.sh
export CCACHE_BASEDIR="$PWD" # ccache reuses objects across build folders and clones
cmake --preset ci >/dev/null
cmake --build --preset ci
ctest --preset ci -j "$(nproc)"
# A server or CI box builds core and the CLI without Qt Widgets (ccache reuses the objects above).
cmake --preset nogui >/dev/null
cmake --build --preset nogui --target parallax-cli
# Fuzzing: core's readers (scenario, presets, imports, Chrome traces) and the log parsers under libFuzzer
# with ASan + UBSan (clang, the `fuzz` preset builds nothing else), each for a bounded time from a seed
# corpus of the shipped examples; a crash fails the run and leaves its input in build/fuzz.
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz
ctest --preset fuzz -j "$(nproc)"
# Benchmarks are not timed tests: a short smoke run proves they build and run.
build/ci/bench/parallax_bench --benchmark_min_time=0.01 >/dev/null
echo "test.sh: all tests passed"
