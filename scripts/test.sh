#!/usr/bin/env bash
# The README's second command: install what is missing (test-only packages
# too, so that the HTML report test runs in Chromium wherever tests run),
# build, run every test.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh --test
scripts/build.sh
cd build
ctest --output-on-failure -j"$(nproc)"
