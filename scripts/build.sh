#!/usr/bin/env bash
# Configures and builds plumber in BUILD_DIR (default build/). Extra
# arguments go to cmake, e.g. -DPLUMBER_SANITIZE=address,undefined.
# UNITY=ON (the default) compiles each target's sources in batches of 8 in
# one translation unit: the headers every file includes (CLI11 emits some
# 1,800 functions into each file that includes it; protobuf, nlohmann/json,
# Catch2) are then compiled once a batch instead of once a file, which
# halves a fresh build and keeps CI's three builds within its time. For
# work on one file, UNITY=OFF rebuilds just that file. A unity batch shares
# one scope, so file-local helpers need distinct names (or one home).
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build}
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=${BUILD_TYPE:-RelWithDebInfo} -DCMAKE_UNITY_BUILD=${UNITY:-ON} "$@" >/dev/null
# TARGETS (space-separated) limits what is built, e.g. TARGETS="runtime_test plumber".
ninja -C "$build_dir" -j"${JOBS:-$(nproc)}" ${TARGETS:-}
