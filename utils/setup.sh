#!/usr/bin/env bash
# Installs gc's build dependencies from Debian 12 and builds gc in BUILD_DIR
# (default: build), then makes BUILD_DIR/venv, a Python virtual environment
# with torch, numpy and pytest from PyPI, and installs the gcrt Python
# package into it (pip install ., reusing BUILD_DIR). Safe to run again:
# apt-get and pip skip what is there, and Ninja rebuilds only what changed.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$src/build}

packages=(
  cmake ninja-build g++ pkg-config python3 python3-psutil git
  python3-venv python3-dev          # the gcrt Python package: its venv, and Python.h
  python3-numpy                     # the real-model tests rebuild their archives with weightgen.py
  llvm-16-dev llvm-16-tools         # LLVM for CPU kernels; FileCheck, not and lit for tests
  clang-16                          # compiles the kernels' math library to LLVM bitcode
  libdnnl-dev                       # oneDNN: matmul and convolution
  ocl-icd-opencl-dev opencl-headers # libdnnl-dev's CMake config calls find_package(OpenCL)
  libcli11-dev nlohmann-json3-dev
  flatbuffers-compiler libflatbuffers-dev
  libzstd-dev zlib1g-dev zstd       # zstd: the package tests compress entries with the command
  libgtest-dev libgmock-dev libbenchmark-dev
)
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The venv is made once: later runs only add what is missing. torch is
# PyPI's (the only registry the set-up may use); the Python tests export
# models with it and compare gcrt's results with its own.
mkdir -p "$build"
build=$(cd "$build" && pwd)  # CMake and pip are given paths in it: absolute ones
venv=$build/venv
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check \
  numpy pytest "nanobind>=2.0" "scikit-build-core>=0.10" torch

cmake -G Ninja -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DGC_PYTHON=ON -DPython_EXECUTABLE="$venv/bin/python"
ninja -C "$build"
# The same build tree: pip only installs what ninja built.
"$venv/bin/python" -m pip install -q --disable-pip-version-check --no-build-isolation \
  --config-settings=build-dir="$build" "$src"
