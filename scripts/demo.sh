#!/usr/bin/env bash
# The README's first command: install what is missing, build, and run
# `plumber demo` (generate images, optimize the naive image pipeline, show
# the throughput before and after), under a minute on 2 cores once built.
# Only the plumber binary is built: the tests and benchmarks would multiply
# a newcomer's first build time and are scripts/test.sh's business.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
TARGETS=plumber scripts/build.sh
exec build/apps/plumber-cli/plumber demo
