#!/usr/bin/env bash
# Installs what Parallax needs on Debian 12 (bookworm). Idempotent: installs only what is missing.
#   scripts/install-deps.sh          build + run the planner
#   scripts/install-deps.sh --tests  also what the test suite needs
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git ccache
  qt6-base-dev qt6-base-dev-tools qt6-svg-dev libqt6sql6-sqlite libqt6svg6
  libqcustomplot-dev libqcustomplot2.1-qt6
  libeigen3-dev nlohmann-json3-dev libyaml-cpp-dev libtomlplusplus-dev libssh-dev libgl-dev
  fonts-dejavu-core xvfb xauth
)
if [[ "${1:-}" == "--tests" ]]; then
  packages+=(libbenchmark-dev python3 clang-format)
  # The fuzz preset: clang 14 with libFuzzer and the sanitizer runtimes.
  packages+=(clang-14 libclang-rt-14-dev)
  # Remote validation tests: a real OpenSSH server and single-node SLURM on loopback, and the
  # probe's PyTorch on CPU (OpenBLAS: CPU matmuls ~15x faster than the reference BLAS torch pulls in).
  packages+=(openssh-server openssh-client slurmctld slurmd slurm-client munge python3-torch libopenblas0-pthread)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "install-deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo_cmd=(sudo)
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
