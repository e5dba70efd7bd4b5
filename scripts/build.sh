#!/usr/bin/env bash
# Configures and builds plumber in BUILD_DIR (default build/). Extra
# arguments go to cmake, e.g. -DPLUMBER_SANITIZE=address,undefined.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build}
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=${BUILD_TYPE:-RelWithDebInfo} "$@" >/dev/null
# TARGETS (space-separated) limits what is built, e.g. TARGETS="runtime_test plumber".
ninja -C "$build_dir" -j"${JOBS:-$(nproc)}" ${TARGETS:-}
