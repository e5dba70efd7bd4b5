#!/usr/bin/env bash
# The README's first command: install what is missing, build, run the main job.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/build.sh
exec build/apps/plumber-cli/plumber --help
